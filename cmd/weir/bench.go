package main

import (
	"context"
	"io"

	"github.com/weirmq/weir/internal/cli"
)

// benchmarks is the table of `weir bench` subcommands, in the order the
// usage lists them. Adding a benchmark is one line here plus its run
// function; each parses its own flags.
var benchmarks = []cli.Command{
	{Name: "log", Summary: "append to partition logs on disk: throughput, fsync rounds, latency", Run: runBenchLog},
	{Name: "broker", Summary: "weir serve beside kfake: produce, fsync, latency, consume, small records, RSS", Run: runBenchBroker},
	{Name: "groups", Summary: "weir serve beside kfake: offset commits per second, rebalance time of 100 members", Run: runBenchGroups},
	{Name: "cluster", Summary: "3 weir serve nodes (fast gossip) beside NATS JetStream: failover, replicated throughput, 3,000 partitions", Run: runBenchCluster},
	{Name: "failover", Summary: "3 weir serve nodes it starts: a fault each round; acked records lost, duplicated, reordered; stalls, new leader, client errors", Run: runBenchFailover},
}

// runBench dispatches `weir bench <benchmark> [flags]`.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cli.Dispatch(ctx, "bench", benchmarks, args, stdout, stderr)
}
