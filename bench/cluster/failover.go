package cluster

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/weirmq/weir/bench/dist"
)

// failoverTopic is the topic of the failover rounds.
const failoverTopic = "failover"

// stallFloor is the gap above which a partition counts as stalled in a
// round.
const stallFloor = 100 * time.Millisecond

// ClientStall is one producer's outcome in one round.
type ClientStall struct {
	// Client names the producer ("franz-go v1.22.3").
	Client string
	// Longest is the longest gap between consecutive acknowledgements of
	// any partition overlapping the round: from the last record
	// acknowledged before the failure to the first after it.
	Longest time.Duration
	// From is when the longest gap began, from the signal (negative:
	// before it).
	From time.Duration
	// Stalled is the number of partitions with a gap of at least 100 ms.
	Stalled int
	// Stuck lists the partitions with no acknowledgement within
	// Config.RoundTimeout (SIGSTOP: Config.FrozenTimeout) of the failure;
	// Longest then runs to the end of that wait, a lower bound.
	Stuck []int32
}

// Round is one failover: the node leading the most partitions SIGKILLed
// (restarted afterwards) or SIGSTOPped (SIGCONTed afterwards).
type Round struct {
	// Signal is "SIGKILL" or "SIGSTOP", sent at At.
	Signal string
	At     time.Time
	// Victim is the node signalled and Led the partitions it led.
	Victim int32
	Led    int
	// Controller is set when the victim led the metadata quorum.
	Controller bool
	// Detected and Fenced are the times from the signal until a
	// survivor's gossip declared the victim dead and until the controller
	// fenced it, from the survivors' logs; -1 when no line was found.
	Detected, Fenced time.Duration
	// Leadership runs from the signal until a survivor's Metadata showed
	// every partition led by a live node; -1 when not within
	// Config.RoundTimeout.
	Leadership time.Duration
	// Stalls holds each producer's outcome.
	Stalls []ClientStall
	// FranzMetadata holds when the franz-go producer sent its Metadata
	// requests after the signal, until every partition acknowledged
	// again: when it looked for the new leaders.
	FranzMetadata []time.Duration
	// Rejoin runs from the restart (or SIGCONT) until every partition's
	// ISR was full again; -1 when not within Config.RoundTimeout.
	Rejoin time.Duration
	// Balanced runs from the full ISRs until every partition was led by
	// its preferred replica again (the leaders' rebalance,
	// auto.leader.rebalance.enable); -1 when not within
	// Config.BalanceTimeout. BalanceStalls holds each producer's longest
	// gap in that window, up to its acknowledgements on every partition
	// after it: what moving the leaderships back cost.
	Balanced      time.Duration
	BalanceStalls []ClientStall
	// Problems describes what went wrong in the round.
	Problems []string
}

// ClientTotals are a producer's counts over the whole scenario.
type ClientTotals struct {
	Client                 string
	Acked, Failed, Dropped int64
}

// FailoverResult is the failover scenario's outcome.
type FailoverResult struct {
	Partitions int
	Rounds     []Round
	Clients    []ClientTotals
	// RdkafkaSkipped says why librdkafka did not run, if it did not.
	RdkafkaSkipped string
	// Problems describes failures outside any round.
	Problems []string
}

// runFailover runs the SIGKILL and SIGSTOP rounds on c.
func (r *runner) runFailover(ctx context.Context, c *weirCluster) (*FailoverResult, error) {
	cfg := r.cfg
	res := &FailoverResult{Partitions: cfg.Partitions}
	mir := "2"
	if err := c.createTopics(ctx, []string{failoverTopic}, int32(cfg.Partitions), 3, map[string]*string{"min.insync.replicas": &mir}); err != nil {
		return res, err
	}
	if _, err := c.waitInSync(ctx, c.nodes[0], []string{failoverTopic}, cfg.Partitions, cfg.StartTimeout, 100*time.Millisecond); err != nil {
		return res, err
	}
	minGap := 5 * cfg.ProduceEvery
	var prods []producer
	defer func() {
		for _, p := range prods {
			if err := p.stop(); err != nil {
				res.Problems = append(res.Problems, err.Error())
			}
			a, f, d := p.acks().totals()
			res.Clients = append(res.Clients, ClientTotals{Client: p.label(), Acked: a, Failed: f, Dropped: d})
		}
	}()
	fp, err := startFranz(ctx, c.seeds(), failoverTopic, cfg.Partitions, cfg.ProduceEvery, minGap, cfg.StartTimeout)
	if err != nil {
		return res, err
	}
	prods = append(prods, fp)
	if cfg.Python == "" {
		res.RdkafkaSkipped = "no python given"
	} else if err := rdkafkaAvailable(ctx, cfg.Python); err != nil {
		res.RdkafkaSkipped = err.Error()
	} else {
		rp, err := startRdkafka(cfg.Python, c.seeds(), failoverTopic, cfg.Partitions, cfg.ProduceEvery, minGap, cfg.StartTimeout)
		if err != nil {
			return res, err
		}
		prods = append(prods, rp)
	}
	if res.RdkafkaSkipped != "" {
		r.log.Warn("librdkafka skipped", "why", res.RdkafkaSkipped)
	}
	if err := waitAcking(ctx, prods, time.Now(), cfg.RoundTimeout); err != nil {
		return res, err
	}
	var signals []syscall.Signal
	for range cfg.Kills {
		signals = append(signals, syscall.SIGKILL)
	}
	for range cfg.Stops {
		signals = append(signals, syscall.SIGSTOP)
	}
	for i, sig := range signals {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		rd, err := r.failoverRound(ctx, c, prods, sig)
		res.Rounds = append(res.Rounds, rd)
		r.log.Info("failover round", "round", i+1, "of", len(signals), "signal", rd.Signal,
			"at", rd.At.Format("15:04:05.000"), "victim", rd.Victim,
			"led", rd.Led, "controller", rd.Controller, "detected", rd.Detected, "fenced", rd.Fenced,
			"leadership", rd.Leadership, "stalls", stallsText(rd.Stalls), "rejoin", rd.Rejoin, "problems", len(rd.Problems))
		for _, p := range rd.Problems {
			r.log.Warn("failover round problem", "round", i+1, "problem", p)
		}
		if err != nil {
			// The cluster is in no state to go on (a node would not start).
			return res, fmt.Errorf("round %d: %w", i+1, err)
		}
	}
	return res, nil
}

