//go:build !race

package clustertest_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirmq/weir/internal/clustertest"
)

// ledByPreferred reports whether every partition of topic is led by its
// preferred replica (the first of its assignment) with every replica in
// sync, in every running node's image.
func ledByPreferred(c *clustertest.Cluster, topic string) bool {
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
			p, _ := top.Partition(i)
			if p.Leader != p.Replicas[0] || len(p.ISR) != len(p.Replicas) {
				return false
			}
		}
	}
	return true
}

// TestClusterPreferredLeaders: the node leading the most partitions
// crashes, its leaderships move to the others, and once it is back and in
// sync the leaders' rebalance hands them back to it (Kafka's
// auto.leader.rebalance.enable), while an idempotent acks=all producer and
// an acks=1 producer keep writing. Nothing acknowledged is lost: every
// acks=all record exactly once in order, and every acks=1 record sent
// after the crash (a hand-over moves leadership only to a replica holding
// the leader's whole log; a crash may lose acks=1 records, a planned move
// never does). Leadership moving back at all shows the rebalance: an
// election never moves a partition that has a leader.
func TestClusterPreferredLeaders(t *testing.T) {
	c := clustertest.Start(t, clustertest.Options{Nodes: 3,
		Configs: map[string]string{"leader.imbalance.check.interval.seconds": "1"}})
	const topic = "balance"
	createTopic(t, c, topic, 6, 3)
	c.WaitFor(60*time.Second, "every partition led by its preferred replica", func() bool { return ledByPreferred(c, topic) })
	all, one := allAndOneProducers(t, c)

	// crashed is set once the victim is down: acks=1 records sent from then
	// on are named one-post-N and must all survive.
	var crashed atomic.Bool
	var gotAll, gotOne acked
	var oneAcked atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			r := &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "all-%06d", i)}
			if err := all.ProduceSync(context.Background(), r).FirstErr(); err == nil {
				gotAll.add(r)
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if !crashed.Load() {
				r := &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "one-pre-%06d", i)}
				_ = one.ProduceSync(context.Background(), r).FirstErr()
				continue
			}
			r := &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "one-post-%06d", i)}
			if err := one.ProduceSync(context.Background(), r).FirstErr(); err == nil {
				gotOne.add(r)
				oneAcked.Add(1)
			}
		}
	}()
	// acknowledgedMore waits until the acks=1 producer has had n more
	// records acknowledged.
	acknowledgedMore := func(n int64, what string) {
		from := oneAcked.Load()
		c.WaitFor(60*time.Second, what, func() bool { return oneAcked.Load() >= from+n })
	}

	victim := mostLeader(c, topic)
	c.Halt(victim)
	crashed.Store(true)
	c.WaitLeaders(topic, 30*time.Second)
	acknowledgedMore(50, "acks=1 records acknowledged by the survivors")
	c.Restart(victim)
	c.WaitFor(60*time.Second, "leaderships back with their preferred replicas", func() bool { return ledByPreferred(c, topic) })
	acknowledgedMore(50, "acks=1 records acknowledged after the rebalance")
	close(stop)
	wg.Wait()

	if gotAll.count() == 0 || gotOne.count() == 0 {
		t.Fatalf("acknowledged: %d acks=all, %d acks=1 after the crash", gotAll.count(), gotOne.count())
	}
	consume(t, c.Bootstrap(), topic, &gotAll, "all-", true)
	consume(t, c.Bootstrap(), topic, &gotOne, "one-post-", false)
}
