package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	clusterbench "github.com/weirmq/weir/bench/cluster"
	"github.com/weirmq/weir/internal/cli"
)

// runBenchCluster is `weir bench cluster`: see package bench/cluster. It
// logs each round to stderr and prints the Markdown report to stdout and
// to --out. The same command, re-executed with the NATS child's
// environment, runs one server of the NATS reference cluster instead.
func runBenchCluster(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if handled, err := clusterbench.ServeNATSChild(os.Stdin, stdout); handled {
		return err
	}
	cfg, out, err := parseBenchClusterFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	res, runErr := clusterbench.Run(ctx, cfg)
	if res == nil {
		return runErr
	}
	if err := writeBenchReport(stdout, out, benchRun{name: "cluster", args: args, started: res.Started,
		elapsed: res.Elapsed, weirPath: cfg.WeirPath, markdown: res.WriteMarkdown}); err != nil {
		return err
	}
	return runErr
}

// parseBenchClusterFlags reads the flags of `weir bench cluster` into a
// checked configuration and the report file name.
func parseBenchClusterFlags(args []string, stderr io.Writer) (clusterbench.Config, string, error) {
	cfg := clusterbench.DefaultConfig()
	var out string
	var noNATS, noRdkafka bool
	var weirEnv stringList
	fs := cli.NewFlagSet("bench cluster", "[flags]", stderr)
	fs.IntVar(&cfg.Partitions, "partitions", cfg.Partitions, "partitions of the failover topic (RF=3, min.insync.replicas=2)")
	fs.IntVar(&cfg.Kills, "kills", cfg.Kills, "failover rounds that SIGKILL the node leading the most partitions")
	fs.IntVar(&cfg.Stops, "stops", cfg.Stops, "failover rounds that SIGSTOP it")
	fs.DurationVar(&cfg.ProduceEvery, "produce-every", cfg.ProduceEvery, "how often each failover producer sends a record to every partition")
	fs.DurationVar(&cfg.PollEvery, "poll-every", cfg.PollEvery, "period of the Metadata polls that time leadership moves")
	fs.DurationVar(&cfg.Settle, "settle", cfg.Settle, "quiet time between failover rounds")
	fs.DurationVar(&cfg.RoundTimeout, "round-timeout", cfg.RoundTimeout, "bound of each wait in a round (leaders moved, producers acknowledging, ISRs full)")
	fs.DurationVar(&cfg.FrozenTimeout, "frozen-timeout", cfg.FrozenTimeout, "in a SIGSTOP round, how long to wait for the producers before the SIGCONT")
	fs.StringVar(&cfg.Python, "python", cfg.Python, "`python3` with confluent-kafka that runs the librdkafka producer")
	fs.BoolVar(&noRdkafka, "no-rdkafka", false, "run the failover rounds with franz-go alone")
	fs.IntVar(&cfg.NATSKills, "nats-kills", cfg.NATSKills, "SIGKILLs of the NATS JetStream stream leader (the failover reference)")
	fs.BoolVar(&noNATS, "no-nats", false, "skip the NATS references")
	fs.IntVar(&cfg.ThroughputReps, "reps", cfg.ThroughputReps, "repetitions of the throughput runs; the report gives medians")
	fs.Int64Var(&cfg.ThroughputRecords, "records", cfg.ThroughputRecords, "records of each weir throughput run")
	fs.Int64Var(&cfg.NATSRecords, "nats-records", cfg.NATSRecords, "records of each NATS throughput run")
	fs.IntVar(&cfg.RecordSize, "record-size", cfg.RecordSize, "bytes of each throughput record's value")
	fs.IntVar(&cfg.ThroughputPartitions, "throughput-partitions", cfg.ThroughputPartitions, "partitions of each throughput topic")
	fs.IntVar(&cfg.ScaleTopics, "scale-topics", cfg.ScaleTopics, "topics of the scale scenario")
	fs.IntVar(&cfg.ScalePartitions, "scale-partitions", cfg.ScalePartitions, "partitions per topic of the scale scenario")
	fs.DurationVar(&cfg.IdleWindow, "idle", cfg.IdleWindow, "how long the scale scenario measures idle CPU")
	fs.DurationVar(&cfg.ScaleSettle, "scale-settle", cfg.ScaleSettle, "idle time before the scale scenario reads RSS")
	fs.StringVar(&cfg.GossipProfile, "gossip-profile", cfg.GossipProfile, "the nodes' --gossip-profile: fast, relaxed or lan")
	fs.Func("measure", "run only these scenarios, comma-separated: failover, throughput, nats-failover, scale", func(v string) error {
		for _, s := range strings.Split(v, ",") {
			cfg.Scenarios = append(cfg.Scenarios, clusterbench.Scenario(strings.TrimSpace(s)))
		}
		return nil
	})
	fs.StringVar(&cfg.TempDir, "tmp", "", "parent `directory` of the clusters' directories (default the system's temp directory)")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the clusters' directories (data and each node's log)")
	fs.StringVar(&out, "out", "", "also write the report to this `file`")
	fs.StringVar(&cfg.WeirPath, "weir", "", "weir `binary` to run as 'weir serve' (default this program)")
	fs.Var(&weirEnv, "weir-env", "`KEY=value` added to weir serve's environment (repeatable)")
	if err := fs.ParseNoArgs(args); err != nil {
		return cfg, "", err
	}
	cfg.WeirEnv = weirEnv
	self, err := os.Executable()
	if err != nil {
		return cfg, "", fmt.Errorf("bench cluster: path of this program: %w", err)
	}
	if cfg.WeirPath == "" {
		cfg.WeirPath = self
	}
	if !noNATS {
		cfg.NATSExec = []string{self, "bench", "cluster"}
	}
	if noRdkafka {
		cfg.Python = ""
	}
	if err := cfg.Validate(); err != nil {
		return cfg, "", fs.UsageError(err)
	}
	return cfg, out, nil
}