// stallsText is a log line's "franz-go=812ms librdkafka=1.2s".
func stallsText(ss []ClientStall) string {
	var parts []string
	for _, s := range ss {
		name, _, _ := strings.Cut(s.Client, " ")
		parts = append(parts, fmt.Sprintf("%s=%v(from %+v)", name, dist.Round(s.Longest), dist.Round(s.From)))
	}
	return strings.Join(parts, " ")
}

// waitAcking waits until every producer had an acknowledgement on every
// partition after since.
func waitAcking(ctx context.Context, prods []producer, since time.Time, timeout time.Duration) error {
	_, err := pollUntil(ctx, timeout, 10*time.Millisecond, "every producer acknowledged on every partition", func(context.Context) (bool, error) {
		for _, p := range prods {
			if !p.acks().ackedAllSince(since) {
				return false, nil
			}
		}
		return true, nil
	})
	return err
}

// failoverRound runs one round. Its error means the cluster cannot go on;
// anything else that went wrong is in Round.Problems.
func (r *runner) failoverRound(ctx context.Context, c *weirCluster, prods []producer, sig syscall.Signal) (Round, error) {
	cfg := r.cfg
	rd := Round{Signal: signalName(sig), Detected: -1, Fenced: -1, Leadership: -1, Rejoin: -1, Balanced: -1}
	probe, err := c.liveNode()
	if err != nil {
		return rd, err
	}
	ps, err := c.metadata(ctx, probe, []string{failoverTopic})
	if err != nil {
		return rd, err
	}
	rd.Victim, rd.Led = mostLeader(ps, len(c.nodes))
	if ctl, err := c.quorumLeader(ctx, probe); err == nil {
		rd.Controller = ctl == rd.Victim
	}
	victim := c.node(rd.Victim)
	survivor, err := c.liveNode(rd.Victim)
	if err != nil {
		return rd, err
	}

	signalled := time.Now()
	rd.At = signalled
	if err := victim.signal(sig); err != nil {
		return rd, err
	}
	if sig == syscall.SIGKILL {
		victim.kill() // reap it
	}
	led, err := pollUntil(ctx, cfg.RoundTimeout, cfg.PollEvery, "every partition led by a live node", func(ctx context.Context) (bool, error) {
		ps, err := c.metadata(ctx, survivor, []string{failoverTopic})
		if err != nil {
			return false, err
		}
		return allLed(ps, cfg.Partitions, rd.Victim), nil
	})
	// Acknowledgements that were on their way when the signal went out
	// arrive just after it; only those after the move show a producer
	// that found the new leaders.
	recovered := signalled
	if err == nil {
		rd.Leadership = led.Sub(signalled)
		recovered = led
	} else {
		rd.Problems = append(rd.Problems, fmt.Sprintf("node %d: %v", survivor.id, err))
	}
	// Every producer acknowledging on every partition after the move ends
	// the failure's window.
	ackWait := cfg.RoundTimeout
	if sig == syscall.SIGSTOP {
		ackWait = cfg.FrozenTimeout
	}
	if err := waitAcking(ctx, prods, recovered, ackWait); err != nil {
		rd.Problems = append(rd.Problems, fmt.Sprintf("after the %s: %v", rd.Signal, err))
	}
	windowEnd := time.Now()
	// Partitions still without an acknowledgement now are stuck; their
	// stall is counted up to now (a lower bound).
	var pre []stall
	for _, p := range prods {
		pre = append(pre, p.acks().stallIn(signalled, windowEnd, stallFloor))
	}

	// Bring the victim back.
	back := time.Now()
	switch sig {
	case syscall.SIGSTOP:
		if err := victim.signal(syscall.SIGCONT); err != nil {
			return rd, err
		}
	default:
		probs, err := c.restart(ctx, victim)
		rd.Problems = append(rd.Problems, probs...)
		if err != nil {
			return rd, err
		}
	}
	synced, err := c.waitInSync(ctx, survivor, []string{failoverTopic}, cfg.Partitions, cfg.RoundTimeout, 50*time.Millisecond)
	if err == nil {
		rd.Rejoin = synced.Sub(back)
	} else {
		rd.Problems = append(rd.Problems, fmt.Sprintf("node %d not back in every ISR after its %s: %v",
			rd.Victim, map[bool]string{true: "SIGCONT", false: "restart"}[sig == syscall.SIGSTOP], err))
		// Restart it so the next round starts from a full cluster.
		probs, err := c.restart(ctx, victim)
		rd.Problems = append(rd.Problems, probs...)
		if err != nil {
			return rd, err
		}
		if _, err := c.waitInSync(ctx, survivor, []string{failoverTopic}, cfg.Partitions, cfg.StartTimeout, 50*time.Millisecond); err != nil {
			return rd, fmt.Errorf("after restarting node %d: %w", rd.Victim, err)
		}
	}
	if !victim.running() {
		rd.Problems = append(rd.Problems, fmt.Sprintf("node %d exited after it came back; see %s", rd.Victim, victim.logPth))
		probs, err := c.restart(ctx, victim)
		rd.Problems = append(rd.Problems, probs...)
		if err != nil {
			return rd, err
		}
		if _, err := c.waitInSync(ctx, survivor, []string{failoverTopic}, cfg.Partitions, cfg.StartTimeout, 50*time.Millisecond); err != nil {
			return rd, fmt.Errorf("after restarting node %d: %w", rd.Victim, err)
		}
	}
	if err := waitAcking(ctx, prods, time.Now(), cfg.RoundTimeout); err != nil {
		rd.Problems = append(rd.Problems, fmt.Sprintf("after node %d came back: %v", rd.Victim, err))
	}
	r.measureBalance(ctx, c, survivor, prods, &rd)
	for i, p := range prods {
		// Measured again now, so that a gap that opened in the window
		// and closed after it counts whole.
		s := p.acks().stallIn(signalled, windowEnd, stallFloor)
		if len(pre[i].stuck) > 0 {
			s = pre[i]
		}
		rd.Stalls = append(rd.Stalls, ClientStall{Client: p.label(), Longest: s.longest, From: sinceOrZero(s.longestFrom, signalled),
			Stalled: s.stalled, Stuck: s.stuck})
		if len(s.stuck) > 0 {
			rd.Problems = append(rd.Problems, fmt.Sprintf("%s: partitions %v had no acknowledgement within %v of the %s",
				p.label(), s.stuck, ackWait, rd.Signal))
		}
	}
	for _, p := range prods {
		if fp, ok := p.(*franzProducer); ok {
			rd.FranzMetadata = fp.metadataAfter(signalled, windowEnd)
		}
	}
	tl := readTimeline(c, rd.Victim, signalled)
	rd.Detected, rd.Fenced = after(tl.detected, signalled), after(tl.fenced, signalled)
	if err := sleepCtx(ctx, cfg.Settle); err != nil {
		return rd, err
	}
	return rd, nil
}

