package partition

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Role is the replica's part in the partition.
type Role uint8

// Roles.
const (
	// Follower: not the leader (also the initial role, before the metadata
	// image names one). Appends get NOT_LEADER_OR_FOLLOWER.
	Follower Role = iota
	// Leader: accepts appends and computes the high watermark.
	Leader
)

// String names the role.
func (r Role) String() string { return [...]string{"follower", "leader"}[r] }

// Start is the log's state when the replica is created (after the log and
// the producer state were recovered).
type Start struct {
	LogStartOffset int64
	LogEndOffset   int64
	// FlushedOffset: every offset below it is durable.
	FlushedOffset int64
	// HighWatermark as last checkpointed (0 if unknown); never above
	// LogEndOffset.
	HighWatermark int64
	// Producers is the recovered producer state (nil: empty).
	Producers *ProducerState
	// LatestEpoch is the newest leader epoch in the log, -1 if none
	// (log.Log.LatestEpoch).
	LatestEpoch int32
}

// Status is a read-only view of the replica, for the shell to publish.
type Status struct {
	Role           Role
	Leader         int32
	LeaderEpoch    int32
	LogStartOffset int64
	LogEndOffset   int64
	FlushedOffset  int64
	HighWatermark  int64
	Producers      int
	// LatestEpoch is the newest leader epoch in the log, -1 if none: a
	// replica fetcher's first LastFetchedEpoch.
	LatestEpoch    int32
	PartitionEpoch int32
	// ISR is the leader's committed ISR (nil on a follower); shared, do not
	// modify.
	ISR []int32
	// replicaEnd is how far a follower may read (ReadRecords.Replica):
	// the log end offset, or the flushed offset under group commit.
	replicaEnd int64
}

// equal reports whether two statuses are the same.
func (s *Status) equal(o *Status) bool {
	return s.Role == o.Role && s.Leader == o.Leader && s.LeaderEpoch == o.LeaderEpoch &&
		s.LogStartOffset == o.LogStartOffset && s.LogEndOffset == o.LogEndOffset &&
		s.FlushedOffset == o.FlushedOffset && s.HighWatermark == o.HighWatermark &&
		s.Producers == o.Producers && s.LatestEpoch == o.LatestEpoch &&
		s.PartitionEpoch == o.PartitionEpoch && s.replicaEnd == o.replicaEnd && slices.Equal(s.ISR, o.ISR)
}

// Replica is one partition replica's decision logic: it is stepped by
// messages and returns what to append and reply (see the package doc for
// the caller's duties). It does no I/O, reads no clock and is not safe for
// concurrent use.
type Replica struct {
	cfg            Config
	role           Role
	leader         int32
	leaderEpoch    int32
	partitionEpoch int32
	// isr is the committed ISR and replicas the assignment (leader only);
	// both are replaced, never changed in place (Status shares isr).
	isr      []int32
	replicas []int32
	// followers holds the leader's view of the other replicas, from their
	// fetches; every position is unknown after an election (isr.go).
	followers map[int32]*followerState
	// epochStart is the log end offset when this leadership began: the
	// start offset of the leader's epoch, for the ISR join rule.
	epochStart int64
	// proposal is the outstanding ISR change, nil if none (isr.go);
	// noProposals is set by a shell that has nowhere to send them.
	proposal    *isrProposal
	noProposals bool
	// handover is the planned move in progress, nil if none (handover.go).
	handover *handOver

	logStart, leo, flushed, hw int64
	latestEpoch                int32
	producers                  *ProducerState

	// Follower state (follower.go): the replicated append or truncation
	// the shell is performing, and the positions waiting for a flush.
	replicating *replicatedAppend
	truncating  *pendingTruncation
	positions   []pendingPosition

	nowMs        int64
	lastExpiryMs int64
	nextSeq      uint64
	inflight     *inflight
	queue        []*AppendBatches
	// held are the appends a rebalance's hand-over keeps (handover.go).
	held []*AppendBatches
	// waitingLeader are the appends that came before their leadership
	// (early.go).
	waitingLeader  []*AppendBatches
	waiting        []*waiter
	flushRequested int64
}

// NewReplica returns a follower replica over a recovered log.
func NewReplica(cfg Config, st Start) (*Replica, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ps := st.Producers
	if ps == nil {
		ps = NewProducerState()
	}
	return &Replica{
		cfg: cfg, leader: -1, leaderEpoch: -1, followers: map[int32]*followerState{},
		logStart: st.LogStartOffset, leo: st.LogEndOffset, flushed: min(st.FlushedOffset, st.LogEndOffset),
		hw: min(st.HighWatermark, st.LogEndOffset), latestEpoch: st.LatestEpoch, producers: ps,
	}, nil
}

// Status returns the replica's current view.
func (r *Replica) Status() Status {
	return Status{
		Role: r.role, Leader: r.leader, LeaderEpoch: r.leaderEpoch,
		LogStartOffset: r.logStart, LogEndOffset: r.leo, FlushedOffset: r.flushed,
		HighWatermark: r.hw, Producers: r.producers.Len(),
		LatestEpoch: r.latestEpoch, PartitionEpoch: r.partitionEpoch, ISR: r.isr, replicaEnd: r.localEnd(),
	}
}

// HasWaiters reports whether appends wait for something with a deadline
// (acks=all waits, queued or in-flight appends), which Ticks time out.
func (r *Replica) HasWaiters() bool {
	return len(r.waiting) > 0 || len(r.queue) > 0 || len(r.held) > 0 || len(r.waitingLeader) > 0 || r.inflight != nil || r.proposal != nil
}

// Producers returns the producer state, for snapshots (read-only use).
func (r *Replica) Producers() *ProducerState { return r.producers }

