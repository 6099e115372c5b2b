package failover

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weirmq/weir/bench/cluster"
)

// The unclean election (FaultUnclean; docs/failover.md, "The unclean
// election"): seed 003's scenario four, as internal/chaos's
// TestUncleanElectionLoss stages it. A round does not send at a steady
// rate with a fault in the middle; it runs three phases of a third of
// Config.Records each, on the run's one partition, whose leader is L and
// whose followers F1, F2, ...:
//
//  1. "first": records sent with every follower in the ISR, and waited
//     for until the high watermark covers them (every replica holds them).
//  2. Every follower SIGSTOPped; once Metadata shows the ISR [L]
//     (replica.lag.time.max.ms), "second": records sent and acknowledged
//     by L alone (min.insync.replicas=1): Round.AckedLeaderAlone.
//  3. L SIGKILLed and F1 SIGCONTed: F1, lagging, wins an unclean election
//     (Round.LeaderElectedMs runs from the kill until Metadata shows it
//     leading under a higher epoch); "third": records sent to it.
//
// Then the other followers are resumed and L started again (it truncates
// its log to F1's), and once every ISR is full the log itself is read
// back from each phase's lowest acknowledged offset: the records lost are
// those missing from the log as it stands, the group member's reads aside
// (it may have read the "second" records from L before they vanished).
// Exactly the acknowledged "second" records are lost.

// validateUnclean checks what FaultUnclean needs.
func (c Config) validateUnclean() error {
	switch {
	case !c.Unclean:
		return invalidf("the unclean fault needs --unclean")
	case c.Topics*c.Partitions != 1:
		return invalidf("the unclean fault needs one partition in all (--topics 1 --partitions 1), not %d", c.Topics*c.Partitions)
	case c.RF < 2:
		return invalidf("the unclean fault needs a replication factor of at least 2")
	case c.External == nil && c.Nodes <= 2*(c.RF-1):
		return invalidf("the unclean fault with replication factor %d needs more than %d nodes: every node is a metadata voter, and with the %d followers stopped the others must keep a quorum",
			c.RF, 2*(c.RF-1), c.RF-1)
	case c.Acks == AcksNone:
		return invalidf("the unclean fault needs acks=all or acks=1")
	case c.Records < 3:
		return invalidf("the unclean fault needs at least 3 records a round, a third for each phase")
	}
	return nil
}

// uncleanPhase is one phase's records: a round of records of its own.
type uncleanPhase struct {
	round uint32
	rs    *roundSends
}

