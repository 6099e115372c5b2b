package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"syscall"
	"time"

	"github.com/weirmq/weir/bench"
)

// NodesConfig describes a cluster of `weir serve` processes started for
// another benchmark (bench/failover) with this package's node code: every
// node a voter, joined by gossip on loopback.
type NodesConfig struct {
	// WeirPath is the weir binary run as `weir serve`.
	WeirPath string
	// WeirArgs are appended to every `weir serve` command line.
	WeirArgs []string
	// WeirEnv holds "KEY=value" entries added to the nodes' environment.
	WeirEnv []string
	// TempDir holds the cluster's directory; empty means os.TempDir().
	TempDir string
	// Keep keeps the cluster's directory (data and logs) after Close.
	Keep bool
	// Nodes is the cluster size, at least 1.
	Nodes int
	// GossipProfile is `weir serve --gossip-profile` (fast, relaxed, lan).
	GossipProfile string
	// StartTimeout bounds a node's start and topic creation.
	StartTimeout time.Duration
	// Name names the cluster's directory.
	Name string
	// Logger receives progress lines; nil discards them.
	Logger *slog.Logger
	// Place, when set, places each node elsewhere than on loopback (in a
	// network namespace of its own, for bench/failover's partition
	// fault); nil keeps every node on 127.0.0.1 with free ports.
	Place func(id int32) Placement
}

// Placement is where a node runs when not on loopback.
type Placement struct {
	// Host is the IP address the node listens on, reachable from this
	// process: the Kafka listener on PlacedKafkaPort, gossip on
	// PlacedGossipPort and the actor remote on PlacedRemotePort.
	Host string
	// Wrap returns the command line that runs path with args there (ip
	// netns exec, for instance); nil runs it as it is.
	Wrap func(path string, args []string) (string, []string)
}

// The ports of a placed node, fixed since its address is its own.
const (
	PlacedKafkaPort  = 9092
	PlacedGossipPort = 7946
	PlacedRemotePort = 7947
)

// Nodes is a running cluster started by StartNodes. Its methods are safe
// for one caller at a time.
type Nodes struct {
	c *weirCluster
}

// PartitionState is one partition as a node's Metadata answer shows it;
// Leader is -1 while it has none.
type PartitionState struct {
	Topic     string
	Partition int32
	Leader    int32
	Epoch     int32
	Replicas  []int32
	ISR       []int32
}

