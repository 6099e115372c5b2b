package clustertest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirmq/weir/cluster"
	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/internal/harness"
)

// Options shape a test cluster.
type Options struct {
	// Nodes is the number of voters, ids 1..Nodes. Default 3.
	Nodes int
	// Learners is the number of nodes outside controller.quorum.voters,
	// ids Nodes+1..Nodes+Learners: metadata quorum learners.
	Learners int
	// MetadataSnapshotEntries, when set, is every node's metadata
	// snapshot interval in applied entries (cluster.Config's test seam).
	MetadataSnapshotEntries uint64
	// Configs are broker configs every node gets (over the harness's:
	// gossip.profile=relaxed and the addresses).
	Configs map[string]string
	// Log, when set, receives every node's log lines (else discarded
	// unless WEIR_TEST_LOG is set).
	Log io.Writer
}

// Cluster is a running test cluster.
type Cluster struct {
	t     testing.TB
	opts  Options
	mu    sync.Mutex
	nodes map[int32]*member
	// gossip are the nodes' fixed gossip addresses (the join list).
	gossip map[int32]string
	kafka  map[int32]string
}

// member is one node's slot: its fixed addresses and data directory, and
// the running node if up.
type member struct {
	id     int32
	dir    string
	node   *cluster.Node
	system *actor.ActorSystem
}

// Start starts a cluster and waits until every node is ready; everything
// is stopped when the test ends.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.Nodes == 0 {
		opts.Nodes = 3
	}
	c := &Cluster{t: t, opts: opts, nodes: map[int32]*member{}, gossip: map[int32]string{}, kafka: map[int32]string{}}
	total := opts.Nodes + opts.Learners
	ports := harness.FreePorts(t, 2*total)
	for i := range total {
		id := int32(i + 1)
		c.gossip[id] = harness.Addr(ports[2*i])
		c.kafka[id] = harness.Addr(ports[2*i+1])
		c.nodes[id] = &member{id: id, dir: t.TempDir()}
	}
	t.Cleanup(c.StopAll)
	// The nodes start together, as a cluster's processes do: each waits
	// for a quorum of voters.
	errs := make(chan error, total)
	for id := range c.nodes {
		go func() { errs <- c.start(id) }()
	}
	for range total {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// IDs returns the node ids, voters and learners, ascending.
func (c *Cluster) IDs() []int32 {
	ids := make([]int32, 0, len(c.nodes))
	for i := range c.opts.Nodes + c.opts.Learners {
		ids = append(ids, int32(i+1))
	}
	return ids
}

// Voters returns the voters' ids (controller.quorum.voters), ascending.
func (c *Cluster) Voters() []int32 { return c.IDs()[:c.opts.Nodes] }

// Node returns node id's running node, or nil while it is down.
func (c *Cluster) Node(id int32) *cluster.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[id].node
}

// Bootstrap returns the Kafka addresses of the running nodes, for a
// client's seed brokers.
func (c *Cluster) Bootstrap() []string {
	var out []string
	for _, id := range c.IDs() {
		if c.Node(id) != nil {
			out = append(out, c.kafka[id])
		}
	}
	return out
}

// KafkaAddr returns node id's Kafka listener address (fixed across restarts).
func (c *Cluster) KafkaAddr(id int32) string { return c.kafka[id] }

// Restart starts node id again on its data directory and waits until it
// is ready.
func (c *Cluster) Restart(id int32) {
	c.t.Helper()
	if err := c.start(id); err != nil {
		c.t.Fatal(err)
	}
}

func (c *Cluster) start(id int32) error {
	m := c.nodes[id]
	b := config.NewBroker()
	voters := make([]string, 0, c.opts.Nodes)
	joins := make([]string, 0, c.opts.Nodes)
	for _, v := range c.Voters() {
		voters = append(voters, strconv.Itoa(int(v)))
	}
	for _, v := range c.IDs() {
		joins = append(joins, c.gossip[v])
	}
	props := map[string]string{
		"node.id":                  strconv.Itoa(int(id)),
		"log.dirs":                 m.dir,
		"gossip.listener":          c.gossip[id],
		"gossip.join":              strings.Join(joins, ","),
		"gossip.profile":           "relaxed",
		"controller.quorum.voters": strings.Join(voters, ","),
		"remote.listener":          "127.0.0.1:0",
		"listeners":                "PLAINTEXT://" + c.kafka[id],
	}
	maps.Copy(props, c.opts.Configs)
	for k, v := range props {
		if err := b.Override(k, v); err != nil {
			return fmt.Errorf("clustertest: node %d: %s: %w", id, k, err)
		}
	}
	ln, err := listen(c.kafka[id])
	if err != nil {
		return fmt.Errorf("clustertest: node %d: %w", id, err)
	}
	cfg := cluster.NewConfig(b)
	cfg.Listener = ln
	cfg.Logger = c.logger(id)
	cfg.MetadataSnapshotEntries = c.opts.MetadataSnapshotEntries
	system := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	n, err := cluster.StartNode(system, cfg)
	if err != nil {
		system.Shutdown()
		return fmt.Errorf("clustertest: start node %d: %w", id, err)
	}
	c.mu.Lock()
	m.node, m.system = n, system
	c.mu.Unlock()
	return nil
}

