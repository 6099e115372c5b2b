package failover

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/weirmq/weir/bench"
)

// ErrInvalidConfig matches (errors.Is) Config.Validate's errors, whose
// text is the detail alone (see bench.InvalidConfig).
var ErrInvalidConfig = errors.New("failover bench: invalid config")

func invalidf(format string, args ...any) error {
	return bench.InvalidConfig(ErrInvalidConfig, format, args...)
}

// Fault is what a round does to the cluster.
type Fault string

// The faults on a cluster this package started.
const (
	// FaultLeader SIGKILLs the node leading the most partitions and
	// starts it again once every partition has a new leader.
	FaultLeader Fault = "leader"
	// FaultController SIGKILLs the metadata quorum's leader (found with
	// DescribeQuorum) and starts it again.
	FaultController Fault = "controller"
	// FaultTwo SIGKILLs the node leading the most partitions and one
	// more at once, and starts both again.
	FaultTwo Fault = "two"
	// FaultAll SIGKILLs every node at once and starts them all again.
	FaultAll Fault = "all"
	// FaultPause SIGSTOPs the node leading the most partitions for
	// Config.Pause, then SIGCONTs it (the zombie leader).
	FaultPause Fault = "pause"
	// FaultRolling SIGTERMs each node in turn, starting it again and
	// waiting for every ISR to be full before the next.
	FaultRolling Fault = "rolling"
	// FaultClientDisconnect closes, through the proxy, every client
	// connection to the node leading the most partitions; the node stays
	// up.
	FaultClientDisconnect Fault = "client-disconnect"
	// FaultLatency adds Config.FaultLatency to the client traffic of the
	// node leading the most partitions for Config.FaultTime.
	FaultLatency Fault = "latency"
	// FaultLoss loses chunks of that node's client traffic with
	// probability Config.FaultLoss for Config.FaultTime.
	FaultLoss Fault = "loss"
	// FaultPartition cuts the node leading the most partitions off from
	// the other nodes, not from the clients, for Config.PartitionTime,
	// then heals the cut (network namespaces and nftables; needs root).
	FaultPartition Fault = "partition"
	// FaultUnclean makes the leader's followers lag (SIGSTOP) until the
	// ISR is the leader alone, writes, SIGKILLs the leader and resumes a
	// lagging follower, which wins an unclean election (unclean.go). It
	// needs Unclean and one partition in all.
	FaultUnclean Fault = "unclean"
)

// Faults lists every fault, in the order the usage names them.
var Faults = []Fault{FaultLeader, FaultController, FaultTwo, FaultAll, FaultPause, FaultRolling,
	FaultPartition, FaultClientDisconnect, FaultLatency, FaultLoss, FaultUnclean}

// Acks values.
const (
	AcksAll    = "all"
	AcksLeader = "1"
	AcksNone   = "0"
)

