package partition

import "github.com/twmb/franz-go/pkg/kerr"

// A planned move of leadership (controlled shutdown, docs/DESIGN.md
// "Controlled shutdown"). The leader stops taking writes, lets its
// in-sync followers copy everything it appended, and names one that holds
// its whole log as its successor: a planned move then loses nothing the
// old leader acknowledged, acks=1 records included (Apache Kafka's
// controlled shutdown may elect a replica that lacks acks=1 records:
// KAFKA-20554). The cluster asks the controller to make the successor
// leader; until the image moves leadership, appends are refused with
// NOT_LEADER_OR_FOLLOWER so the clients look for the new leader.

// handOver is a hand-over in progress.
type handOver struct {
	id uint64
	// answered is set once HandOverReady went out.
	answered bool
}

// OnHandOver starts a hand-over. A replica that does not lead answers at
// once with NOT_LEADER_OR_FOLLOWER.
func (r *Replica) OnHandOver(m *HandOver) Output {
	var out Output
	if r.role != Leader {
		out.HandOverReady = &HandOverReady{ID: m.ID, ErrorCode: kerr.NotLeaderForPartition.Code, Successor: -1,
			LeaderEpoch: r.leaderEpoch, PartitionEpoch: r.partitionEpoch}
		return out
	}
	r.handover = &handOver{id: m.ID}
	r.checkHandOver(&out)
	return out
}

// handingOver reports whether appends are refused for a hand-over.
func (r *Replica) handingOver() bool { return r.handover != nil && r.role == Leader }

// checkHandOver answers the hand-over once no append is in flight and an
// in-sync follower has fetched up to the log end offset. With no follower
// in the ISR there is no one to hand over to: the answer names none.
func (r *Replica) checkHandOver(out *Output) {
	h := r.handover
	if h == nil || h.answered || r.role != Leader || r.inflight != nil || len(r.queue) > 0 {
		return
	}
	successor, others := int32(-1), false
	for _, id := range r.replicas {
		if id == r.cfg.NodeID || !r.inISR(id) {
			continue
		}
		others = true
		if f := r.followers[id]; f != nil && f.known && f.end >= r.leo {
			successor = id
			break
		}
	}
	if successor < 0 && others {
		return // wait for a follower's fetch
	}
	h.answered = true
	out.HandOverReady = &HandOverReady{ID: h.id, Successor: successor, LeaderEpoch: r.leaderEpoch,
		PartitionEpoch: r.partitionEpoch, LogEndOffset: r.leo}
}

// inISR reports whether id is in the committed ISR.
func (r *Replica) inISR(id int32) bool {
	for _, m := range r.isr {
		if m == id {
			return true
		}
	}
	return false
}
