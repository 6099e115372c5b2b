package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/weirmq/weir/bench/logbench"
)

// benchmarks is the table of `weir bench` subcommands, in the order the
// usage lists them. Adding a benchmark is one line here plus its run
// function; each parses its own flags.
var benchmarks = []command{
	{"log", "append to partition logs on disk: throughput, fsync rounds, latency", runBenchLog},
	{"broker", "weir serve beside kfake: produce, fsync, latency, consume, small records, RSS", runBenchBroker},
	{"groups", "weir serve beside kfake: offset commits per second, rebalance time of 100 members", runBenchGroups},
}

// runBench dispatches `weir bench <benchmark> [flags]`.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		printBenchUsage(stderr)
		return &usageError{err: errors.New("no benchmark named"), reported: true}
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		printBenchUsage(stderr)
		return flag.ErrHelp
	}
	for _, b := range benchmarks {
		if b.name == args[0] {
			return b.run(ctx, args[1:], stdout, stderr)
		}
	}
	return usageErrorf("unknown benchmark %q", args[0])
}

// printBenchUsage lists the benchmarks.
func printBenchUsage(w io.Writer) {
	fmt.Fprint(w, "usage: weir bench <benchmark> [flags]\n\nbenchmarks:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	for _, b := range benchmarks {
		fmt.Fprintf(tw, "  %s\t%s\n", b.name, b.summary)
	}
	tw.Flush()
	fmt.Fprint(w, "\n'weir bench <benchmark> -h' prints a benchmark's flags.\n")
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
	fs := newFlagSet("bench log", "--dir DIR [flags]", stderr)
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
	if err := parseFlags(fs, args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, benchUsageError(stderr, "log", fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " ")))
	}
	if cfg.Dir == "" {
		return cfg, benchUsageError(stderr, "log", errors.New("--dir is required"))
	}
	if cfg.Batches > 0 && !flagSet(fs, "duration") {
		cfg.Duration = 0
	}
	if err := cfg.Validate(); err != nil {
		return cfg, benchUsageError(stderr, "log", err)
	}
	return cfg, nil
}

// benchUsageError reports a command-line mistake in the flags of benchmark
// name, pointing at its own flag list, and returns it as a usage error.
func benchUsageError(stderr io.Writer, name string, err error) error {
	fmt.Fprintf(stderr, "weir bench %s: %v\nrun 'weir bench %s -h' for usage\n", name, err, name)
	return &usageError{err: err, reported: true}
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}
