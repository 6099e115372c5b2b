package partition

import "slices"

// The leader's view of its followers and its ISR proposals, after Kafka's
// Partition and Replica classes (KIP-497 AlterPartition, KIP-841 broker
// epochs, KIP-966's frozen high watermark).
//
//   - A follower's position comes only from its fetches (FollowerFetched):
//     the fetch offset is its log end offset. After an election every
//     position is unknown, and an unknown position of a maximal-ISR member
//     holds the high watermark back.
//   - The maximal ISR is the committed ISR plus the addition this leader
//     has proposed: an addition counts at once, a removal only once the
//     image commits it (BecomeLeader with the new partition epoch), so the
//     high watermark never passes a replica the controller may already
//     count as in sync.
//   - A follower outside the ISR is proposed for addition when its fetch
//     offset reaches max(high watermark, the start offset of this leader's
//     epoch): it then holds every record this leader may have acknowledged,
//     and every record of earlier epochs that the leader kept.
//   - A member whose last caught-up time is older than
//     replica.lag.time.max.ms is proposed for removal on a Tick.
//   - One proposal at a time; it is re-sent every isrProposalRetryMs until
//     a BecomeLeader with a higher partition epoch settles it (the
//     controller's answer, or the proposal itself, may be lost).

// isrProposalRetryMs is how long a proposal may go without the image
// settling it before it is sent again.
const isrProposalRetryMs = 2000

// followerState is what the leader knows of one other replica.
type followerState struct {
	// brokerEpoch is the highest broker epoch seen in its fetches (-1:
	// none); fetches with a lower one come from a previous incarnation.
	brokerEpoch int64
	// known is false until the first fetch of this leadership; end is the
	// fetch offset (the follower's log end offset) from then on.
	known bool
	end   int64
	// caughtUpMs is Kafka's lastCaughtUpTimeMs: the last time the follower
	// had reached the leader's log end offset; -1 until the leader has
	// seen a clock reading since its election (the clock then starts).
	caughtUpMs int64
	// lastFetchMs and lastFetchLeaderEnd are the time of the previous
	// fetch and the leader's log end offset then (-1: no fetch yet).
	lastFetchMs, lastFetchLeaderEnd int64
}

// isrProposal is the outstanding ISR change.
type isrProposal struct {
	change ISRChange
	// adding is the replica the change adds (-1: a removal).
	adding int32
	// sentMs is when it was last sent (-1: before any clock reading).
	sentMs int64
}

// trackFollowers makes sure every replica of the assignment and the ISR
// other than this node has a state, and drops the others.
func (r *Replica) trackFollowers() {
	for id := range r.followers {
		if !r.inAssignment(id) {
			delete(r.followers, id)
		}
	}
	for _, ids := range [][]int32{r.replicas, r.isr} {
		for _, id := range ids {
			if id != r.cfg.NodeID && r.followers[id] == nil {
				r.followers[id] = &followerState{brokerEpoch: -1, caughtUpMs: -1, lastFetchMs: -1, lastFetchLeaderEnd: -1}
			}
		}
	}
}

// inAssignment reports whether id is one of the partition's replicas (the
// assignment, or the ISR when the assignment was not given).
func (r *Replica) inAssignment(id int32) bool {
	return slices.Contains(r.replicas, id) || slices.Contains(r.isr, id)
}

// inMaximalISR reports whether id counts for the high watermark.
func (r *Replica) inMaximalISR(id int32) bool {
	return slices.Contains(r.isr, id) || (r.proposal != nil && r.proposal.adding == id)
}

// replicatedEnd is the smallest end over the maximal ISR (this node at its
// local end); ok is false while a member's position is unknown.
func (r *Replica) replicatedEnd() (int64, bool) {
	end := r.localEnd()
	for id, f := range r.followers {
		if !r.inMaximalISR(id) {
			continue
		}
		if !f.known {
			return 0, false
		}
		end = min(end, f.end)
	}
	return end, true
}

// observeTime advances the replica's clock and starts the caught-up clocks
// of the followers that have none yet (the first reading after an
// election: Kafka counts ISR members as caught up when it becomes leader).
func (r *Replica) observeTime(nowMs int64) {
	r.nowMs = max(r.nowMs, nowMs)
	if r.role != Leader || nowMs <= 0 {
		return
	}
	for _, f := range r.followers {
		if f.caughtUpMs < 0 {
			f.caughtUpMs = r.nowMs
		}
	}
	if r.proposal != nil && r.proposal.sentMs < 0 {
		r.proposal.sentMs = r.nowMs
	}
}

