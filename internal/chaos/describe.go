package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// requestTimeout bounds one admin request to one node.
const requestTimeout = 5 * time.Second

// Partition is one partition as a node's Metadata answer shows it.
type Partition struct {
	Partition   int32
	Leader      int32 // -1: no leader
	LeaderEpoch int32
	Replicas    []int32
	ISR         []int32
	// Err is the partition's error code as an error (LEADER_NOT_AVAILABLE
	// for a leaderless partition), nil for none.
	Err error
}

// InISR reports whether node is in the partition's ISR.
func (p Partition) InISR(node int32) bool { return slices.Contains(p.ISR, node) }

func (p Partition) String() string {
	s := fmt.Sprintf("p%d leader %d epoch %d replicas %v isr %v", p.Partition, p.Leader, p.LeaderEpoch, p.Replicas, p.ISR)
	if p.Err != nil {
		s += " (" + p.Err.Error() + ")"
	}
	return s
}

// admin returns node id's admin client: seeded with that node only, so
// requests through its seed broker go to that node and no other.
func (c *Cluster) admin(id int32) (*kgo.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[id]
	if n.admin != nil {
		return n.admin, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.kafka), kgo.RequestRetries(0))
	if err != nil {
		return nil, fmt.Errorf("chaos: admin client for node %d: %w", id, err)
	}
	n.admin = cl
	return cl, nil
}

// Describe returns topic's partitions as node id serves them in Metadata,
// in partition order.
func (c *Cluster) Describe(ctx context.Context, id int32, topic string) ([]Partition, error) {
	cl, err := c.admin(id)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("chaos: metadata from node %d: %w", id, err)
	}
	mr := resp.(*kmsg.MetadataResponse)
	if len(mr.Topics) != 1 {
		return nil, fmt.Errorf("chaos: metadata from node %d: %d topics, want 1", id, len(mr.Topics))
	}
	t := mr.Topics[0]
	if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
		return nil, fmt.Errorf("chaos: metadata from node %d: topic %s: %w", id, topic, err)
	}
	out := make([]Partition, 0, len(t.Partitions))
	for _, p := range t.Partitions {
		out = append(out, Partition{Partition: p.Partition, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch,
			Replicas: slices.Clone(p.Replicas), ISR: slices.Clone(p.ISR), Err: kerr.ErrorForCode(p.ErrorCode)})
	}
	slices.SortFunc(out, func(a, b Partition) int { return int(a.Partition - b.Partition) })
	return out, nil
}

