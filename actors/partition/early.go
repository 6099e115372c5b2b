package partition

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Appends that arrive before their leadership (AppendBatches.AwaitLeader).
// After a failover the node's metadata image names this replica leader a
// moment before the replica has applied it: a producer that learned of
// the election from another node's Metadata can be faster. Refused with
// NOT_LEADER_OR_FOLLOWER, the client finds no newer leader to follow (the
// hint would name this node at the epoch it already knows) and franz-go
// waits for its next metadata refresh, up to MetadataMinAge (5 s) after
// the last. Such an append waits in the mailbox's order instead, for at
// most earlyWaitMs, and is decided as soon as the replica leads at the
// epoch the image named.

// earlyWaitMs bounds the wait of an append for its leadership.
const earlyWaitMs = 1000

// early reports whether m is for a leadership this replica has not taken
// yet, and keeps it if so.
func (r *Replica) early(m *AppendBatches) bool {
	if !m.AwaitLeader || m.AwaitLeaderEpoch <= r.leaderEpoch {
		return false // the replica knows that leadership, or a later one
	}
	r.waitingLeader = append(r.waitingLeader, m)
	return true
}

// releaseEarly decides, in order and before any queued after them, the
// appends waiting for a leadership this replica now holds.
func (r *Replica) releaseEarly(out *Output) {
	if r.role != Leader || len(r.waitingLeader) == 0 {
		return
	}
	var ready []*AppendBatches
	r.waitingLeader = slices.DeleteFunc(r.waitingLeader, func(m *AppendBatches) bool {
		if m.AwaitLeaderEpoch <= r.leaderEpoch {
			ready = append(ready, m)
			return true
		}
		return false
	})
	if len(ready) == 0 {
		return
	}
	r.queue = append(ready, r.queue...)
	for r.inflight == nil && len(r.queue) > 0 {
		m := r.queue[0]
		r.queue = r.queue[1:]
		r.decide(m, out)
	}
}

// refuseEarly answers NOT_LEADER_OR_FOLLOWER the appends waiting for a
// leadership at an epoch up to epoch, which as a follower this replica
// will never hold (every one with all).
func (r *Replica) refuseEarly(out *Output, epoch int32, all bool) {
	r.waitingLeader = slices.DeleteFunc(r.waitingLeader, func(m *AppendBatches) bool {
		if !all && m.AwaitLeaderEpoch > epoch {
			return false
		}
		out.Replies = append(out.Replies, r.notLeader(m.ID, m.Acks))
		return true
	})
}

// expireEarly refuses the appends that waited earlyWaitMs for their
// leadership.
func (r *Replica) expireEarly(out *Output) {
	r.waitingLeader = slices.DeleteFunc(r.waitingLeader, func(m *AppendBatches) bool {
		if m.NowMs+earlyWaitMs > r.nowMs {
			return false
		}
		out.Replies = append(out.Replies, r.failure(m.ID, m.Acks, kerr.NotLeaderForPartition.Code, "the leadership this node's metadata names was not taken in time"))
		return true
	})
}