// OnFollowerFetched takes a follower's fetch (see FollowerFetched): its
// position, its caught-up time (Kafka's Replica.updateFetchState), then the
// high watermark and the ISR join rule.
func (r *Replica) OnFollowerFetched(m *FollowerFetched) Output {
	var out Output
	if r.role != Leader || m.ReplicaID == r.cfg.NodeID {
		return out
	}
	f := r.followers[m.ReplicaID]
	if f == nil || m.BrokerEpoch < f.brokerEpoch || m.FetchOffset < 0 {
		return out
	}
	r.observeTime(m.NowMs)
	now := max(m.NowMs, r.nowMs)
	f.brokerEpoch = m.BrokerEpoch
	f.known, f.end = true, m.FetchOffset
	leaderEnd := r.localEnd()
	switch {
	case m.FetchOffset >= leaderEnd:
		f.caughtUpMs = max(f.caughtUpMs, now)
	case f.lastFetchLeaderEnd >= 0 && m.FetchOffset >= f.lastFetchLeaderEnd:
		// It has what the leader had at its previous fetch: it was caught
		// up as of then.
		f.caughtUpMs = max(f.caughtUpMs, f.lastFetchMs)
	}
	f.lastFetchLeaderEnd, f.lastFetchMs = leaderEnd, now
	r.progress(&out)
	r.maybeExpandISR(&out)
	r.checkHandOver(&out)
	return out
}

// maybeExpandISR proposes adding the first follower outside the ISR whose
// fetch offset reaches max(high watermark, the start of this leader's
// epoch), unless a proposal is outstanding.
func (r *Replica) maybeExpandISR(out *Output) {
	if r.role != Leader || r.proposal != nil {
		return
	}
	floor := max(r.hw, r.epochStart)
	for _, id := range r.candidates() {
		f := r.followers[id]
		if slices.Contains(r.isr, id) || !f.known || f.end < floor {
			continue
		}
		isr := append(slices.Clone(r.isr), id)
		r.propose(out, isr, id)
		// The addition counts in the maximal ISR from now on.
		r.progress(out)
		return
	}
}

// candidates returns the followers in assignment order (then any ISR member
// outside it), for deterministic proposals.
func (r *Replica) candidates() []int32 {
	var ids []int32
	for _, list := range [][]int32{r.replicas, r.isr} {
		for _, id := range list {
			if id != r.cfg.NodeID && r.followers[id] != nil && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// maybeShrinkISR proposes removing every ISR member (other than this node)
// that has not caught up with the leader's end for replica.lag.time.max.ms
// (Kafka's Partition.getOutOfSyncReplicas), unless a proposal is
// outstanding.
func (r *Replica) maybeShrinkISR(out *Output) {
	if r.role != Leader || r.proposal != nil {
		return
	}
	leaderEnd := r.localEnd()
	var keep []int32
	removed := false
	for _, id := range r.isr {
		f := r.followers[id]
		lagging := id != r.cfg.NodeID && f != nil && !(f.known && f.end >= leaderEnd) &&
			f.caughtUpMs >= 0 && r.nowMs-f.caughtUpMs > r.cfg.ReplicaLagTimeMaxMs
		if lagging {
			removed = true
			continue
		}
		keep = append(keep, id)
	}
	if removed {
		r.propose(out, keep, -1)
	}
}

// propose records and emits an ISR change at the current epochs.
func (r *Replica) propose(out *Output, isr []int32, adding int32) {
	if r.noProposals {
		return
	}
	sent := r.nowMs
	if sent <= 0 {
		sent = -1
	}
	r.proposal = &isrProposal{
		change: ISRChange{LeaderEpoch: r.leaderEpoch, PartitionEpoch: r.partitionEpoch, ISR: isr},
		adding: adding, sentMs: sent,
	}
	c := r.proposal.change
	c.ISR = slices.Clone(isr)
	out.ProposeISR = &c
}

// tickISR re-sends a proposal the image has not settled in
// isrProposalRetryMs, then looks for members to remove.
func (r *Replica) tickISR(out *Output) {
	if r.role != Leader {
		return
	}
	if p := r.proposal; p != nil {
		if p.sentMs >= 0 && r.nowMs-p.sentMs >= isrProposalRetryMs {
			p.sentMs = r.nowMs
			c := p.change
			c.ISR = slices.Clone(p.change.ISR)
			out.ProposeISR = &c
		}
		return
	}
	r.maybeShrinkISR(out)
}

// OnISRChangeRefused takes the controller's refusal of the outstanding
// proposal made at those epochs (a follower fenced meanwhile, a stale
// epoch): it no longer counts, so an addition stops holding the high
// watermark back, and a later fetch or tick proposes afresh.
func (r *Replica) OnISRChangeRefused(m *ISRChangeRefused) Output {
	var out Output
	p := r.proposal
	if r.role != Leader || p == nil || p.change.LeaderEpoch != m.LeaderEpoch || p.change.PartitionEpoch != m.PartitionEpoch {
		return out
	}
	if p.adding >= 0 {
		if f := r.followers[p.adding]; f != nil {
			f.known = false
		}
	}
	r.proposal = nil
	r.progress(&out)
	return out
}