// Config describes one run. Start from DefaultConfig and set WeirPath.
type Config struct {
	// WeirPath is the weir binary run as `weir serve`.
	WeirPath string
	// WeirArgs are appended to every `weir serve` command line.
	WeirArgs []string
	// WeirEnv holds "KEY=value" entries added to the nodes' environment.
	WeirEnv []string
	// BrokerConfigs are server.properties entries every node reads
	// (`weir serve --config`), e.g. replica.lag.time.max.ms.
	BrokerConfigs map[string]string
	// TempDir holds the cluster's directory; empty means os.TempDir().
	TempDir string
	// Keep keeps the cluster's directory (data and each node's log).
	Keep bool
	// GossipProfile is `weir serve --gossip-profile`. Default "fast".
	GossipProfile string
	// External, when set, runs against that existing cluster instead of
	// starting weir nodes (the Weir*, TempDir, Keep, GossipProfile and
	// Nodes fields are then unused).
	External *External
	// TopicPrefix names the topics: prefix-0, prefix-1, ... Default
	// "failover"; an external run adds the run's start time.
	TopicPrefix string

	// Nodes is the cluster size. Default 3.
	Nodes int
	// Topics and Partitions: Topics topics of Partitions partitions
	// each. Defaults 1 and 30.
	Topics, Partitions int
	// RF is the replication factor and MinInsync the topics'
	// min.insync.replicas. Defaults 3 and 2.
	RF, MinInsync int
	// Unclean sets unclean.leader.election.enable=true on the topics.
	Unclean bool
	// Fsync sets flush.messages=1 on the topics: weir's group-commit
	// fsync policy, an acknowledgement also meaning "on disk".
	Fsync bool
	// ClientTuned lowers the clients' metadata ages and retry backoff
	// (see tunedOpts); the default measures franz-go at its defaults.
	ClientTuned bool

	// Acks is the producer's acks: "all", "1" or "0". Default "all".
	Acks string
	// Idempotent enables the idempotent producer (acks=all only, as
	// Kafka requires).
	Idempotent bool
	// Client is the producer's library: ClientFranzGo (default) or
	// ClientLibrdkafka (confluent-kafka under Python; the consumer stays
	// franz-go).
	Client string
	// Python runs the librdkafka producer. Default /usr/bin/python3.
	Python string
	// Sync sends each record only after the previous one's outcome
	// (seed 000's producer); the default sends asynchronously.
	Sync bool
	// Rate is the records sent per second (at most, when Sync). Default 500.
	Rate int
	// Records is the records sent per round. Default 2000.
	Records int
	// RecordSize is each record's value size in bytes. Default 100.
	RecordSize int
	// Rounds is the rounds per fault. Default 8.
	Rounds int
	// Faults are the scenarios, run one after the other on one cluster,
	// Rounds rounds each. Default leader.
	Faults []Fault
	// FaultAfter is the share of a round's sending time after which the
	// fault is injected. Default 0.3.
	FaultAfter float64
	// Pause is how long FaultPause keeps the node stopped. Default 5 s.
	Pause time.Duration
	// PartitionTime is how long FaultPartition keeps the node cut off.
	// Default 5 s.
	PartitionTime time.Duration

	// Latency and Loss impair all client traffic for the whole run
	// through the proxy (see proxy.go); FaultTime, FaultLatency and
	// FaultLoss are the latency and loss faults'. Defaults 0, 0, 5 s,
	// 200 ms and 0.05.
	Latency, FaultTime, FaultLatency time.Duration
	Loss, FaultLoss                  float64
	// Consumers is the consumer group's members. Default 1.
	Consumers int

	// PollEvery is the period of the Metadata polls that time a new
	// leader. Default 10 ms.
	PollEvery time.Duration
	// RoundTimeout bounds every wait of a round (new leaders, full ISRs,
	// the producer's outcomes) and is the producer's record delivery
	// timeout. Default 30 s.
	RoundTimeout time.Duration
	// DrainQuiet ends a round's consumption when the consumer read
	// nothing for this long while acknowledged records were missing.
	// Default 5 s.
	DrainQuiet time.Duration
	// StartTimeout bounds a node's start and topic creation. Default 60 s.
	StartTimeout time.Duration

	// NATSExec, when set, runs this program again as one NATS server of
	// the reference cluster (the program must call
	// cluster.ServeNATSChild first): Run then runs the same rounds
	// against NATS JetStream as well (--compare nats, see runNATS).
	NATSExec []string

	// Logger receives progress lines; nil discards them.
	Logger *slog.Logger
	// Progress, when set, is called every ProgressEvery with the
	// progress of the run.
	Progress func(Progress)
	// ProgressEvery is the period of Progress calls. Default 200 ms.
	ProgressEvery time.Duration
}

// DefaultConfig returns the defaults of `weir bench failover`: seed 000's
// shape (2,000 records a round, a fault in each, 8 rounds) at ten times
// its rate, without a WeirPath.
func DefaultConfig() Config {
	return Config{
		GossipProfile: "fast",
		TopicPrefix:   "failover",
		Nodes:         3,
		Topics:        1,
		Partitions:    30,
		RF:            3,
		MinInsync:     2,
		Acks:          AcksAll,
		Client:        ClientFranzGo,
		Python:        "/usr/bin/python3",
		Rate:          500,
		Records:       2000,
		RecordSize:    100,
		Rounds:        8,
		Faults:        []Fault{FaultLeader},
		FaultAfter:    0.3,
		Pause:         5 * time.Second,
		FaultTime:     5 * time.Second,
		FaultLatency:  200 * time.Millisecond,
		FaultLoss:     0.05,
		Consumers:     1,
		PartitionTime: 5 * time.Second,
		PollEvery:     10 * time.Millisecond,
		RoundTimeout:  30 * time.Second,
		DrainQuiet:    5 * time.Second,
		StartTimeout:  60 * time.Second,
		ProgressEvery: 200 * time.Millisecond,
	}
}

// SeedPreset sets seed 000's whole setup: 4 nodes, 100 topics x 30
// partitions, 50 records per second.
func (c *Config) SeedPreset() {
	c.Nodes, c.Topics, c.Partitions, c.Rate = 4, 100, 30, 50
}