// BecomeLeader makes the replica leader. A stale epoch is ignored. At a
// new leader epoch every follower position starts unknown, as after any
// election; at the same leader epoch a PartitionEpoch not below the
// current one only replaces the committed ISR and the assignment (follower
// positions are kept), and a higher one settles the outstanding ISR
// proposal.
func (r *Replica) BecomeLeader(m *BecomeLeader) Output {
	if m.LeaderEpoch < r.leaderEpoch {
		return Output{}
	}
	var out Output
	if r.role == Leader && m.LeaderEpoch == r.leaderEpoch {
		if m.PartitionEpoch < r.partitionEpoch {
			return out
		}
		if m.PartitionEpoch > r.partitionEpoch {
			r.proposal = nil
		}
	} else {
		r.answerPositions(&out, kerr.NotLeaderForPartition.Code)
		r.role, r.leader, r.leaderEpoch = Leader, r.cfg.NodeID, m.LeaderEpoch
		r.epochStart = r.leo
		r.proposal = nil
		clear(r.followers)
	}
	r.partitionEpoch = m.PartitionEpoch
	for _, id := range r.isr {
		if f := r.followers[id]; f != nil && !slices.Contains(m.ISR, id) {
			// Out of the ISR now: only a fetch from here on may bring it
			// back (a stale position of a dead follower must not).
			f.known = false
		}
	}
	r.isr = slices.Clone(m.ISR)
	r.replicas = slices.Clone(m.Replicas)
	r.trackFollowers()
	r.progress(&out)
	r.maybeExpandISR(&out)
	r.settleHandOver(&out)
	r.releaseEarly(&out)
	return out
}

// BecomeFollower gives up leadership: every queued or parked append is
// answered NOT_LEADER_OR_FOLLOWER (Kafka's DelayedProduce does the same).
func (r *Replica) BecomeFollower(m *BecomeFollower) Output {
	if m.LeaderEpoch < r.leaderEpoch {
		return Output{}
	}
	if r.role == Follower && m.LeaderEpoch == r.leaderEpoch {
		// The same leadership seen again: the partition epoch only grows.
		r.partitionEpoch = max(r.partitionEpoch, m.PartitionEpoch)
	} else {
		r.partitionEpoch = m.PartitionEpoch
	}
	r.role, r.leader, r.leaderEpoch = Follower, m.Leader, m.LeaderEpoch
	r.isr, r.replicas, r.proposal, r.handover = nil, nil, nil, nil
	clear(r.followers)
	var out Output
	for _, w := range r.waiting {
		out.Replies = append(out.Replies, r.notLeader(w.id, w.acks))
	}
	r.waiting = nil
	for _, q := range r.queue {
		out.Replies = append(out.Replies, r.notLeader(q.ID, q.Acks))
	}
	r.queue = nil
	r.refuseHeld(&out)
	r.refuseEarly(&out, r.leaderEpoch, m.Leader < 0)
	return out
}

// Reconfigure replaces the settings (NodeID is kept). A lower
// min.insync.replicas or leaving the group-commit policy may let the high
// watermark advance at once; waits already parked keep their kind.
func (r *Replica) Reconfigure(cfg Config) (Output, error) {
	cfg.NodeID = r.cfg.NodeID
	if err := cfg.Validate(); err != nil {
		return Output{}, err
	}
	r.cfg = cfg
	var out Output
	r.progress(&out)
	return out, nil
}

// localEnd is how far this replica counts towards the high watermark: its
// log end offset, or its flushed offset under the group-commit policy.
func (r *Replica) localEnd() int64 {
	if r.cfg.GroupCommit {
		return r.flushed
	}
	return r.leo
}

// advanceHighWatermark moves the high watermark to the smallest end of the
// maximal ISR (the committed ISR plus the addition this leader proposed;
// over members other than this node, their fetched positions, an unknown
// position holding it back), never backwards, and not while the committed
// ISR is below min.insync.replicas (KIP-966). It then completes the waits
// it satisfies.
func (r *Replica) advanceHighWatermark(out *Output) {
	if r.role != Leader || len(r.isr) < r.cfg.MinInSyncReplicas {
		return
	}
	hw, ok := r.replicatedEnd()
	if !ok {
		return
	}
	if hw > r.hw {
		r.hw = hw
		out.HighWatermarkChanged = true
	}
	r.completeWaits(out)
}

// notLeader is the answer of a replica that is not the leader, with the
// leader hint (KIP-951).
func (r *Replica) notLeader(id uint64, acks int16) *AppendBatchesResult {
	res := r.failure(id, acks, kerr.NotLeaderForPartition.Code, "not the leader")
	res.CurrentLeader = LeaderHint{LeaderID: r.leader, LeaderEpoch: r.leaderEpoch}
	return res
}

// failure builds an error answer.
func (r *Replica) failure(id uint64, acks, code int16, msg string) *AppendBatchesResult {
	return &AppendBatchesResult{
		ID: id, Acks: acks, ErrorCode: code, ErrorMessage: msg, BaseOffset: -1, LogAppendTimeMs: -1,
		LogStartOffset: r.logStart, CurrentLeader: LeaderHint{LeaderID: -1, LeaderEpoch: -1},
	}
}

// success builds a success answer; appendTimeMs is -1 under CreateTime.
func (r *Replica) success(id uint64, acks int16, base, appendTimeMs int64) *AppendBatchesResult {
	return &AppendBatchesResult{
		ID: id, Acks: acks, BaseOffset: base, LogAppendTimeMs: appendTimeMs, LogStartOffset: r.logStart,
		CurrentLeader: LeaderHint{LeaderID: -1, LeaderEpoch: -1},
	}
}
