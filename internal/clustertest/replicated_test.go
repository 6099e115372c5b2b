//go:build !race

// The pinned protoactor remote races with itself when two remotes live in
// one process (its global grpclog logger, its endpoint manager), so these
// in-process cluster tests do not run under the race detector.

package clustertest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirmq/weir/internal/clustertest"
)

// The replicated cluster in one process (internal/clustertest): three
// nodes joined by gossip, with the relaxed timing profile. The tests
// assert safety (nothing acknowledged lost, duplicated or reordered), and
// wait on conditions, never on time.

// createTopic creates topic with partitions and replication factor rf
// through the cluster's Kafka API.
func createTopic(t *testing.T, c *clustertest.Cluster, topic string, partitions int32, rf int16) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, rf, nil, topic)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	c.WaitLeaders(topic, 30*time.Second)
}

// acked is what a producer had acknowledged, per partition in order.
type acked struct {
	mu   sync.Mutex
	recs map[int32][]string
}

func (a *acked) add(r *kgo.Record) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.recs == nil {
		a.recs = map[int32][]string{}
	}
	a.recs[r.Partition] = append(a.recs[r.Partition], string(r.Value))
}

func (a *acked) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, v := range a.recs {
		n += len(v)
	}
	return n
}

// produce sends n records with acks=all from an idempotent producer,
// values prefix-0.. in order, and records the acknowledged ones.
func produce(t *testing.T, c *clustertest.Cluster, cl *kgo.Client, topic, prefix string, n int, into *acked) {
	t.Helper()
	defer func() {
		if t.Failed() {
			t.Log(c.ReplicationState())
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for i := range n {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "%s-%06d", prefix, i)}, func(r *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				return
			}
			into.add(r)
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(45 * time.Second):
		t.Fatalf("produce: records not acknowledged within 45 s")
	}
	if firstErr != nil {
		t.Fatalf("produce: %v", firstErr)
	}
}

// consumeAll reads every partition of topic from the start until it has
// every acknowledged record, and checks that each partition holds exactly
// the acknowledged records in order, once each.
func consumeAll(t *testing.T, seeds []string, topic string, want *acked) {
	t.Helper()
	consume(t, seeds, topic, want, "", true)
}

// consume reads topic's records whose value starts with prefix until it
// has as many as want holds. exact: each partition holds exactly want's
// records, in order; otherwise (a producer without idempotence may write a
// retried record twice) each acknowledged record is there, in order of
// first appearance.
func consume(t *testing.T, seeds []string, topic string, want *acked, prefix string, exact bool) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got := map[int32][]string{}
	n := 0
	for n < want.count() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records", n, want.count())
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Logf("fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) {
			if !strings.HasPrefix(string(r.Value), prefix) {
				return
			}
			got[r.Partition] = append(got[r.Partition], string(r.Value))
			n++
		})
	}
	want.mu.Lock()
	defer want.mu.Unlock()
	for p, recs := range want.recs {
		have := got[p]
		if !exact {
			have = firstOccurrences(have)
			if missing := missingFrom(have, recs); len(missing) > 0 {
				t.Errorf("partition %d: %d acknowledged records lost, first %q", p, len(missing), missing[0])
				continue
			}
		}
		have = keepOnly(have, recs)
		if !slices.Equal(have, recs) {
			t.Errorf("partition %d: read %d records, acknowledged %d; first difference at %d", p, len(have), len(recs), firstDiff(have, recs))
		}
	}
}

