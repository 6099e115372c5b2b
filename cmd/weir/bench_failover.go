package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	clusterbench "github.com/weirmq/weir/bench/cluster"
	"github.com/weirmq/weir/bench/failover"
	"github.com/weirmq/weir/internal/cli"
)

// benchFailoverOut is the default --out directory of `weir bench failover`.
const benchFailoverOut = "weir-bench"

// runBenchFailover is `weir bench failover`: see package bench/failover.
// It draws a progress bar on stderr, prints the table (or, with --json,
// the JSON) to stdout, and writes the JSON, the Markdown and one PNG per
// fault under --out.
func runBenchFailover(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if handled, err := clusterbench.ServeNATSChild(os.Stdin, stdout); handled {
		return err
	}
	cfg, out, asJSON, err := parseBenchFailoverFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if cfg.Keep {
		cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	cfg.Progress = failover.ProgressBar(stderr)
	res, runErr := failover.Run(ctx, cfg)
	fmt.Fprintln(stderr)
	if res == nil {
		return runErr
	}
	paths, err := res.WriteFiles(out)
	if err != nil {
		return fmt.Errorf("bench failover: %w", err)
	}
	if asJSON {
		err = res.WriteJSON(stdout)
	} else {
		err = res.WriteTable(stdout)
	}
	if err != nil {
		return fmt.Errorf("bench failover: %w", err)
	}
	fmt.Fprintf(stderr, "wrote %s\n", strings.Join(paths, ", "))
	if runErr != nil {
		return fmt.Errorf("bench failover: %w", runErr)
	}
	return nil
}

// parseBenchFailoverFlags reads the flags of `weir bench failover` into a
// checked configuration, the output directory and whether to print JSON.
func parseBenchFailoverFlags(args []string, stderr io.Writer) (failover.Config, string, bool, error) {
	cfg := failover.DefaultConfig()
	out := "./" + benchFailoverOut + "/"
	var asJSON bool
	var weirEnv, brokerConfigs stringList
	fs := cli.NewFlagSet("bench failover", "[flags]", stderr)
	fs.IntVar(&cfg.Nodes, "nodes", cfg.Nodes, "weir serve nodes to start, every one a voter")
	fs.IntVar(&cfg.Topics, "topics", cfg.Topics, "topics to produce to")
	fs.IntVar(&cfg.Partitions, "partitions", cfg.Partitions, "partitions per topic")
	fs.IntVar(&cfg.RF, "rf", cfg.RF, "replication factor of the topics")
	fs.IntVar(&cfg.MinInsync, "min-insync", cfg.MinInsync, "min.insync.replicas of the topics")
	fs.StringVar(&cfg.Acks, "acks", cfg.Acks, "producer acks: all, 1 or 0")
	fs.BoolVar(&cfg.Idempotent, "idempotent", cfg.Idempotent, "use the idempotent producer (acks=all)")
	fs.IntVar(&cfg.Rate, "rate", cfg.Rate, "records per second (50 is seed 000's pace)")
	fs.StringVar(&cfg.Client, "client", cfg.Client, "producer library: franz-go, or librdkafka (confluent-kafka under --python; the consumer stays franz-go)")
	fs.StringVar(&cfg.Python, "python", cfg.Python, "`python3` with confluent-kafka for --client librdkafka")
	fs.BoolVar(&cfg.Sync, "sync", cfg.Sync, "send each record after the previous one's outcome, as seed 000's producer (default async with callbacks)")
	var preset, compare string
	fs.StringVar(&compare, "compare", "", "`nats`: then run the same records, rate and faults against a 3-server NATS JetStream cluster (an R3 stream per topic, a subject per partition) as the reference")

	fs.StringVar(&preset, "preset", "", "`seed`: seed 000's setup (4 nodes, 100 topics x 30 partitions, 50 records/s); flags given override it")
	fs.IntVar(&cfg.Records, "records", cfg.Records, "records per round")
	fs.IntVar(&cfg.RecordSize, "record-size", cfg.RecordSize, "bytes of each record's value")
	fs.IntVar(&cfg.Rounds, "rounds", cfg.Rounds, "rounds per fault, one fault in each")
	fs.Func("fault", "faults, comma-separated, one scenario each: "+faultNames()+" (default leader)", func(v string) error {
		cfg.Faults = nil
		for _, s := range strings.Split(v, ",") {
			cfg.Faults = append(cfg.Faults, failover.Fault(strings.TrimSpace(s)))
		}
		return nil
	})
	fs.DurationVar(&cfg.Pause, "pause", cfg.Pause, "how long the pause fault keeps the leader SIGSTOPped")
	benchFailoverProxyFlags(fs, &cfg)
	fs.DurationVar(&cfg.PartitionTime, "partition-time", cfg.PartitionTime, "how long the partition fault keeps the leader cut off from the other nodes (needs root, ip and nft)")
	fs.BoolVar(&cfg.Unclean, "unclean", cfg.Unclean, "set unclean.leader.election.enable=true on the topics")
	fs.BoolVar(&cfg.Fsync, "fsync", cfg.Fsync, "set flush.messages=1 on the topics (weir's group-commit fsync policy)")
	fs.BoolVar(&cfg.ClientTuned, "client-tuned", cfg.ClientTuned, "lower the clients' metadata ages and retry backoff")
	clientDefaults := fs.Bool("client-defaults", true, "run the clients at franz-go's defaults, as a user who changes nothing; --client-tuned turns it off")
	fs.DurationVar(&cfg.RoundTimeout, "round-timeout", cfg.RoundTimeout, "bound of each wait in a round, and the producer's record delivery timeout")
	fs.DurationVar(&cfg.DrainQuiet, "drain-quiet", cfg.DrainQuiet, "end a round's consumption after this long without a new record")
	fs.StringVar(&cfg.GossipProfile, "gossip-profile", cfg.GossipProfile, "the nodes' --gossip-profile: fast, relaxed or lan")
	var ext failover.External
	fs.Func("brokers", "`host:port,...` of an existing cluster to run against instead of starting weir nodes (needs --stop-cmd and --start-cmd)", func(v string) error {
		for _, b := range strings.Split(v, ",") {
			if b = strings.TrimSpace(b); b != "" {
				ext.Brokers = append(ext.Brokers, b)
			}
		}
		return nil
	})
	fs.StringVar(&ext.StopCmd, "stop-cmd", "", "with --brokers: shell `command` that stops broker {node} ({addr} is its host:port) and returns once it is down")
	fs.StringVar(&ext.StartCmd, "start-cmd", "", "with --brokers: shell `command` that starts broker {node} again")
	fs.StringVar(&ext.PauseCmd, "pause-cmd", "", "with --brokers: shell `command` that pauses broker {node} (the pause fault)")
	fs.StringVar(&ext.ResumeCmd, "resume-cmd", "", "with --brokers: shell `command` that resumes a paused broker {node}")
	fs.StringVar(&out, "out", out, "`directory` for the JSON, the Markdown and the PNGs")
	fs.BoolVar(&asJSON, "json", false, "print the JSON instead of the table")
	fs.StringVar(&cfg.TempDir, "tmp", "", "parent `directory` of the cluster's directory (default the system's temp directory)")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the cluster's directory (data and each node's log) and log each round to stderr")
	fs.StringVar(&cfg.WeirPath, "weir", "", "weir `binary` to run as 'weir serve' (default this program)")
	fs.Var(&weirEnv, "weir-env", "`KEY=value` added to weir serve's environment (repeatable)")
	fs.Var(&brokerConfigs, "broker-config", "`KEY=value` server.properties entry of every node, e.g. replica.lag.time.max.ms=2000 (repeatable)")
	if err := fs.ParseNoArgs(args); err != nil {
		return cfg, "", false, err
	}
	cfg.WeirEnv = weirEnv
	for _, kv := range brokerConfigs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return cfg, "", false, fs.UsageError(fmt.Errorf("--broker-config %q: want KEY=value", kv))
		}
		if cfg.BrokerConfigs == nil {
			cfg.BrokerConfigs = map[string]string{}
		}
		cfg.BrokerConfigs[k] = v
	}
	if len(ext.Brokers) > 0 || ext.StopCmd != "" || ext.StartCmd != "" || ext.PauseCmd != "" || ext.ResumeCmd != "" {
		cfg.External = &ext
	}
	if fs.Changed("client-defaults") && *clientDefaults && cfg.ClientTuned {
		return cfg, "", false, fs.UsageError(fmt.Errorf("--client-defaults and --client-tuned exclude each other"))
	}
	switch preset {
	case "":
	case "seed":
		given := cfg
		cfg.SeedPreset()
		for name, keep := range map[string]func(){
			"nodes": func() { cfg.Nodes = given.Nodes }, "topics": func() { cfg.Topics = given.Topics },
			"partitions": func() { cfg.Partitions = given.Partitions }, "rate": func() { cfg.Rate = given.Rate },
		} {
			if fs.Changed(name) {
				keep()
			}
		}
	default:
		return cfg, "", false, fs.UsageError(fmt.Errorf("no preset %q; there is seed", preset))
	}
	self, err := os.Executable()
	if err != nil {
		return cfg, "", false, fmt.Errorf("bench failover: path of this program: %w", err)
	}
	if cfg.WeirPath == "" {
		cfg.WeirPath = self
	}
	switch compare {
	case "":
	case "nats":
		cfg.NATSExec = []string{self, "bench", "failover"}
	default:
		return cfg, "", false, fs.UsageError(fmt.Errorf("no --compare %q; there is nats", compare))
	}
	if err := cfg.Validate(); err != nil {
		return cfg, "", false, fs.UsageError(err)
	}
	return cfg, out, asJSON, nil
}

// faultNames lists the faults for the usage.
func faultNames() string {
	var s []string
	for _, f := range failover.Faults {
		s = append(s, string(f))
	}
	return strings.Join(s, ", ")
}