// Leaders returns the leader of each of topic's partitions (-1 for none)
// as kadm reads them from the live nodes' Metadata.
func (c *Cluster) Leaders(ctx context.Context, topic string) (map[int32]int32, error) {
	live := c.LiveAddrs()
	if len(live) == 0 {
		return nil, fmt.Errorf("chaos: leaders of %s: no node is up", topic)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(live...))
	if err != nil {
		return nil, fmt.Errorf("chaos: leaders of %s: %w", topic, err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	md, err := kadm.NewClient(cl).Metadata(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("chaos: leaders of %s: %w", topic, err)
	}
	td, ok := md.Topics[topic]
	if !ok {
		return nil, fmt.Errorf("chaos: leaders of %s: topic not in metadata", topic)
	}
	if td.Err != nil {
		return nil, fmt.Errorf("chaos: leaders of %s: %w", topic, td.Err)
	}
	out := map[int32]int32{}
	for p, pd := range td.Partitions {
		out[p] = pd.Leader
	}
	return out, nil
}

// View is topic's partitions as each live node serves them.
type View map[int32][]Partition

// View asks every live node for topic's partitions; a node that fails to
// answer is missing from the result, and its error is joined into err.
func (c *Cluster) View(ctx context.Context, topic string) (View, error) {
	v := View{}
	var errs []string
	for _, id := range c.Live() {
		ps, err := c.Describe(ctx, id, topic)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		v[id] = ps
	}
	if len(errs) > 0 {
		return v, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return v, nil
}

// Agreed returns the partitions every node of v shows identically
// (leader, leader epoch, ISR), or false with the disagreement.
func (v View) Agreed() ([]Partition, string, bool) {
	var first []Partition
	var firstID int32
	for id, ps := range v {
		if first == nil {
			first, firstID = ps, id
			continue
		}
		if len(ps) != len(first) {
			return nil, fmt.Sprintf("node %d shows %d partitions, node %d %d", id, len(ps), firstID, len(first)), false
		}
		for i := range ps {
			a, b := ps[i], first[i]
			if a.Leader != b.Leader || a.LeaderEpoch != b.LeaderEpoch || !slices.Equal(sorted(a.ISR), sorted(b.ISR)) {
				return nil, fmt.Sprintf("node %d shows %v, node %d %v", id, a, firstID, b), false
			}
		}
	}
	if first == nil {
		return nil, "no node answered", false
	}
	return first, "", true
}

func sorted(s []int32) []int32 {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// WaitFor polls cond every 100 ms until it holds, for at most timeout,
// and fails the test with what and cond's last explanation otherwise.
func (c *Cluster) WaitFor(timeout time.Duration, what string, cond func() (ok bool, why string)) {
	c.t.Helper()
	if why, ok := waitFor(timeout, cond); !ok {
		c.t.Fatalf("chaos: %s: not within %v: %s", what, timeout, why)
	}
}

// waitFor polls cond every 100 ms until it holds or timeout passes, and
// returns cond's last explanation.
func waitFor(timeout time.Duration, cond func() (bool, string)) (string, bool) {
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return "", true
		}
		if time.Now().After(deadline) {
			return why, false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Settled reports whether every live node shows every partition of topic
// led by a live node, with the same leader and epoch, and pred holding on
// each partition (nil: no more); why says what is missing.
func (c *Cluster) Settled(topic string, pred func(Partition) (bool, string)) (bool, string) {
	v, err := c.View(context.Background(), topic)
	if err != nil {
		return false, err.Error()
	}
	ps, why, ok := v.Agreed()
	if !ok {
		return false, why
	}
	live := c.Live()
	for _, p := range ps {
		if p.Err != nil || !slices.Contains(live, p.Leader) {
			return false, fmt.Sprintf("%v: not led by a live node %v", p, live)
		}
		if pred != nil {
			if ok, why := pred(p); !ok {
				return false, fmt.Sprintf("%v: %s", p, why)
			}
		}
	}
	return true, ""
}

// WaitLeaders waits until every live node shows every partition of topic
// led by a live node, and all agree.
func (c *Cluster) WaitLeaders(topic string, timeout time.Duration) {
	c.t.Helper()
	c.WaitFor(timeout, "every partition of "+topic+" led by a live node", func() (bool, string) {
		return c.Settled(topic, nil)
	})
}

// WaitInISR waits until node is in the ISR of every partition of topic
// (and every partition is led, as WaitLeaders).
func (c *Cluster) WaitInISR(topic string, node int32, timeout time.Duration) {
	c.t.Helper()
	c.WaitFor(timeout, fmt.Sprintf("node %d in every ISR of %s", node, topic), func() (bool, string) {
		return c.Settled(topic, func(p Partition) (bool, string) {
			return p.InISR(node), fmt.Sprintf("node %d not in the ISR", node)
		})
	})
}

// WaitFullISR waits until every partition of topic has all its replicas
// in the ISR.
func (c *Cluster) WaitFullISR(topic string, timeout time.Duration) {
	c.t.Helper()
	c.WaitFor(timeout, "every ISR of "+topic+" full", func() (bool, string) {
		return c.Settled(topic, func(p Partition) (bool, string) {
			return len(p.ISR) == len(p.Replicas), "ISR not full"
		})
	})
}

// MostLeader returns the node leading the most partitions of topic (the
// lowest id on a tie), as a live node shows them.
func (c *Cluster) MostLeader(topic string) int32 {
	c.t.Helper()
	var ps []Partition
	c.WaitFor(30*time.Second, "the leaders of "+topic, func() (bool, string) {
		v, err := c.View(context.Background(), topic)
		if err != nil {
			return false, err.Error()
		}
		var why string
		var ok bool
		ps, why, ok = v.Agreed()
		return ok, why
	})
	counts := map[int32]int{}
	for _, p := range ps {
		if p.Leader >= 0 {
			counts[p.Leader]++
		}
	}
	best := int32(-1)
	for _, id := range c.IDs() {
		if counts[id] > 0 && (best < 0 || counts[id] > counts[best]) {
			best = id
		}
	}
	if best < 0 {
		c.t.Fatalf("chaos: no partition of %s has a leader: %v", topic, ps)
	}
	return best
}

// TopicSpec describes a topic for CreateTopic.
type TopicSpec struct {
	Name string
	// Partitions and ReplicationFactor, unless Assignment is set.
	Partitions        int32
	ReplicationFactor int16
	// Assignment, when set, places partition i on Assignment[i] (the
	// first replica is the preferred leader).
	Assignment [][]int32
	// Configs are topic configs, e.g. min.insync.replicas.
	Configs map[string]string
}

// CreateTopic creates a topic through the live nodes and waits until
// every partition is led and its ISR full.
func (c *Cluster) CreateTopic(spec TopicSpec) {
	c.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.LiveAddrs()...))
	if err != nil {
		c.t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = spec.Name
	rt.NumPartitions, rt.ReplicationFactor = spec.Partitions, spec.ReplicationFactor
	if spec.Assignment != nil {
		rt.NumPartitions, rt.ReplicationFactor = -1, -1
		for i, replicas := range spec.Assignment {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = int32(i), replicas
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
		}
	}
	for k, v := range spec.Configs {
		cfg := kmsg.NewCreateTopicsRequestTopicConfig()
		cfg.Name, cfg.Value = k, kmsg.StringPtr(v)
		rt.Configs = append(rt.Configs, cfg)
	}
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		c.t.Fatalf("chaos: create topic %s: %v", spec.Name, err)
	}
	if len(resp.Topics) != 1 {
		c.t.Fatalf("chaos: create topic %s: %d topics in the answer", spec.Name, len(resp.Topics))
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		msg := ""
		if m := resp.Topics[0].ErrorMessage; m != nil {
			msg = ": " + *m
		}
		c.t.Fatalf("chaos: create topic %s: %v%s", spec.Name, err, msg)
	}
	c.WaitFullISR(spec.Name, 60*time.Second)
}
