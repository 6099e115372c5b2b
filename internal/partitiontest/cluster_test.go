package partitiontest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/internal/harness"
	"github.com/weirmq/weir/internal/netns"
)

// The ports every node uses on its own address (each node has its own
// namespace, so they never collide).
const (
	kafkaPort  = 9092
	gossipPort = 7946
	remotePort = 7947
)

// requestTimeout bounds one request the test sends to one node; a node
// cut off from the others still answers its clients, so this is only a
// backstop against a hang.
const requestTimeout = 15 * time.Second

// node is one `weir serve` process in its own namespace.
type node struct {
	id    int32
	host  *netns.Host
	kafka string // Kafka listener, host:port
	data  string // data directory
	proc  *harness.Process
	// direct is a client whose only seed is this node; requests go
	// through its seed broker, so they reach this node and no other.
	direct *kgo.Client
}

// cluster is n weir nodes on a netns.Network, with the test process a
// client on the bridge.
type cluster struct {
	t     *testing.T
	net   *netns.Network
	nodes []*node // by id - 1
}

// startCluster starts n `weir serve` processes, node i+1 in host i of a
// new network, joined by gossip with the timing profile named ("relaxed"
// for tests), and waits until each serves and every node's metadata lists
// n brokers.
func startCluster(t *testing.T, n int, profile string) *cluster {
	t.Helper()
	nw := netns.New(t, n)
	c := &cluster{t: t, net: nw}
	var joins, voters []string
	for i, h := range nw.Hosts {
		joins = append(joins, h.HostPort(gossipPort))
		voters = append(voters, fmt.Sprint(i+1))
	}
	for i, h := range nw.Hosts {
		nd := &node{id: int32(i + 1), host: h, kafka: h.HostPort(kafkaPort), data: t.TempDir()}
		opts, err := harness.InNetns(h, harness.Options{
			Name: fmt.Sprintf("weir-node-%d", nd.id),
			Args: []string{"serve", "--node-id", fmt.Sprint(nd.id), "--data", nd.data,
				"--listen", nd.kafka, "--gossip-addr", h.HostPort(gossipPort), "--remote-addr", h.HostPort(remotePort),
				"--join", strings.Join(joins, ","), "--voters", strings.Join(voters, ","),
				"--gossip-profile", profile},
			ReadyLine: `weir serving node \d+ on`,
		})
		if err != nil {
			t.Fatal(err)
		}
		if nd.proc, err = harness.Spawn(t, opts); err != nil {
			t.Fatal(err)
		}
		if nd.direct, err = kgo.NewClient(kgo.SeedBrokers(nd.kafka), kgo.RequestRetries(0)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nd.direct.Close)
		c.nodes = append(c.nodes, nd)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, nd := range c.nodes {
		if err := nd.proc.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
	c.waitFor(30*time.Second, fmt.Sprintf("every node lists %d brokers", n), func() bool {
		for _, nd := range c.nodes {
			m, err := nd.metadata()
			if err != nil || len(m.Brokers) != n {
				return false
			}
		}
		return true
	})
	return c
}

// node returns the node with id.
func (c *cluster) node(id int32) *node { return c.nodes[id-1] }

// addrs returns the Kafka addresses of nodes, all of them when none are
// given.
func (c *cluster) addrs(nodes ...*node) []string {
	if len(nodes) == 0 {
		nodes = c.nodes
	}
	var out []string
	for _, nd := range nodes {
		out = append(out, nd.kafka)
	}
	return out
}

// others returns every node but nd.
func (c *cluster) others(nd *node) []*node {
	var out []*node
	for _, o := range c.nodes {
		if o != nd {
			out = append(out, o)
		}
	}
	return out
}

// waitFor polls cond every 50 ms until it holds, failing the test after
// timeout.
func (c *cluster) waitFor(timeout time.Duration, what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// createTopic creates topic with partitions, RF 3 and configs, and waits
// until every node sees every partition led with a full ISR.
func (c *cluster) createTopic(topic string, partitions int32, configs map[string]*string) {
	c.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs()...))
	if err != nil {
		c.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 3, configs, topic)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		c.t.Fatalf("create topic %s: %v", topic, err)
	}
	c.waitFor(30*time.Second, "every partition led with 3 in its ISR, on every node", func() bool {
		for _, nd := range c.nodes {
			parts, err := nd.partitions(topic)
			if err != nil || len(parts) != int(partitions) {
				return false
			}
			for _, p := range parts {
				if p.leader < 0 || len(p.isr) != 3 {
					return false
				}
			}
		}
		return true
	})
}

// partInfo is one partition as a node's metadata shows it.
type partInfo struct {
	id     int32
	leader int32
	epoch  int32
	isr    []int32
	code   int16
}

// metadata asks nd, and only nd, for its metadata of every topic.
func (nd *node) metadata() (*kmsg.MetadataResponse, error) {
	req := kmsg.NewPtrMetadataRequest()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	resp, err := nd.direct.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.MetadataResponse), nil
}

// partitions returns topic's partitions as nd's metadata shows them, by
// partition id.
func (nd *node) partitions(topic string) ([]partInfo, error) {
	m, err := nd.metadata()
	if err != nil {
		return nil, err
	}
	return topicPartitions(nd, m, topic)
}

// topicPartitions returns topic's partitions in m, nd's metadata, by
// partition id.
func topicPartitions(nd *node, m *kmsg.MetadataResponse, topic string) ([]partInfo, error) {
	for _, t := range m.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return nil, err
		}
		out := make([]partInfo, len(t.Partitions))
		for _, p := range t.Partitions {
			if int(p.Partition) >= len(out) {
				return nil, fmt.Errorf("node %d: partition %d of %d", nd.id, p.Partition, len(out))
			}
			isr := slices.Clone(p.ISR)
			slices.Sort(isr)
			out[p.Partition] = partInfo{id: p.Partition, leader: p.Leader, epoch: p.LeaderEpoch, isr: isr, code: p.ErrorCode}
		}
		return out, nil
	}
	return nil, fmt.Errorf("node %d: no topic %s in metadata", nd.id, topic)
}

// controller returns the controller id nd's metadata names.
func (nd *node) controller() (int32, error) {
	m, err := nd.metadata()
	if err != nil {
		return -1, err
	}
	return m.ControllerID, nil
}

// brokers returns the ids of the brokers nd's metadata lists (the
// unfenced ones).
func (nd *node) brokers() ([]int32, error) {
	m, err := nd.metadata()
	if err != nil {
		return nil, err
	}
	return brokerIDs(m), nil
}

// brokerIDs returns the ids of the brokers m lists, in order.
func brokerIDs(m *kmsg.MetadataResponse) []int32 {
	var ids []int32
	for _, b := range m.Brokers {
		ids = append(ids, b.NodeID)
	}
	slices.Sort(ids)
	return ids
}
