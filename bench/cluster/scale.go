package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ScaleResult is the scale scenario's outcome. Durations are -1 when the
// step did not finish within its bound (see Problems).
type ScaleResult struct {
	Topics, PartitionsPerTopic int
	// Created runs from the CreateTopics request until every partition
	// had a leader, CreatedInSync until every ISR was full.
	Created, CreatedInSync time.Duration
	// LeadersAfterCreate counts the partitions each node led once every
	// ISR was full after the creation (index: node id - 1).
	LeadersAfterCreate []int
	// RSS is each node's VmRSS in bytes after Config.ScaleSettle idle.
	RSS []int64
	// IdleCPU is each node's CPU use over Config.IdleWindow, in cores.
	IdleCPU    []float64
	IdleWindow time.Duration
	// Victim, SIGKILLed, led Led partitions; Moved runs from the kill
	// until a survivor's Metadata showed every partition led by a live
	// node, Rejoin from its restart until every ISR was full again.
	Victim        int32
	Led           int
	Moved, Rejoin time.Duration
	// Detected and Fenced are from the survivors' logs, as in Round.
	Detected, Fenced time.Duration
	// ColdLed runs from starting all nodes of the stopped cluster (every
	// node SIGKILLed) until Metadata showed every partition led with a
	// newer leader epoch than before; ColdWritable until a producer had
	// one record acknowledged (acks=all) on every partition; ColdInSync
	// until every ISR was full.
	ColdLed, ColdWritable, ColdInSync time.Duration
	// RSSAfterCold is each node's VmRSS after the cold start and
	// Config.ScaleSettle idle.
	RSSAfterCold []int64
	Problems     []string
}

// runScale runs the scale scenario on a fresh cluster.
func (r *runner) runScale(ctx context.Context) (*ScaleResult, error) {
	cfg := r.cfg
	res := &ScaleResult{Topics: cfg.ScaleTopics, PartitionsPerTopic: cfg.ScalePartitions, IdleWindow: cfg.IdleWindow,
		Created: -1, CreatedInSync: -1, Moved: -1, Rejoin: -1, ColdLed: -1, ColdWritable: -1, ColdInSync: -1}
	c, err := startCluster(ctx, cfg, r.log, "scale")
	if err != nil {
		return res, err
	}
	defer c.close()
	var names []string
	for i := range cfg.ScaleTopics {
		names = append(names, fmt.Sprintf("scale-%03d", i))
	}
	want := cfg.ScaleTopics * cfg.ScalePartitions
	// A metadata answer for thousands of partitions takes milliseconds;
	// poll no faster than every 50 ms outside the kill.
	slow := max(cfg.PollEvery, 50*time.Millisecond)
	mir := "2"
	start := time.Now()
	if err := c.createTopics(ctx, names, int32(cfg.ScalePartitions), 3, map[string]*string{"min.insync.replicas": &mir}); err != nil {
		return res, err
	}
	probe := c.nodes[0]
	led, err := pollUntil(ctx, cfg.StartTimeout, slow, fmt.Sprintf("%d partitions led", want), func(ctx context.Context) (bool, error) {
		ps, err := c.metadata(ctx, probe, names)
		return err == nil && allLed(ps, want, -1), err
	})
	if err != nil {
		return res, err
	}
	res.Created = led.Sub(start)
	synced, err := c.waitInSync(ctx, probe, names, want, cfg.StartTimeout, slow)
	if err != nil {
		return res, err
	}
	res.CreatedInSync = synced.Sub(start)
	if ps, err := c.metadata(ctx, probe, names); err == nil {
		counts := leaderCounts(ps)
		for id := int32(1); id <= int32(len(c.nodes)); id++ {
			res.LeadersAfterCreate = append(res.LeadersAfterCreate, counts[id])
		}
	}
	r.log.Info("scale: created", "partitions", want, "led", res.Created, "in_sync", res.CreatedInSync, "leaders", res.LeadersAfterCreate)

	if err := sleepCtx(ctx, cfg.ScaleSettle); err != nil {
		return res, err
	}
	if res.RSS, err = readRSSAll(c); err != nil {
		return res, err
	}
	if res.IdleCPU, err = idleCPU(ctx, c, cfg.IdleWindow); err != nil {
		return res, err
	}
	r.log.Info("scale: idle", "rss", res.RSS, "cpu_cores", res.IdleCPU)

	// SIGKILL the node leading the most partitions.
	ps, err := c.metadata(ctx, probe, names)
	if err != nil {
		return res, err
	}
	res.Victim, res.Led = mostLeader(ps, len(c.nodes))
	victim := c.node(res.Victim)
	survivor, err := c.liveNode(res.Victim)
	if err != nil {
		return res, err
	}
	killed := time.Now()
	victim.kill()
	moved, err := pollUntil(ctx, cfg.RoundTimeout, cfg.PollEvery, fmt.Sprintf("%d partitions led by live nodes", want), func(ctx context.Context) (bool, error) {
		ps, err := c.metadata(ctx, survivor, names)
		return err == nil && allLed(ps, want, res.Victim), err
	})
	if err == nil {
		res.Moved = moved.Sub(killed)
	} else {
		res.Problems = append(res.Problems, err.Error())
	}
	tl := readTimeline(c, res.Victim, killed)
	res.Detected, res.Fenced = after(tl.detected, killed), after(tl.fenced, killed)
	back := time.Now()
	probs, err := c.restart(ctx, victim)
	res.Problems = append(res.Problems, probs...)
	if err != nil {
		return res, err
	}
	if synced, err := c.waitInSync(ctx, survivor, names, want, cfg.StartTimeout, slow); err == nil {
		res.Rejoin = synced.Sub(back)
	} else {
		res.Problems = append(res.Problems, err.Error())
	}
	r.log.Info("scale: kill", "victim", res.Victim, "led", res.Led, "moved", res.Moved, "rejoin", res.Rejoin)

	// Cold start: every node killed, then all started at once.
	before, err := c.metadata(ctx, probe, names)
	if err != nil {
		return res, err
	}
	epochs := map[[2]any]int32{}
	for _, p := range before {
		epochs[[2]any{p.topic, p.partition}] = p.epoch
	}
	for _, n := range c.nodes {
		n.kill()
	}
	start = time.Now()
	if err := c.startAll(ctx); err != nil {
		res.Problems = append(res.Problems, fmt.Sprintf("cold start: %v", err))
		for _, n := range c.nodes {
			if !n.running() {
				probs, err := c.restart(ctx, n)
				res.Problems = append(res.Problems, probs...)
				if err != nil {
					return res, err
				}
			}
		}
	}
	ledAgain, err := pollUntil(ctx, cfg.StartTimeout, slow, fmt.Sprintf("%d partitions led after the cold start", want), func(ctx context.Context) (bool, error) {
		ps, err := c.metadata(ctx, probe, names)
		if err != nil || !allLed(ps, want, -1) {
			return false, err
		}
		for _, p := range ps {
			if p.epoch <= epochs[[2]any{p.topic, p.partition}] {
				return false, nil
			}
		}
		return true, nil
	})
	if err == nil {
		res.ColdLed = ledAgain.Sub(start)
	} else {
		res.Problems = append(res.Problems, err.Error())
	}
	if writable, err := produceEveryPartition(ctx, c.seeds(), names, cfg.ScalePartitions, cfg.StartTimeout); err == nil {
		res.ColdWritable = writable.Sub(start)
	} else {
		res.Problems = append(res.Problems, err.Error())
	}
	if synced, err := c.waitInSync(ctx, probe, names, want, cfg.StartTimeout, slow); err == nil {
		res.ColdInSync = synced.Sub(start)
	} else {
		res.Problems = append(res.Problems, err.Error())
	}
	r.log.Info("scale: cold start", "led", res.ColdLed, "writable", res.ColdWritable, "in_sync", res.ColdInSync)
	if err := sleepCtx(ctx, cfg.ScaleSettle); err != nil {
		return res, err
	}
	if res.RSSAfterCold, err = readRSSAll(c); err != nil {
		return res, err
	}
	return res, nil
}