// listen binds addr, retrying briefly: a restarted node's port may still
// be held by the connections of its previous run.
func listen(addr string) (net.Listener, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil || time.Now().After(deadline) {
			return ln, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *Cluster) logger(id int32) *slog.Logger {
	w := c.opts.Log
	if w == nil && os.Getenv("WEIR_TEST_LOG") != "" {
		w = os.Stderr
	}
	if w == nil {
		w = io.Discard
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})).With("test_node", id)
}

// Stop stops node id gracefully: a controlled shutdown, and it leaves the
// gossip.
func (c *Cluster) Stop(id int32) {
	c.t.Helper()
	c.down(id, "stop", (*cluster.Node).Stop)
}

// Halt stops node id as a crash looks to the others (cluster.Node.Halt:
// no controlled shutdown, no gossip leave).
func (c *Cluster) Halt(id int32) {
	c.t.Helper()
	c.down(id, "halt", (*cluster.Node).Halt)
}

// down takes node id down with stop and shuts its actor system down.
func (c *Cluster) down(id int32, what string, stop func(*cluster.Node) error) {
	c.t.Helper()
	c.mu.Lock()
	m := c.nodes[id]
	n, system := m.node, m.system
	m.node, m.system = nil, nil
	c.mu.Unlock()
	if n == nil {
		return
	}
	if err := stop(n); err != nil {
		c.t.Errorf("%s node %d: %v", what, id, err)
	}
	system.Shutdown()
}

// StopAll stops every running node.
func (c *Cluster) StopAll() {
	for _, id := range c.IDs() {
		c.Stop(id)
	}
}

// WaitFor waits until cond holds, checking every 20 ms, for at most
// timeout; it fails the test with what otherwise.
func (c *Cluster) WaitFor(timeout time.Duration, what string, cond func() bool) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			c.t.Fatalf("clustertest: %s: not within %v", what, timeout)
		case <-tick.C:
		}
	}
}

// Image returns the metadata image of a running node (the lowest id up).
func (c *Cluster) Image() *metadata.Image {
	for _, id := range c.IDs() {
		if n := c.Node(id); n != nil {
			return n.Image()
		}
	}
	return nil
}

// WaitLeaders waits until every partition of topic has a leader that is
// up, and every running node's image agrees.
func (c *Cluster) WaitLeaders(topic string, timeout time.Duration) {
	c.t.Helper()
	c.WaitFor(timeout, "every partition of "+topic+" led by a live node", func() bool {
		var first *metadata.Image
		for _, id := range c.IDs() {
			n := c.Node(id)
			if n == nil {
				continue
			}
			img := n.Image()
			t, ok := img.Topic(topic)
			if !ok {
				return false
			}
			for i := range t.NumPartitions() {
				p, _ := t.Partition(i)
				if !p.HasLeader() || c.Node(p.Leader) == nil {
					return false
				}
			}
			if first == nil {
				first = img
			} else if tf, _ := first.Topic(topic); !samePartitions(tf, t) {
				return false
			}
		}
		return first != nil
	})
}

func samePartitions(a, b *metadata.Topic) bool {
	if a.NumPartitions() != b.NumPartitions() {
		return false
	}
	for i := range a.NumPartitions() {
		pa, _ := a.Partition(i)
		pb, _ := b.Partition(i)
		if pa.Leader != pb.Leader || pa.LeaderEpoch != pb.LeaderEpoch {
			return false
		}
	}
	return true
}

// ReplicationState is every running node's cluster.Node.ReplicationState.
func (c *Cluster) ReplicationState() string {
	var b strings.Builder
	for _, id := range c.IDs() {
		if n := c.Node(id); n != nil {
			b.WriteString(n.ReplicationState())
		}
	}
	return b.String()
}