func firstOccurrences(vs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func missingFrom(have, want []string) []string {
	in := map[string]bool{}
	for _, v := range have {
		in[v] = true
	}
	var out []string
	for _, v := range want {
		if !in[v] {
			out = append(out, v)
		}
	}
	return out
}

// keepOnly keeps the values of have that want holds (a record that failed
// for the producer may still have been written).
func keepOnly(have, want []string) []string {
	in := map[string]bool{}
	for _, v := range want {
		in[v] = true
	}
	var out []string
	for _, v := range have {
		if in[v] {
			out = append(out, v)
		}
	}
	return out
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestClusterReplicates: three nodes form a cluster; a topic with RF=3
// has every partition led, its ISR full, and acks=all records produced to
// it are read back, in order, from the cluster.
func TestClusterReplicates(t *testing.T) {
	c := clustertest.Start(t, clustertest.Options{Nodes: 3})
	c.WaitFor(30*time.Second, "three unfenced brokers in every image", func() bool {
		for _, id := range c.IDs() {
			img := c.Node(id).Image()
			n := 0
			for _, b := range img.Brokers() {
				if !b.Fenced {
					n++
				}
			}
			if n != 3 {
				return false
			}
		}
		return true
	})
	createTopic(t, c, "replicated", 6, 3)
	img := c.Image()
	top, _ := img.Topic("replicated")
	for i := range top.NumPartitions() {
		p, _ := top.Partition(i)
		if len(p.Replicas) != 3 || len(p.ISR) != 3 {
			t.Errorf("partition %d: replicas %v ISR %v, want 3 of each", i, p.Replicas, p.ISR)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got acked
	produce(t, c, cl, "replicated", "a", 300, &got)
	consumeAll(t, c.Bootstrap(), "replicated", &got)
	// Every follower copies the leader's records.
	c.WaitFor(30*time.Second, "every replica at its leader's log end", func() bool {
		for i := range top.NumPartitions() {
			p, _ := c.Image().Partition(top.ID(), i)
			lead := c.Node(p.Leader).Replica(top.ID(), i).Status().LogEndOffset
			for _, r := range p.Replicas {
				if c.Node(r).Replica(top.ID(), i).Status().LogEndOffset != lead {
					return false
				}
			}
		}
		return true
	})
}

// TestClusterFailover: the node leading the most partitions crashes
// (halted: no controlled shutdown); the others elect new leaders, an
// idempotent acks=all producer keeps going, and every acknowledged record
// is read back once, in order. The node comes back, catches up and
// rejoins the ISRs.
func TestClusterFailover(t *testing.T) {
	failover(t, "crash", (*clustertest.Cluster).Halt)
}

// TestClusterControlledShutdown: the same with a graceful stop, which
// hands each leadership to an in-sync follower first.
func TestClusterControlledShutdown(t *testing.T) {
	failover(t, "shutdown", (*clustertest.Cluster).Stop)
}

func failover(t *testing.T, topic string, stop func(*clustertest.Cluster, int32)) {
	c := clustertest.Start(t, clustertest.Options{Nodes: 3})
	createTopic(t, c, topic, 6, 3)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got acked
	produce(t, c, cl, topic, "before", 200, &got)

	victim := mostLeader(c, topic)
	stop(c, victim)
	c.WaitLeaders(topic, 30*time.Second)
	produce(t, c, cl, topic, "after", 200, &got)
	consumeAll(t, c.Bootstrap(), topic, &got)

	c.Restart(victim)
	waitFullISR(t, c, topic)
	produce(t, c, cl, topic, "rejoined", 100, &got)
	consumeAll(t, c.Bootstrap(), topic, &got)
}

// mostLeader returns the node leading the most partitions of topic.
func mostLeader(c *clustertest.Cluster, topic string) int32 {
	top, _ := c.Image().Topic(topic)
	counts := map[int32]int{}
	for i := range top.NumPartitions() {
		p, _ := top.Partition(i)
		counts[p.Leader]++
	}
	victim := int32(1)
	for id, n := range counts {
		if n > counts[victim] {
			victim = id
		}
	}
	return victim
}

// waitFullISR waits until every partition of topic has every replica in
// its ISR, in every running node's image.
func waitFullISR(t *testing.T, c *clustertest.Cluster, topic string) {
	t.Helper()
	c.WaitFor(60*time.Second, "every replica of "+topic+" in sync", func() bool {
		for _, id := range c.IDs() {
			n := c.Node(id)
			if n == nil {
				return false
			}
			top, ok := n.Image().Topic(topic)
			if !ok {
				return false
			}
			for i := range top.NumPartitions() {
				if p, _ := top.Partition(i); len(p.ISR) != len(p.Replicas) || !p.HasLeader() {
					return false
				}
			}
		}
		return true
	})
}

// allAndOneProducers returns an idempotent acks=all producer and a plain
// acks=1 one, closed when the test ends.
func allAndOneProducers(t *testing.T, c *clustertest.Cluster) (all, one *kgo.Client) {
	t.Helper()
	all, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(all.Close)
	one, err = kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.RequiredAcks(kgo.LeaderAck()),
		kgo.DisableIdempotentWrite())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(one.Close)
	return all, one
}

// TestClusterRollingRestart: each node in turn is stopped gracefully and
// started again, waiting until nothing is under-replicated, while two
// producers keep writing: an idempotent acks=all one and an acks=1 one.
// Nothing acknowledged is lost (acks=1 included: a planned move hands
// over only to a replica holding the leader's whole log), and the
// idempotent producer's records appear once each, in order.
func TestClusterRollingRestart(t *testing.T) {
	c := clustertest.Start(t, clustertest.Options{Nodes: 3})
	createTopic(t, c, "rolling", 6, 3)
	all, one := allAndOneProducers(t, c)

	var gotAll, gotOne acked
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, p := range []struct {
		cl     *kgo.Client
		prefix string
		into   *acked
	}{{all, "all", &gotAll}, {one, "one", &gotOne}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				// One at a time, so a record is acknowledged or failed
				// before the next is sent.
				r := &kgo.Record{Topic: "rolling", Value: fmt.Appendf(nil, "%s-%06d", p.prefix, i)}
				if err := p.cl.ProduceSync(context.Background(), r).FirstErr(); err == nil {
					p.into.add(r)
				}
			}
		}()
	}
	for _, id := range c.IDs() {
		c.Stop(id)
		c.WaitLeaders("rolling", 30*time.Second)
		c.Restart(id)
		waitFullISR(t, c, "rolling")
	}
	close(stop)
	wg.Wait()
	if gotAll.count() == 0 || gotOne.count() == 0 {
		t.Fatalf("acknowledged: %d acks=all, %d acks=1", gotAll.count(), gotOne.count())
	}
	consume(t, c.Bootstrap(), "rolling", &gotAll, "all-", true)
	consume(t, c.Bootstrap(), "rolling", &gotOne, "one-", false)
}
