package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"
)

// Result holds every figure of a run. A scenario that did not run (not
// selected, or failed before it measured anything) is nil.
type Result struct {
	Config       Config
	Started      time.Time
	Elapsed      time.Duration
	LoadBefore   string // /proc/loadavg at the start
	LoadAfter    string // and at the end
	Failover     *FailoverResult
	Throughput   *ThroughputResult
	NATSFailover *NATSFailoverResult
	Scale        *ScaleResult
	// Errors holds each scenario that ended early, with why.
	Errors []string
}

// runner runs the scenarios of one Run.
type runner struct {
	cfg Config
	log *slog.Logger
}

// Run runs the selected scenarios in order: the failover rounds and then
// the throughput runs on one cluster (with the NATS reference cluster
// started for the throughput runs), the NATS failover rounds, and the
// scale scenario on a fresh cluster. A scenario that fails is recorded in
// Result.Errors and the run goes on with the next; the returned error
// joins them.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r := &runner{cfg: cfg, log: log}
	res := &Result{Config: cfg, Started: time.Now(), LoadBefore: loadAvg()}
	var errs []error
	fail := func(s Scenario, err error) {
		if err == nil {
			return
		}
		log.Error("scenario failed", "scenario", s, "err", err)
		res.Errors = append(res.Errors, fmt.Sprintf("%s: %v", s, err))
		errs = append(errs, fmt.Errorf("%s: %w", s, err))
	}

	var nc *natsCluster
	defer func() {
		if nc != nil {
			nc.close()
		}
	}()
	startNATSOnce := func() error {
		if nc != nil {
			return nil
		}
		dir, err := natsDir(cfg.TempDir)
		if err != nil {
			return err
		}
		if !cfg.Keep {
			defer func() {
				if nc == nil {
					os.RemoveAll(dir)
				}
			}()
		}
		n, err := startNATS(cfg.NATSExec, dir, cfg.Nodes, cfg.StartTimeout)
		if err != nil {
			return fmt.Errorf("NATS reference: %w", err)
		}
		nc = n
		return nil
	}

	if cfg.runs(Failover) || cfg.runs(Throughput) {
		c, err := startCluster(ctx, cfg, log, "failover")
		if err != nil {
			fail(Failover, err)
		} else {
			if cfg.runs(Failover) {
				res.Failover, err = r.runFailover(ctx, c)
				fail(Failover, err)
			}
			if cfg.runs(Throughput) && ctx.Err() == nil {
				var err error
				if len(cfg.NATSExec) > 0 {
					err = startNATSOnce()
				}
				if err != nil {
					fail(Throughput, err)
				} else {
					res.Throughput, err = r.runThroughput(ctx, c, nc)
					fail(Throughput, err)
				}
			}
			c.close()
		}
	}
	if cfg.runs(NATSFailover) && cfg.NATSKills > 0 && len(cfg.NATSExec) > 0 && ctx.Err() == nil {
		err := startNATSOnce()
		if err == nil {
			res.NATSFailover, err = r.runNATSFailover(ctx, nc)
		}
		fail(NATSFailover, err)
	}
	if nc != nil {
		nc.close()
		if !cfg.Keep {
			os.RemoveAll(nc.dir)
		}
		nc = nil
	}
	if cfg.runs(Scale) && ctx.Err() == nil {
		var err error
		res.Scale, err = r.runScale(ctx)
		fail(Scale, err)
	}
	res.Elapsed = time.Since(res.Started)
	res.LoadAfter = loadAvg()
	return res, errors.Join(errs...)
}

// loadAvg returns the first three fields of /proc/loadavg, or "unknown".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
