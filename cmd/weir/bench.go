package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/weirmq/weir/bench/logbench"
	"github.com/weirmq/weir/internal/cli"
)

// benchmarks is the table of `weir bench` subcommands, in the order the
// usage lists them. Adding a benchmark is one line here plus its run
// function; each parses its own flags.
var benchmarks = []cli.Command{
	{Name: "log", Summary: "append to partition logs on disk: throughput, fsync rounds, latency", Run: runBenchLog},
	{Name: "broker", Summary: "weir serve beside kfake: produce, fsync, latency, consume, small records, RSS", Run: runBenchBroker},
	{Name: "groups", Summary: "weir serve beside kfake: offset commits per second, rebalance time of 100 members", Run: runBenchGroups},
}

// runBench dispatches `weir bench <benchmark> [flags]`.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cli.Dispatch(ctx, "bench", benchmarks, args, stdout, stderr)
}

// runBenchLog is `weir bench log`: see package logbench. It prints the
// ready line, the synced lines under --report-synced, and a summary line.
func runBenchLog(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseBenchLogFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	res, err := logbench.Run(ctx, cfg, stdout)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(stdout, res.String()); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// parseBenchLogFlags reads the flags of `weir bench log` into a checked
// configuration.
func parseBenchLogFlags(args []string, stderr io.Writer) (logbench.Config, error) {
	cfg := logbench.DefaultConfig()
	fs := cli.NewFlagSet("bench log", "--dir DIR [flags]", stderr)
	fs.StringVar(&cfg.Dir, "dir", "", "log directory to append to (required); created if missing, earlier runs' data is recovered and kept")
	fs.IntVar(&cfg.Partitions, "partitions", cfg.Partitions, "number of partition logs")
	fs.IntVar(&cfg.Writers, "writers", cfg.Writers, "concurrent appenders; writer w appends to partition w mod partitions")
	fs.IntVar(&cfg.RecordSize, "record-size", cfg.RecordSize, "bytes of each record's value")
	fs.IntVar(&cfg.BatchBytes, "batch-bytes", cfg.BatchBytes, "bytes of values per batch: records per batch = batch-bytes/record-size")
	fs.BoolVar(&cfg.Fsync, "fsync", false, "group commit (flush.messages=1): each writer waits until its append is fsynced")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long to run; with --batches and no --duration, no time bound")
	fs.Int64Var(&cfg.Batches, "batches", 0, "stop after this many batches in total (0: no count bound)")
	fs.Int64Var(&cfg.SegmentBytes, "segment-bytes", cfg.SegmentBytes, "segment.bytes of every partition")
	fs.BoolVar(&cfg.ReportSynced, "report-synced", false, "print 'synced <partition> <firstOffset> <lastOffset> <writer> <seq>' once each append is durable (needs --fsync)")
	fs.Int64Var(&cfg.Run, "run", 0, "run id written into every record key, to tell runs on one directory apart")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if err := fs.NoArgs(); err != nil {
		return cfg, err
	}
	if cfg.Dir == "" {
		return cfg, fs.UsageError(errors.New("--dir is required"))
	}
	if cfg.Batches > 0 && !fs.Changed("duration") {
		cfg.Duration = 0
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fs.UsageError(err)
	}
	return cfg, nil
}
