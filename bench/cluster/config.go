package cluster

import (
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/weirmq/weir/bench"
)

// ErrInvalidConfig matches (errors.Is) Config.Validate's errors, whose
// text is the detail alone (see bench.InvalidConfig).
var ErrInvalidConfig = errors.New("cluster bench: invalid config")

func invalidf(format string, args ...any) error {
	return bench.InvalidConfig(ErrInvalidConfig, format, args...)
}

// Scenario names one part of the benchmark.
type Scenario string

// The scenarios, in the order a run measures them.
const (
	// Failover: SIGKILL and SIGSTOP of the node leading the most
	// partitions, with franz-go and librdkafka producing.
	Failover Scenario = "failover"
	// Throughput: acks=all RF=3 beside acks=1 RF=1 on the failover
	// scenario's cluster, and a NATS JetStream R3 stream.
	Throughput Scenario = "throughput"
	// NATSFailover: the NATS JetStream R3 stream's stream leader shut
	// down, the reference of Failover.
	NATSFailover Scenario = "nats-failover"
	// Scale: 3,000 partitions on a fresh cluster.
	Scale Scenario = "scale"
)

// Scenarios lists every scenario in run order.
var Scenarios = []Scenario{Failover, Throughput, NATSFailover, Scale}

// Config describes one run. Start from DefaultConfig and set WeirPath.
type Config struct {
	// WeirPath is the weir binary run as `weir serve`.
	WeirPath string
	// WeirArgs are appended to every `weir serve` command line.
	WeirArgs []string
	// WeirEnv holds "KEY=value" entries added to the nodes' environment.
	WeirEnv []string
	// TempDir holds each cluster's directory (data and logs); empty means
	// os.TempDir(). Directories are removed after their scenario unless
	// Keep is set.
	TempDir string
	// Keep keeps the clusters' directories, for their logs.
	Keep bool
	// Scenarios selects what runs; empty runs every scenario.
	Scenarios []Scenario
	// Nodes is the cluster size. Default 3.
	Nodes int
	// GossipProfile is `weir serve --gossip-profile`. Default "fast".
	GossipProfile string
	// place is NodesConfig.Place.
	place func(id int32) Placement

	// Partitions of the failover topic (RF=3, min.insync.replicas=2).
	// Default 30.
	Partitions int
	// Kills and Stops are the SIGKILL and SIGSTOP rounds. Defaults 20
	// and 5 (a SIGSTOP round lasts as long as the clients' request
	// timeouts, about a minute at librdkafka's defaults).
	Kills, Stops int
	// ProduceEvery is how often each failover producer sends one record
	// to every partition. Default 10 ms.
	ProduceEvery time.Duration
	// PollEvery is the period of the Metadata polls on a survivor that
	// time the leadership moves. Default 10 ms.
	PollEvery time.Duration
	// Settle is the quiet time between rounds, after the victim is back
	// in every ISR and both producers acknowledge on every partition.
	// Default 3 s.
	Settle time.Duration
	// RoundTimeout bounds each wait of a round (leadership moved, every
	// partition acknowledging again, ISR full again). A round that runs
	// into it is reported as a failure, and the run goes on. Default 30 s.
	RoundTimeout time.Duration
	// BalanceTimeout bounds the wait, after a victim is back in every
	// ISR, until the leaders' rebalance has moved every leadership back to
	// its preferred replica (a returning broker waits one to two
	// leader.imbalance.check.interval.seconds, 10 s by default, plus the
	// moves). Default 45 s.
	BalanceTimeout time.Duration
	// FrozenTimeout bounds, in a SIGSTOP round, the wait for every
	// producer to acknowledge on every partition again while the victim
	// is still frozen: a client whose request is in flight to a frozen
	// leader waits for its own request timeout, which the connection
	// never cuts short. After it the victim gets SIGCONT. Default 90 s.
	FrozenTimeout time.Duration
	// Python runs the librdkafka producer (confluent-kafka). Empty skips
	// librdkafka. Default /usr/bin/python3.
	Python string

	// NATSExec is the command line that runs this program again as one
	// NATS server of the reference cluster: the program must call
	// ServeNATSChild first (`weir bench cluster` does, and so does this
	// package's TestMain). Empty skips the NATS references.
	NATSExec []string
	// NATSKills is the number of SIGKILLs of the NATS JetStream stream leader
	// of the NATSFailover scenario. Default 5.
	NATSKills int

	// ThroughputReps repeats the throughput measurements (weir acks=all
	// RF=3, weir acks=1 RF=1, NATS R3), interleaved. Default 3.
	ThroughputReps int
	// ThroughputRecords and NATSRecords are the records of one weir and
	// one NATS throughput run. Defaults 500,000 and 200,000.
	ThroughputRecords, NATSRecords int64
	// RecordSize is the value size of the throughput runs. Default 1024.
	RecordSize int
	// ThroughputPartitions is the partition count of the throughput
	// topics. Default 3 (one led by each node).
	ThroughputPartitions int

	// ScaleTopics x ScalePartitions partitions (RF=3) of the scale
	// scenario. Defaults 100 x 30.
	ScaleTopics, ScalePartitions int
	// IdleWindow is how long idle CPU is measured. Default 30 s.
	IdleWindow time.Duration
	// ScaleSettle is the idle time before RSS is read. Default 5 s.
	ScaleSettle time.Duration

	// StartTimeout bounds a node's start and topic creation. Default 60 s.
	StartTimeout time.Duration
	// Logger receives progress lines; nil discards them.
	Logger *slog.Logger
}

