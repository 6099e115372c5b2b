package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/weirmq/weir/bench/groupbench"
	"github.com/weirmq/weir/internal/cli"
)

// runBenchGroups is `weir bench groups`: see package groupbench. It logs
// each measurement to stderr and prints the Markdown report to stdout and
// to --out.
func runBenchGroups(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, out, err := parseBenchGroupsFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	res, err := groupbench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	return writeBenchReport(stdout, out, benchRun{name: "groups", args: args, started: res.Started,
		elapsed: res.Elapsed, weirPath: cfg.WeirPath, markdown: res.WriteMarkdown})
}

// parseBenchGroupsFlags reads the flags of `weir bench groups` into a
// checked configuration and the report file name.
func parseBenchGroupsFlags(args []string, stderr io.Writer) (groupbench.Config, string, error) {
	cfg := groupbench.DefaultConfig()
	var out string
	var noWeir bool
	fs := cli.NewFlagSet("bench groups", "[flags]", stderr)
	fs.IntVar(&cfg.Reps, "reps", cfg.Reps, "repetitions; the report gives medians")
	fs.IntVar(&cfg.Groups, "groups", cfg.Groups, "committing groups of the commit throughput run")
	fs.IntVar(&cfg.PartitionsPerGroup, "partitions-per-group", cfg.PartitionsPerGroup, "partitions each commit covers")
	fs.IntVar(&cfg.CommitRounds, "commits", cfg.CommitRounds, "commits per group")
	fs.IntVar(&cfg.Clients, "clients", cfg.Clients, "kgo clients the committing groups share")
	fs.IntVar(&cfg.Members, "members", cfg.Members, "consumers joining the group of the rebalance run")
	fs.DurationVar(&cfg.InitialRebalanceDelay, "initial-rebalance-delay", cfg.InitialRebalanceDelay, "weir's group.initial.rebalance.delay.ms")
	fs.StringVar(&cfg.TempDir, "tmp", "", "parent `directory` of the brokers' data directories (default the system's temp directory)")
	fs.StringVar(&out, "out", "", "also write the report to this `file`")
	fs.StringVar(&cfg.WeirPath, "weir", "", "weir `binary` to run as 'weir serve' (default this program)")
	fs.BoolVar(&noWeir, "no-weir", false, "measure kfake only")
	if err := fs.ParseNoArgs(args); err != nil {
		return cfg, "", err
	}
	cfg.WeirArgs = []string{"--log-level", "warn"}
	switch {
	case noWeir:
		cfg.WeirPath = ""
	case cfg.WeirPath == "":
		self, err := os.Executable()
		if err != nil {
			return cfg, "", fmt.Errorf("bench groups: path of this program: %w", err)
		}
		cfg.WeirPath = self
	}
	if err := cfg.Validate(); err != nil {
		return cfg, "", fs.UsageError(err)
	}
	return cfg, out, nil
}