// Validate checks the fields' ranges.
func (c Config) Validate() error {
	if err := c.validateExternal(); err != nil {
		return err
	}
	if err := c.validateProxy(); err != nil {
		return err
	}
	switch {
	case c.External == nil && c.WeirPath == "":
		return invalidf("no weir binary")
	case c.TopicPrefix == "":
		return invalidf("no topic prefix")
	case c.GossipProfile == "":
		return invalidf("no gossip profile")
	case c.Nodes < 1:
		return invalidf("%d nodes, need at least 1", c.Nodes)
	case c.Topics < 1 || c.Partitions < 1:
		return invalidf("%d topics of %d partitions, need at least 1 of 1", c.Topics, c.Partitions)
	case c.RF < 1 || c.External == nil && c.RF > c.Nodes:
		return invalidf("replication factor %d on %d nodes, need 1 to %d", c.RF, c.Nodes, c.Nodes)
	case c.MinInsync < 1 || c.MinInsync > c.RF:
		return invalidf("min.insync.replicas %d with replication factor %d, need 1 to %d", c.MinInsync, c.RF, c.RF)
	case c.Acks != AcksAll && c.Acks != AcksLeader && c.Acks != AcksNone:
		return invalidf("acks %q, want all, 1 or 0", c.Acks)
	case c.Client != ClientFranzGo && c.Client != ClientLibrdkafka:
		return invalidf("client %q, want franz-go or librdkafka", c.Client)
	case c.Client == ClientLibrdkafka && c.Python == "":
		return invalidf("the librdkafka client needs a python")
	case c.Idempotent && c.Acks != AcksAll:
		return invalidf("the idempotent producer needs acks=all, not acks=%s", c.Acks)
	case c.Rate < 1 || c.Records < 1 || c.Rounds < 1:
		return invalidf("rate %d, records %d, rounds %d: each needs at least 1", c.Rate, c.Records, c.Rounds)
	case c.RecordSize < valueHeader:
		return invalidf("record size %d, need at least %d", c.RecordSize, valueHeader)
	case len(c.Faults) == 0:
		return invalidf("no fault")
	case c.FaultAfter < 0 || c.FaultAfter >= 1:
		return invalidf("fault after %v of a round, need 0 to below 1", c.FaultAfter)
	case c.PartitionTime <= 0:
		return invalidf("partition time %v, need more than 0", c.PartitionTime)
	case c.Pause <= 0 || c.PollEvery <= 0 || c.RoundTimeout <= 0 || c.DrainQuiet <= 0 || c.StartTimeout <= 0:
		return invalidf("pause %v, poll every %v, round timeout %v, drain quiet %v, start timeout %v: each needs more than 0",
			c.Pause, c.PollEvery, c.RoundTimeout, c.DrainQuiet, c.StartTimeout)
	}
	for i, f := range c.Faults {
		if slices.Contains(c.Faults[:i], f) {
			return invalidf("fault %s named twice", f)
		}
		if !slices.Contains(Faults, f) {
			return invalidf("no fault %q; there are %s", f, faultList())
		}
		if f == FaultPartition && c.External != nil {
			return invalidf("the partition fault runs on a cluster this tool starts (each node in a network namespace), not on an external one (--brokers)")
		}
		if (f == FaultTwo || f == FaultRolling || f == FaultPartition) && c.Nodes < 2 {
			return invalidf("fault %s needs at least 2 nodes", f)
		}
		if f == FaultUnclean {
			if err := c.validateUnclean(); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateExternal checks the external cluster's commands.
func (c Config) validateExternal() error {
	e := c.External
	if e == nil {
		return nil
	}
	switch {
	case len(e.Brokers) == 0:
		return invalidf("an external cluster needs --brokers")
	case e.StopCmd == "" || e.StartCmd == "":
		return invalidf("an external cluster needs --stop-cmd and --start-cmd")
	case (slices.Contains(c.Faults, FaultPause) || slices.Contains(c.Faults, FaultUnclean)) && (e.PauseCmd == "" || e.ResumeCmd == ""):
		return invalidf("the pause and unclean faults on an external cluster need --pause-cmd and --resume-cmd")
	}
	return nil
}

func faultList() string {
	var s []string
	for _, f := range Faults {
		s = append(s, string(f))
	}
	return strings.Join(s, ", ")
}

// topicNames returns the topics' names.
func (c Config) topicNames() []string {
	var out []string
	for i := range c.Topics {
		out = append(out, fmt.Sprintf("%s-%d", c.TopicPrefix, i))
	}
	return out
}