// uncleanRound runs one round of FaultUnclean.
func (r *runner) uncleanRound(ctx context.Context, sc *Scenario) (Round, error) {
	cfg := r.cfg
	rd := Round{LeaderElectedMs: -1, RecoveredMs: -1, MaxConsumerStallMs: -1, RebalanceMs: -1, AckedByPaused: -1, AckedLeaderAlone: -1, AckedByIsolated: -1}
	pBefore, cBefore := r.prod.errorCounts(), r.cons.errorCounts()
	commitsBefore := r.cons.commitFailures()
	start := time.Now()
	before, err := r.fl.current(ctx)
	if err != nil {
		return rd, err
	}
	if len(before) != 1 {
		return rd, fmt.Errorf("unclean: %d partitions, want 1", len(before))
	}
	part := before[0]
	leader := part.Leader
	var followers []int32
	for _, id := range part.Replicas {
		if id != leader {
			followers = append(followers, id)
		}
	}
	if len(followers) == 0 {
		return rd, fmt.Errorf("unclean: partition %s/%d has no follower", part.Topic, part.Partition)
	}
	sizes := []int{cfg.Records / 3, cfg.Records / 3, cfg.Records - 2*(cfg.Records/3)}
	var phases []uncleanPhase
	problem := func(err error) { rd.Problems = append(rd.Problems, err.Error()) }

	// 1. first: held by every replica.
	ph, err := r.uncleanSend(ctx, sizes[0], "unclean: first records")
	phases = append(phases, ph)
	if err != nil {
		return rd, err
	}
	if err := r.waitCommitted(ctx, ph.rs); err != nil {
		problem(err)
	}

	// 2. the followers frozen until the ISR is the leader alone; second.
	frozen := slices.Clone(followers)
	defer func() { // on an early return, let no node stay stopped
		for _, id := range frozen {
			_ = r.nodes.Signal(id, syscall.SIGCONT)
		}
	}()
	rd.Victims = append([]int32{leader}, followers...)
	rd.FaultAt = time.Now()
	r.setProgress(func(p *Progress) { p.Phase = "followers stopped" })
	for _, id := range followers {
		if err := r.nodes.Signal(id, syscall.SIGSTOP); err != nil {
			return rd, err
		}
	}
	if _, err := r.pollPartition(ctx, append([]int32{}, frozen...), "the ISR shrunk to the leader", func(p cluster.PartitionState) bool {
		return p.Leader == leader && slices.Equal(p.ISR, []int32{leader})
	}); err != nil {
		return rd, fmt.Errorf("unclean: %w", err)
	}
	ph, err = r.uncleanSend(ctx, sizes[1], "unclean: second records")
	phases = append(phases, ph)
	if err != nil {
		return rd, err
	}
	_, acks := ph.rs.snapshot()
	rd.AckedLeaderAlone = 0
	for _, a := range acks {
		if !a.Err {
			rd.AckedLeaderAlone++
		}
	}

	// 3. the leader killed, a lagging follower resumed and elected; third.
	r.setProgress(func(p *Progress) { p.Phase = "leader killed" })
	killed := time.Now()
	if err := r.nodes.Signal(leader, syscall.SIGKILL); err != nil {
		return rd, err
	}
	r.nodes.Kill(leader)
	if err := r.nodes.Signal(followers[0], syscall.SIGCONT); err != nil {
		return rd, err
	}
	frozen = frozen[1:]
	if at, err := r.pollPartition(ctx, append([]int32{leader}, frozen...), "a lagging follower elected", func(p cluster.PartitionState) bool {
		return p.Leader > 0 && p.Leader != leader && p.Epoch > part.Epoch
	}); err != nil {
		problem(err)
	} else {
		rd.LeaderElectedMs = millis(at.Sub(killed))
	}
	ph, err = r.uncleanSend(ctx, sizes[2], "unclean: third records")
	phases = append(phases, ph)
	if err != nil {
		return rd, err
	}

	// The cluster whole again: the other followers resumed, the old
	// leader started (it truncates to the new leader's log).
	r.setProgress(func(p *Progress) { p.Phase = "restoring" })
	for _, id := range frozen {
		if err := r.nodes.Signal(id, syscall.SIGCONT); err != nil {
			return rd, err
		}
	}
	frozen = nil
	probs, err := r.nodes.Start(ctx, leader)
	rd.Problems = append(rd.Problems, probs...)
	if err != nil {
		return rd, err
	}
	if at, err := r.nodes.WaitInSync(ctx, r.fl.topics, r.fl.parts, cfg.RoundTimeout); err != nil {
		problem(fmt.Errorf("after the fault: %w", err))
	} else {
		rd.RecoveredAt, rd.RecoveredMs = at, millis(at.Sub(rd.FaultAt))
	}
	last := phases[len(phases)-1]
	r.setProgress(func(p *Progress) { p.Phase = "draining" })
	r.drain(ctx, last.round, last.rs)
	end := time.Now()

	// The log read back, each phase from its lowest acknowledged offset.
	r.setProgress(func(p *Progress) { p.Phase = "reading back" })
	var sent int
	var allAcks []Ack
	var reads []Read
	for _, ph := range phases {
		n, acks := ph.rs.snapshot()
		var ok []Ack
		for _, a := range acks {
			if !a.Err && a.Offset >= 0 {
				ok = append(ok, a)
			}
		}
		back, err := readBack(ctx, r.nodes.Seeds(), r.fl.topics, ph.round, ok, cfg.RoundTimeout)
		if err != nil {
			problem(err)
		}
		for _, a := range acks {
			a.Seq += uint32(sent)
			allAcks = append(allAcks, a)
		}
		for _, b := range back {
			b.Seq += uint32(sent)
			reads = append(reads, b)
		}
		sent += n
	}
	c := CheckRound(sent, allAcks, reads)
	rd.setCheck(c)
	// No consumer stall: the round's reads are the log's, read back
	// after the phases (MaxConsumerStallMs stays -1).
	if d, ok := r.cons.rebalanceIn(start.UnixNano(), end.UnixNano()); ok {
		rd.RebalanceMs = millis(d)
	}
	rd.ClientErrors = diffCounts(r.prod.errorCounts(), pBefore)
	for k, v := range diffCounts(r.cons.errorCounts(), cBefore) {
		rd.ClientErrors[k] += v
	}
	rd.CommitFailures = r.cons.commitFailures() - commitsBefore
	sc.acks = append(sc.acks, allAcks...)
	return rd, nil
}