// StartNodes starts cfg.Nodes `weir serve` processes in a fresh directory
// and waits until each printed its ready line.
func StartNodes(ctx context.Context, cfg NodesConfig) (*Nodes, error) {
	if cfg.WeirPath == "" || cfg.Nodes < 1 || cfg.GossipProfile == "" || cfg.StartTimeout <= 0 {
		return nil, bench.InvalidConfig(ErrInvalidConfig, "nodes: binary %q, %d nodes, profile %q, start timeout %v",
			cfg.WeirPath, cfg.Nodes, cfg.GossipProfile, cfg.StartTimeout)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cc := Config{WeirPath: cfg.WeirPath, WeirArgs: cfg.WeirArgs, WeirEnv: cfg.WeirEnv, TempDir: cfg.TempDir,
		Keep: cfg.Keep, Nodes: cfg.Nodes, GossipProfile: cfg.GossipProfile, StartTimeout: cfg.StartTimeout, place: cfg.Place}
	name := cfg.Name
	if name == "" {
		name = "nodes"
	}
	c, err := startCluster(ctx, cc, log, name)
	if err != nil {
		return nil, err
	}
	return &Nodes{c: c}, nil
}

// Close kills every node and removes the directory unless Keep was set.
func (n *Nodes) Close() { n.c.close() }

// Dir is the cluster's directory.
func (n *Nodes) Dir() string { return n.c.dir }

// IDs returns the node ids, 1..N.
func (n *Nodes) IDs() []int32 {
	var ids []int32
	for _, nd := range n.c.nodes {
		ids = append(ids, nd.id)
	}
	return ids
}

// Seeds returns every node's Kafka address.
func (n *Nodes) Seeds() []string { return n.c.seeds() }

// LogPath is node id's log file (every start's output, appended).
func (n *Nodes) LogPath(id int32) string { return n.get(id).logPth }

// Running reports whether node id's process is alive.
func (n *Nodes) Running(id int32) bool { return n.get(id).running() }

func (n *Nodes) get(id int32) *node {
	if id < 1 || int(id) > len(n.c.nodes) {
		panic(fmt.Sprintf("cluster: no node %d", id))
	}
	return n.c.node(id)
}

// Signal sends sig to node id's process group.
func (n *Nodes) Signal(id int32, sig syscall.Signal) error { return n.get(id).signal(sig) }

// Kill SIGKILLs node id and waits until it was reaped.
func (n *Nodes) Kill(id int32) { n.get(id).kill() }

// Start starts node id again (it must have exited), trying up to three
// times; problems lists the failed tries.
func (n *Nodes) Start(ctx context.Context, id int32) (problems []string, err error) {
	return n.c.restart(ctx, n.get(id))
}

// WaitExited waits until node id's process was reaped (after a SIGTERM),
// for at most timeout, and kills it then.
func (n *Nodes) WaitExited(ctx context.Context, id int32, timeout time.Duration) error {
	nd := n.get(id)
	nd.mu.Lock()
	exited := nd.exited
	nd.mu.Unlock()
	if exited == nil {
		return nil
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-exited:
		return nil
	case <-t.C:
		nd.kill()
		return fmt.Errorf("node %d did not exit within %v; killed", id, timeout)
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// LiveNode returns the lowest running node id not in except.
func (n *Nodes) LiveNode(except ...int32) (int32, error) {
	nd, err := n.c.liveNode(except...)
	if err != nil {
		return -1, err
	}
	return nd.id, nil
}

// Metadata asks node via for the partitions of topics.
func (n *Nodes) Metadata(ctx context.Context, via int32, topics []string) ([]PartitionState, error) {
	ps, err := n.c.metadata(ctx, n.get(via), topics)
	if err != nil {
		return nil, err
	}
	out := make([]PartitionState, 0, len(ps))
	for _, p := range ps {
		out = append(out, PartitionState{Topic: p.topic, Partition: p.partition, Leader: p.leader, Epoch: p.epoch, Replicas: p.replicas, ISR: p.isr})
	}
	return out, nil
}

// QuorumLeader returns the metadata quorum's leader as node via sees it
// (DescribeQuorum).
func (n *Nodes) QuorumLeader(ctx context.Context, via int32) (int32, error) {
	return n.c.quorumLeader(ctx, n.get(via))
}

// CreateTopics creates the topics through any node, retrying while the
// cluster forms, then waits until node 1 shows every partition with a
// full ISR.
func (n *Nodes) CreateTopics(ctx context.Context, names []string, partitions int32, rf int16, configs map[string]*string) error {
	if len(names) == 0 {
		return errors.New("cluster: no topic to create")
	}
	if err := n.c.createTopics(ctx, names, partitions, rf, configs); err != nil {
		return err
	}
	_, err := n.WaitInSync(ctx, names, len(names)*int(partitions), n.c.cfg.StartTimeout)
	return err
}

// WaitInSync waits until a running node shows every partition of topics
// (want in all) with a leader and a full ISR, and returns when it did.
func (n *Nodes) WaitInSync(ctx context.Context, topics []string, want int, timeout time.Duration) (time.Time, error) {
	return pollUntil(ctx, timeout, 50*time.Millisecond, fmt.Sprintf("%d partitions in sync", want), func(ctx context.Context) (bool, error) {
		via, err := n.c.liveNode()
		if err != nil {
			return false, err
		}
		ps, err := n.c.metadata(ctx, via, topics)
		if err != nil {
			return false, err
		}
		return allInSync(ps, want), nil
	})
}

// PollUntil calls check every `every` until it reports true and returns
// the time it did; errors of single checks are retried, and the last is
// quoted when timeout passes first.
func PollUntil(ctx context.Context, timeout, every time.Duration, what string, check func(context.Context) (bool, error)) (time.Time, error) {
	return pollUntil(ctx, timeout, every, what, check)
}
