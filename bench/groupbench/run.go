package groupbench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"time"
)

// Measurement is one target's figures in one repetition.
type Measurement struct {
	Commits   CommitResult
	Rebalance RebalanceResult
}

// Result is a run's measurements.
type Result struct {
	Config  Config
	Started time.Time
	Elapsed time.Duration
	// Reps holds, per repetition, each measured target's figures.
	Reps []map[Target]Measurement
}

// runner holds a run's configuration.
type runner struct {
	cfg Config
	log *slog.Logger
}

// Run runs the benchmark of cfg.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, log: cfg.Logger}
	if r.log == nil {
		r.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	res := &Result{Config: cfg, Started: time.Now()}
	targets := []Target{Kfake}
	if cfg.WeirPath != "" {
		targets = append(targets, Weir)
	}
	for rep := range cfg.Reps {
		order := slices.Clone(targets)
		if rep%2 == 1 {
			slices.Reverse(order)
		}
		ms := make(map[Target]Measurement)
		for _, t := range order {
			m, err := r.measure(ctx, t)
			if err != nil {
				return nil, fmt.Errorf("repetition %d, %s: %w", rep+1, t, err)
			}
			r.log.Info("measured", "rep", rep+1, "target", string(t),
				"commit_requests_per_s", int64(m.Commits.RequestsPerSecond()), "rebalance", m.Rebalance.SinceLastJoin.Round(time.Millisecond), "after_delay", m.Rebalance.AfterDelay.Round(time.Millisecond))
			ms[t] = m
		}
		res.Reps = append(res.Reps, ms)
	}
	res.Elapsed = time.Since(res.Started)
	return res, nil
}

// initialRebalanceDelay is target t's group.initial.rebalance.delay.ms:
// weir is started with cfg's, kfake has none.
func (t Target) initialRebalanceDelay(cfg Config) time.Duration {
	if t == Weir {
		return cfg.InitialRebalanceDelay
	}
	return 0
}

// measure runs both measurements on a fresh broker of target t each.
func (r *runner) measure(ctx context.Context, t Target) (Measurement, error) {
	var m Measurement
	err := r.withBroker(ctx, t, func(ctx context.Context, addr string) (err error) {
		m.Commits, err = measureCommits(ctx, r.cfg, addr)
		return err
	})
	if err != nil {
		return m, fmt.Errorf("commit throughput: %w", err)
	}
	err = r.withBroker(ctx, t, func(ctx context.Context, addr string) (err error) {
		m.Rebalance, err = measureRebalance(ctx, r.cfg, addr, t.initialRebalanceDelay(r.cfg))
		return err
	})
	if err != nil {
		return m, fmt.Errorf("rebalance: %w", err)
	}
	return m, nil
}

// withBroker starts a broker of target t in a fresh directory, runs f
// within cfg.MeasureTimeout, then stops the broker and removes the
// directory.
func (r *runner) withBroker(ctx context.Context, t Target, f func(ctx context.Context, addr string) error) error {
	dir, err := os.MkdirTemp(r.cfg.TempDir, "groupbench-")
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	defer os.RemoveAll(dir)
	b, err := r.start(ctx, t, dir)
	if err != nil {
		return err
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(ctx, r.cfg.MeasureTimeout)
	defer cancel()
	return f(ctx, b.Addr())
}