// uncleanSend sends n records as a round of their own, at Config.Rate,
// and waits for their outcomes.
func (r *runner) uncleanSend(ctx context.Context, n int, what string) (uncleanPhase, error) {
	r.mu.Lock()
	r.rnd++
	ph := uncleanPhase{round: r.rnd, rs: &roundSends{}}
	r.rs = ph.rs
	r.mu.Unlock()
	r.setProgress(func(p *Progress) { p.Phase = what })
	if err := r.prod.send(ctx, ph.round, n, r.cfg.Rate, ph.rs); err != nil {
		return ph, fmt.Errorf("%s: %w", what, err)
	}
	if err := ph.rs.waitOutcomes(ctx, r.cfg.RoundTimeout); err != nil {
		return ph, fmt.Errorf("%s: %w", what, err)
	}
	return ph, nil
}

// waitCommitted waits until the high watermark of every partition rs's
// records were acknowledged in covers them: every ISR member holds them
// (with acks=1 the acknowledgement alone does not say so).
func (r *runner) waitCommitted(ctx context.Context, rs *roundSends) error {
	_, acks := rs.snapshot()
	want := map[int32]map[int32]int64{} // topic, partition: offset past the last ack
	for _, a := range acks {
		if !a.Err && a.Offset >= 0 {
			if want[a.Topic] == nil {
				want[a.Topic] = map[int32]int64{}
			}
			want[a.Topic][a.Partition] = max(want[a.Topic][a.Partition], a.Offset+1)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(r.nodes.Seeds()...))
	if err != nil {
		return fmt.Errorf("unclean: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	_, err = cluster.PollUntil(ctx, r.cfg.RoundTimeout, 20*time.Millisecond, "the high watermark past the first records", func(ctx context.Context) (bool, error) {
		ends, err := adm.ListEndOffsets(ctx, r.fl.topics...)
		if err == nil {
			err = ends.Error()
		}
		if err != nil {
			return false, err
		}
		for t, ps := range want {
			for p, off := range ps {
				if e, ok := ends.Lookup(r.fl.topics[t], p); !ok || e.Offset < off {
					return false, nil
				}
			}
		}
		return true, nil
	})
	return err
}

// pollPartition polls the Metadata of a running node outside except
// until the run's one partition satisfies ok, and returns when it did.
func (r *runner) pollPartition(ctx context.Context, except []int32, what string, ok func(cluster.PartitionState) bool) (time.Time, error) {
	return cluster.PollUntil(ctx, r.cfg.RoundTimeout, r.cfg.PollEvery, what, func(ctx context.Context) (bool, error) {
		via, err := r.nodes.LiveNode(except...)
		if err != nil {
			return false, err
		}
		ps, err := r.nodes.Metadata(ctx, via, r.fl.topics)
		if err != nil {
			return false, err
		}
		return len(ps) == 1 && ok(ps[0]), nil
	})
}
