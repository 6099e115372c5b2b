package partition

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A planned move of leadership (docs/DESIGN.md "Controlled shutdown" and
// "Preferred leaders"). The leader stops taking writes, lets its in-sync
// followers copy everything it appended, and names one that holds its
// whole log as its successor: a planned move then loses nothing the old
// leader acknowledged, acks=1 records included (Apache Kafka's controlled
// shutdown and preferred-leader election may elect a replica that lacks
// acks=1 records: KAFKA-20554). The cluster asks the controller to make
// the successor leader.
//
// A controlled shutdown's hand-over refuses appends with
// NOT_LEADER_OR_FOLLOWER until leadership moves: the process is going.
// A rebalance's hand-over (HandOver.Rebalance: moving leadership back to
// the preferred replica) holds the appends instead, so a client sees a
// short delay and then, once the move applied, NOT_LEADER_OR_FOLLOWER
// naming the new leader (which franz-go follows at once; a hint naming
// this leader again would send it to wait for its next metadata refresh).
// The held appends run here after all if the move is called off (unless
// the node's lease lapsed while they waited: LeaseLapsed refuses them): by
// HandOverCancel, which the node sends only while no move is sent or once
// the controller refused it for good, or when the partition changes while
// this replica still leads it (a move made at the older epochs can never
// apply after that change: the controller decides against the latest
// image plus its proposals in flight, and a new controller only once it
// applied every earlier entry).

// handOver is a hand-over in progress.
type handOver struct {
	id uint64
	// rebalance holds appends, and to is the successor it must be.
	rebalance bool
	to        int32
	// answered is set once HandOverReady went out, at leaderEpoch and
	// partitionEpoch.
	answered                    bool
	leaderEpoch, partitionEpoch int32
}

// OnHandOver starts a hand-over. A replica that does not lead answers at
// once with NOT_LEADER_OR_FOLLOWER. A hand-over replaces the one in
// progress; the appends a rebalance held are refused if the new one is a
// controlled shutdown's.
func (r *Replica) OnHandOver(m *HandOver) Output {
	var out Output
	if r.role != Leader {
		out.HandOverReady = &HandOverReady{ID: m.ID, ErrorCode: kerr.NotLeaderForPartition.Code, Successor: -1,
			LeaderEpoch: r.leaderEpoch, PartitionEpoch: r.partitionEpoch}
		return out
	}
	r.handover = &handOver{id: m.ID, rebalance: m.Rebalance, to: m.To}
	if !m.Rebalance {
		r.refuseHeld(&out)
	}
	r.checkHandOver(&out)
	return out
}

// OnHandOverCancel calls a rebalance's hand-over off: the held appends
// run, and new ones are taken again. A controlled shutdown's hand-over,
// or one with another ID, is kept.
func (r *Replica) OnHandOverCancel(m *HandOverCancel) Output {
	var out Output
	if h := r.handover; h != nil && h.id == m.ID && h.rebalance {
		r.resume(&out)
	}
	return out
}

// OnLeaseLapsed refuses the appends a rebalance's hand-over holds, their
// lease checked when they came having lapsed since: run after the
// hand-over, they could be written while another node leads. The
// hand-over goes on. It also fails the acks=all appends still waiting for
// the in-sync replicas (NOT_LEADER_OR_FOLLOWER): a leader without its
// lease is cut off or was paused, another node may lead by now, and its
// producers should go there rather than wait for a high watermark that
// may never come (their request timeout, 30 s by default). A failed
// acknowledgement is always safe; the records may still be committed,
// which the producer's retry (deduplicated when idempotent) finds.
func (r *Replica) OnLeaseLapsed(*LeaseLapsed) Output {
	var out Output
	for _, m := range r.waitingLeader {
		// Appends waiting for a leadership (early.go) run on the
		// BecomeLeader: their lease too was checked when they came.
		out.Replies = append(out.Replies, r.failure(m.ID, m.Acks, kerr.NotLeaderForPartition.Code, "the leader's lease lapsed"))
	}
	r.waitingLeader = nil
	if r.role != Leader {
		return out
	}
	for _, m := range r.held {
		out.Replies = append(out.Replies, r.failure(m.ID, m.Acks, kerr.NotLeaderForPartition.Code, "the leader's lease lapsed"))
	}
	r.held = nil
	kept := r.waiting[:0]
	for _, w := range r.waiting {
		if w.kind == waitHighWatermark {
			out.Replies = append(out.Replies, r.failure(w.id, w.acks, kerr.NotLeaderForPartition.Code,
				"the leader's lease lapsed before the in-sync replicas had the records"))
			continue
		}
		kept = append(kept, w)
	}
	clear(r.waiting[len(kept):])
	r.waiting = kept
	return out
}

// holdsAppends reports whether a rebalance's hand-over holds appends,
// appends wait for a leadership (early.go), or, on a leader, acks=all
// appends wait for the in-sync replicas: what OnLeaseLapsed fails.
func (r *Replica) holdsAppends() bool {
	if len(r.held) > 0 || len(r.waitingLeader) > 0 {
		return true
	}
	if r.role == Leader {
		for _, w := range r.waiting {
			if w.kind == waitHighWatermark {
				return true
			}
		}
	}
	return false
}

// handingOver reports whether appends are refused or held for a
// hand-over.
func (r *Replica) handingOver() bool { return r.handover != nil && r.role == Leader }

// hold keeps m until the rebalance's hand-over is settled, reporting
// whether it did (false: the hand-over is a controlled shutdown's).
func (r *Replica) hold(m *AppendBatches) bool {
	if !r.handover.rebalance {
		return false
	}
	r.held = append(r.held, m)
	return true
}

// resume ends the hand-over and decides the held appends, in order, before
// any queued after them.
func (r *Replica) resume(out *Output) {
	r.handover = nil
	if len(r.held) == 0 {
		return
	}
	r.queue = append(r.held, r.queue...)
	r.held = nil
	for r.inflight == nil && len(r.queue) > 0 {
		m := r.queue[0]
		r.queue = r.queue[1:]
		r.decide(m, out)
	}
}

// refuseHeld answers every held append NOT_LEADER_OR_FOLLOWER with the
// current leader as the hint.
func (r *Replica) refuseHeld(out *Output) {
	for _, m := range r.held {
		out.Replies = append(out.Replies, r.notLeader(m.ID, m.Acks))
	}
	r.held = nil
}

// minHoldMs is the least a held append waits before it times out, for
// requests with a short or no timeout (acks=0 and 1 wait for no replica).
const minHoldMs = 1000

// expireHeld answers the held appends whose request timeout (at least
// minHoldMs) passed with REQUEST_TIMED_OUT (retriable: the producer sends
// them again).
func (r *Replica) expireHeld(out *Output) {
	r.held = slices.DeleteFunc(r.held, func(m *AppendBatches) bool {
		if m.NowMs+int64(max(m.TimeoutMs, minHoldMs)) > r.nowMs {
			return false
		}
		out.Replies = append(out.Replies, r.failure(m.ID, m.Acks, kerr.RequestTimedOut.Code, "timed out while leadership was being handed over"))
		return true
	})
}

// settleHandOver ends a rebalance's hand-over that a change of the
// partition made moot: it still leads, at newer epochs than the move was
// made at, so the move can never apply.
func (r *Replica) settleHandOver(out *Output) {
	h := r.handover
	if h == nil || !h.rebalance || !h.answered || r.role != Leader {
		return
	}
	if r.leaderEpoch > h.leaderEpoch || r.partitionEpoch > h.partitionEpoch {
		r.resume(out)
	}
}

// checkHandOver answers the hand-over once no append is in flight and an
// in-sync follower (a rebalance's: the one it names) has fetched up to the
// log end offset. With no follower in the ISR there is no one to hand over
// to: a controlled shutdown's answer names none; a rebalance's waits (the
// node calls it off).
func (r *Replica) checkHandOver(out *Output) {
	h := r.handover
	if h == nil || h.answered || r.role != Leader || r.inflight != nil || len(r.queue) > 0 {
		return
	}
	successor, others := int32(-1), false
	for _, id := range r.replicas {
		if id == r.cfg.NodeID || !r.inISR(id) || (h.rebalance && id != h.to) {
			continue
		}
		others = true
		if f := r.followers[id]; f != nil && f.known && f.end >= r.leo {
			successor = id
			break
		}
	}
	if successor < 0 && (others || h.rebalance) {
		return // wait for a follower's fetch
	}
	h.answered, h.leaderEpoch, h.partitionEpoch = true, r.leaderEpoch, r.partitionEpoch
	out.HandOverReady = &HandOverReady{ID: h.id, Successor: successor, LeaderEpoch: r.leaderEpoch,
		PartitionEpoch: r.partitionEpoch, LogEndOffset: r.leo}
}

// inISR reports whether id is in the committed ISR.
func (r *Replica) inISR(id int32) bool { return slices.Contains(r.isr, id) }
