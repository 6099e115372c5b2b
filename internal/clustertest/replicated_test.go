package clustertest_test

import (
	"context"
	"fmt"
	"slices"
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
func produce(t *testing.T, cl *kgo.Client, topic, prefix string, n int, into *acked) {
	t.Helper()
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
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("produce: %v", firstErr)
	}
}

// consumeAll reads every partition of topic from the start until it has
// want records, and checks that each partition holds exactly the
// acknowledged records in order, once each.
func consumeAll(t *testing.T, seeds []string, topic string, want *acked) {
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
			got[r.Partition] = append(got[r.Partition], string(r.Value))
			n++
		})
	}
	want.mu.Lock()
	defer want.mu.Unlock()
	for p, recs := range want.recs {
		if !slices.Equal(got[p], recs) {
			t.Errorf("partition %d: read %d records, acknowledged %d; first difference at %d", p, len(got[p]), len(recs), firstDiff(got[p], recs))
		}
	}
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
	produce(t, cl, "replicated", "a", 300, &got)
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

// TestClusterFailover: the node leading the most partitions stops; the
// others elect new leaders, an idempotent acks=all producer keeps going,
// and every acknowledged record is read back once, in order. The node
// comes back, catches up and rejoins the ISRs.
func TestClusterFailover(t *testing.T) {
	c := clustertest.Start(t, clustertest.Options{Nodes: 3})
	createTopic(t, c, "failover", 6, 3)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got acked
	produce(t, cl, "failover", "before", 200, &got)

	top, _ := c.Image().Topic("failover")
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
	c.Stop(victim)
	c.WaitLeaders("failover", 30*time.Second)
	produce(t, cl, "failover", "after", 200, &got)
	consumeAll(t, c.Bootstrap(), "failover", &got)

	c.Restart(victim)
	c.WaitFor(60*time.Second, "the restarted node back in every ISR", func() bool {
		img := c.Node(victim).Image()
		t, _ := img.Topic("failover")
		for i := range t.NumPartitions() {
			if p, _ := t.Partition(i); !p.InISR(victim) {
				return false
			}
		}
		return true
	})
	produce(t, cl, "failover", "rejoined", 100, &got)
	consumeAll(t, c.Bootstrap(), "failover", &got)
}