// readRSSAll reads every node's VmRSS.
func readRSSAll(c *weirCluster) ([]int64, error) {
	var out []int64
	for _, n := range c.nodes {
		rss, err := n.rss()
		if err != nil {
			return nil, err
		}
		out = append(out, rss)
	}
	return out, nil
}

// idleCPU measures each node's CPU use over window, in cores.
func idleCPU(ctx context.Context, c *weirCluster, window time.Duration) ([]float64, error) {
	var before []time.Duration
	for _, n := range c.nodes {
		d, err := n.cpu()
		if err != nil {
			return nil, err
		}
		before = append(before, d)
	}
	start := time.Now()
	if err := sleepCtx(ctx, window); err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	var out []float64
	for i, n := range c.nodes {
		d, err := n.cpu()
		if err != nil {
			return nil, err
		}
		out = append(out, float64(d-before[i])/float64(elapsed))
	}
	return out, nil
}

// produceEveryPartition sends one record to every partition of topics
// with a franz-go producer at its defaults (acks=all, idempotent) and
// returns when the last was acknowledged.
func produceEveryPartition(ctx context.Context, seeds, topics []string, partitions int, timeout time.Duration) (time.Time, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return time.Time{}, err
	}
	defer cl.Close()
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, t := range topics {
		for p := range partitions {
			wg.Add(1)
			cl.Produce(pctx, &kgo.Record{Topic: t, Partition: int32(p), Value: []byte("x")}, func(r *kgo.Record, err error) {
				defer wg.Done()
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("%s/%d: %w", r.Topic, r.Partition, err))
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if len(errs) > 0 {
		return time.Now(), fmt.Errorf("produce to every partition after the cold start: %d failed, the first: %w", len(errs), errors.Join(errs[0]))
	}
	return time.Now(), nil
}