// DefaultConfig returns the defaults of `weir bench cluster`, the recorded
// run's sizes, without a WeirPath.
func DefaultConfig() Config {
	return Config{
		Nodes:                3,
		GossipProfile:        "fast",
		Partitions:           30,
		Kills:                20,
		Stops:                5,
		ProduceEvery:         10 * time.Millisecond,
		PollEvery:            10 * time.Millisecond,
		Settle:               3 * time.Second,
		RoundTimeout:         30 * time.Second,
		BalanceTimeout:       45 * time.Second,
		FrozenTimeout:        90 * time.Second,
		Python:               "/usr/bin/python3",
		NATSKills:            5,
		ThroughputReps:       3,
		ThroughputRecords:    500_000,
		NATSRecords:          200_000,
		RecordSize:           1024,
		ThroughputPartitions: 3,
		ScaleTopics:          100,
		ScalePartitions:      30,
		IdleWindow:           30 * time.Second,
		ScaleSettle:          5 * time.Second,
		StartTimeout:         60 * time.Second,
	}
}

// Validate checks the fields' ranges.
func (c Config) Validate() error {
	switch {
	case c.WeirPath == "":
		return invalidf("no weir binary")
	case c.Nodes < 3:
		return invalidf("%d nodes, need at least 3 (RF=3)", c.Nodes)
	case c.GossipProfile == "":
		return invalidf("no gossip profile")
	case c.Partitions < 1:
		return invalidf("%d failover partitions, need at least 1", c.Partitions)
	case c.Kills < 0 || c.Stops < 0 || c.NATSKills < 0:
		return invalidf("kills %d, stops %d, NATS kills %d: none may be negative", c.Kills, c.Stops, c.NATSKills)
	case c.ProduceEvery <= 0 || c.PollEvery <= 0:
		return invalidf("produce every %v, poll every %v: both need more than 0", c.ProduceEvery, c.PollEvery)
	case c.Settle < 0:
		return invalidf("settle %v is negative", c.Settle)
	case c.RoundTimeout <= 0 || c.StartTimeout <= 0 || c.FrozenTimeout <= 0 || c.BalanceTimeout <= 0:
		return invalidf("timeouts %v, %v, %v and %v, need more than 0", c.RoundTimeout, c.StartTimeout, c.FrozenTimeout, c.BalanceTimeout)
	case c.ThroughputReps < 1:
		return invalidf("%d throughput repetitions, need at least 1", c.ThroughputReps)
	case c.ThroughputRecords < 1 || c.NATSRecords < 1:
		return invalidf("throughput records %d and %d, need at least 1", c.ThroughputRecords, c.NATSRecords)
	case c.RecordSize < 1:
		return invalidf("record size %d, need at least 1", c.RecordSize)
	case c.ThroughputPartitions < 1:
		return invalidf("%d throughput partitions, need at least 1", c.ThroughputPartitions)
	case c.ScaleTopics < 1 || c.ScalePartitions < 1:
		return invalidf("%d scale topics of %d partitions, need at least 1 of 1", c.ScaleTopics, c.ScalePartitions)
	case c.IdleWindow <= 0:
		return invalidf("idle window %v, need more than 0", c.IdleWindow)
	case c.ScaleSettle < 0:
		return invalidf("scale settle %v is negative", c.ScaleSettle)
	}
	for _, s := range c.Scenarios {
		if !slices.Contains(Scenarios, s) {
			return invalidf("no scenario %q; there are failover, throughput, nats-failover and scale", s)
		}
	}
	return nil
}

// runs reports whether the configuration selects s.
func (c Config) runs(s Scenario) bool {
	return len(c.Scenarios) == 0 || slices.Contains(c.Scenarios, s)
}
