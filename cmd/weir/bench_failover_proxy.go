package main

import (
	"github.com/weirmq/weir/bench/failover"
	"github.com/weirmq/weir/internal/cli"
)

// benchFailoverProxyFlags adds the flags of the in-process proxy's
// impairments and faults and of the consumer group's size.
func benchFailoverProxyFlags(fs *cli.FlagSet, cfg *failover.Config) {
	fs.DurationVar(&cfg.Latency, "latency", cfg.Latency, "one-way latency the in-process proxy adds to all client traffic for the whole run")
	fs.Float64Var(&cfg.Loss, "loss", cfg.Loss, "probability per frame of client traffic that the proxy \"loses\" it (a 200 ms retransmission stall) for the whole run")
	fs.DurationVar(&cfg.FaultTime, "fault-time", cfg.FaultTime, "how long the latency and loss faults last")
	fs.DurationVar(&cfg.FaultLatency, "fault-latency", cfg.FaultLatency, "latency the latency fault adds to the leader's client traffic")
	fs.Float64Var(&cfg.FaultLoss, "fault-loss", cfg.FaultLoss, "loss probability per frame the loss fault puts on the leader's client traffic")
	fs.IntVar(&cfg.Consumers, "consumers", cfg.Consumers, "members of the consumer group (their reads merged)")
}
