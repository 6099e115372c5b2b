package partitiontest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// waitLogsMatch waits until, for every partition of the cut topic, every
// replica's log in its data directory equals the leader's, and returns
// the logs by partition.
func (c *cluster) waitLogsMatch(timeout time.Duration) map[int32][]entry {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		logs, why := c.logsMatch()
		if why == "" {
			return logs
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("replica logs differ after %v: %s", timeout, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logsMatch returns the leaders' logs, or why the replicas differ.
func (c *cluster) logsMatch() (map[int32][]entry, string) {
	ps, err := c.nodes[0].partitions(cutTopic)
	if err != nil {
		return nil, err.Error()
	}
	out := map[int32][]entry{}
	for _, p := range ps {
		if p.leader < 0 {
			return nil, fmt.Sprintf("partition %d has no leader", p.id)
		}
		lead, err := c.node(p.leader).replicaLog(cutTopic, p.id)
		if err != nil {
			return nil, err.Error()
		}
		for _, nd := range c.nodes {
			got, err := nd.replicaLog(cutTopic, p.id)
			if err != nil {
				return nil, err.Error()
			}
			if i := firstDifference(got, lead); i >= 0 {
				return nil, fmt.Sprintf("partition %d: node %d holds %d records, leader %d holds %d; first difference at index %d (%v vs %v)",
					p.id, nd.id, len(got), p.leader, len(lead), i, at(got, i), at(lead, i))
			}
		}
		out[p.id] = lead
	}
	return out, ""
}

// at returns es[i], or "end" past its end, for messages.
func at(es []entry, i int) any {
	if i < len(es) {
		return es[i]
	}
	return "end"
}

// consumeAll reads every partition of the cut topic from the start to its
// end offset through the whole cluster, by partition.
func (c *cluster) consumeAll() map[int32][]entry {
	c.t.Helper()
	admin, err := kgo.NewClient(kgo.SeedBrokers(c.addrs()...))
	if err != nil {
		c.t.Fatal(err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(admin).ListEndOffsets(ctx, cutTopic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		c.t.Fatal(err)
	}
	want := map[int32]int64{}
	offsets := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) {
		want[o.Partition] = o.Offset
		offsets[o.Partition] = kgo.NewOffset().At(0)
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs()...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cutTopic: offsets}))
	if err != nil {
		c.t.Fatal(err)
	}
	defer cl.Close()
	out := map[int32][]entry{}
	done := func() bool {
		for p, end := range want {
			if n := len(out[p]); end > 0 && (n == 0 || out[p][n-1].offset < end-1) {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			c.t.Fatalf("consume: not every partition read to its end offset %v within 30s", want)
		}
		fs.EachError(func(_ string, p int32, err error) { c.t.Logf("consume partition %d: %v", p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			out[r.Partition] = append(out[r.Partition], entry{offset: r.Offset, value: string(r.Value), epoch: r.LeaderEpoch})
		})
	}
	return out
}

// firstFailures returns the first few failures the producer saw.
func (p *clusterProducer) firstFailures() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.failed) == 0 {
		return "none"
	}
	return strings.Join(p.failed, "; ")
}
