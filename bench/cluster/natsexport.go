package cluster

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"
)

// NATSReferenceConfig sizes RunNATSReference: the NATS failover scenario
// of this package run on its own, for another benchmark's report
// (bench/failover's --compare nats).
type NATSReferenceConfig struct {
	// Exec runs this program again as one NATS server; the program must
	// call ServeNATSChild first.
	Exec []string
	// TempDir holds the servers' stores; empty means os.TempDir().
	TempDir string
	// Keep keeps the stores.
	Keep bool
	// Servers is the NATS cluster size (the stream is R3). Default 3.
	Servers int
	// Kills is the number of SIGKILLs of the stream leader's server.
	Kills int
	// PublishEvery is the synchronous publisher's period. Default 10 ms.
	PublishEvery time.Duration
	// RoundTimeout and StartTimeout bound each wait; defaults 30 s, 60 s.
	RoundTimeout, StartTimeout time.Duration
	// Logger receives progress lines; nil discards them.
	Logger *slog.Logger
}

// RunNATSReference starts a NATS JetStream cluster, SIGKILLs the R3
// stream's leader cfg.Kills times (restarting it after each) while a
// publisher publishes synchronously every cfg.PublishEvery through a
// survivor, and returns the election times and publisher stalls.
func RunNATSReference(ctx context.Context, cfg NATSReferenceConfig) (*NATSFailoverResult, error) {
	if len(cfg.Exec) == 0 || cfg.Kills < 1 {
		return nil, errors.New("NATS reference: no command to run the servers, or no kill")
	}
	c := DefaultConfig()
	c.NATSExec, c.TempDir, c.Keep, c.NATSKills, c.Settle = cfg.Exec, cfg.TempDir, cfg.Keep, cfg.Kills, time.Second
	if cfg.Servers > 0 {
		c.Nodes = cfg.Servers
	}
	if cfg.PublishEvery > 0 {
		c.ProduceEvery = cfg.PublishEvery
	}
	if cfg.RoundTimeout > 0 {
		c.RoundTimeout = cfg.RoundTimeout
	}
	if cfg.StartTimeout > 0 {
		c.StartTimeout = cfg.StartTimeout
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir, err := natsDir(c.TempDir)
	if err != nil {
		return nil, err
	}
	if !c.Keep {
		defer os.RemoveAll(dir)
	}
	nc, err := startNATS(c.NATSExec, dir, c.Nodes, c.StartTimeout)
	if err != nil {
		return nil, err
	}
	defer nc.close()
	r := &runner{cfg: c, log: log}
	return r.runNATSFailover(ctx, nc)
}