// measureBalance waits until every partition is led by its preferred
// replica again and records how long that took after the ISRs were full,
// and what the moves cost each producer.
func (r *runner) measureBalance(ctx context.Context, c *weirCluster, via *node, prods []producer, rd *Round) {
	cfg := r.cfg
	from := time.Now()
	bal, err := pollUntil(ctx, cfg.BalanceTimeout, cfg.PollEvery, "every partition led by its preferred replica", func(ctx context.Context) (bool, error) {
		ps, err := c.metadata(ctx, via, []string{failoverTopic})
		if err != nil {
			return false, err
		}
		return allPreferred(ps, cfg.Partitions), nil
	})
	if err != nil {
		rd.Problems = append(rd.Problems, fmt.Sprintf("leaderships not back with their preferred replicas: %v", err))
		return
	}
	rd.Balanced = bal.Sub(from)
	if err := waitAcking(ctx, prods, bal, cfg.RoundTimeout); err != nil {
		rd.Problems = append(rd.Problems, fmt.Sprintf("after the rebalance: %v", err))
	}
	end := time.Now()
	for _, p := range prods {
		s := p.acks().stallIn(from, end, stallFloor)
		rd.BalanceStalls = append(rd.BalanceStalls, ClientStall{Client: p.label(), Longest: s.longest, From: sinceOrZero(s.longestFrom, from),
			Stalled: s.stalled, Stuck: s.stuck})
	}
}

// sinceOrZero is t - ref, or 0 when t is unset.
func sinceOrZero(t, ref time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	return t.Sub(ref)
}

func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGSTOP:
		return "SIGSTOP"
	}
	return sig.String()
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
