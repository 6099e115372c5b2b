package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/weirmq/weir/bench/brokerbench"
	"github.com/weirmq/weir/bench/perf"
	"github.com/weirmq/weir/internal/cli"
)

// runBenchBroker is `weir bench broker`: see package brokerbench. It logs
// each measurement to stderr and prints the Markdown report to stdout and
// to --out.
func runBenchBroker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, out, err := parseBenchBrokerFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	res, err := brokerbench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	return writeBenchReport(stdout, out, benchRun{name: "broker", args: args, started: res.Started,
		elapsed: res.Elapsed, weirPath: cfg.WeirPath, markdown: res.WriteMarkdown})
}

// parseBenchBrokerFlags reads the flags of `weir bench broker` into a
// checked configuration and the report file name.
func parseBenchBrokerFlags(args []string, stderr io.Writer) (brokerbench.Config, string, error) {
	cfg := brokerbench.DefaultConfig()
	var out string
	var noWeir bool
	var weirEnv stringList
	fs := cli.NewFlagSet("bench broker", "[flags]", stderr)
	fs.IntVar(&cfg.Reps, "reps", cfg.Reps, "repetitions; the report gives medians")
	fs.Int64Var(&cfg.Records, "records", cfg.Records, "records of each throughput run (a, b, d)")
	fs.IntVar(&cfg.RecordSize, "record-size", cfg.RecordSize, "bytes of each record's value in the throughput and latency runs")
	fs.Int64Var(&cfg.SmallRecords, "small-records", cfg.SmallRecords, "records of the small-record run (e)")
	fs.IntVar(&cfg.SmallRecordSize, "small-record-size", cfg.SmallRecordSize, "bytes of each record's value in the small-record run (e)")
	fs.Int64Var(&cfg.LatencyRecords, "latency-records", cfg.LatencyRecords, "records of the latency run (c)")
	fs.Float64Var(&cfg.LatencyRate, "latency-rate", cfg.LatencyRate, "records per second of the latency run (c)")
	fs.IntVar(&cfg.IdleTopics, "idle-topics", cfg.IdleTopics, "topics of the RSS run (f)")
	fs.IntVar(&cfg.IdlePartitions, "idle-partitions", cfg.IdlePartitions, "partitions per topic of the RSS run (f)")
	fs.DurationVar(&cfg.IdleSettle, "idle-settle", cfg.IdleSettle, "idle time before each RSS reading (f)")
	fs.Func("compression", "the producers' batch codec: none (default), gzip, snappy, lz4 or zstd", func(v string) error {
		c, err := perf.ParseCompression(v)
		cfg.Compression = c
		return err
	})
	fs.StringVar(&cfg.TempDir, "tmp", "", "parent `directory` of the brokers' data directories (default the system's temp directory)")
	fs.StringVar(&out, "out", "", "also write the report to this `file`")
	fs.StringVar(&cfg.WeirPath, "weir", "", "weir `binary` to run as 'weir serve' (default this program)")
	fs.BoolVar(&noWeir, "no-weir", false, "measure the kfake references only")
	fs.Func("measure", "run only these measurements, comma-separated letters: a (with d), b, c, e, f", func(v string) error {
		for _, m := range strings.Split(v, ",") {
			cfg.Measures = append(cfg.Measures, brokerbench.Measure(strings.TrimSpace(m)))
		}
		return nil
	})
	fs.Var(&weirEnv, "weir-env", "`KEY=value` added to weir serve's environment (repeatable), e.g. GOGC=200")
	if err := fs.ParseNoArgs(args); err != nil {
		return cfg, "", err
	}
	cfg.WeirEnv = weirEnv
	cfg.WeirArgs = []string{"--log-level", "warn"}
	switch {
	case noWeir:
		cfg.WeirPath = ""
	case cfg.WeirPath == "":
		self, err := os.Executable()
		if err != nil {
			return cfg, "", fmt.Errorf("bench broker: path of this program: %w", err)
		}
		cfg.WeirPath = self
	}
	if err := cfg.Validate(); err != nil {
		return cfg, "", fs.UsageError(err)
	}
	return cfg, out, nil
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, " ") }

func (l *stringList) Set(s string) error {
	if !strings.Contains(s, "=") {
		return fmt.Errorf("%q is not KEY=value", s)
	}
	*l = append(*l, s)
	return nil
}
