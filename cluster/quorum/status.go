package quorum

import (
	"slices"

	"go.etcd.io/raft/v3"
)

// Status is the quorum as this node sees it, in Kafka's terms
// (DescribeQuorum): offsets are the metadata log's, not raft indexes.
type Status struct {
	// Leader is true on the quorum leader; only it knows the voters'
	// progress, so the other fields past LeaderID are zero elsewhere.
	Leader bool
	// LeaderID is the leader this node knows of, -1 if none.
	LeaderID int32
	// Term is the raft term, Kafka's leader epoch.
	Term uint64
	// HighWatermark is the offset just past the last committed entry in
	// this node's metadata log (Storage.EndOffset of the commit index).
	HighWatermark int64
	// Voters and Observers (raft learners), in node id order.
	Voters, Observers []ReplicaStatus
	// Learner is true on a node outside the voters (learners.go).
	Learner bool
	// SnapshotIndex is the raft index of the newest snapshot this node
	// holds (taken or received), 0 if none.
	SnapshotIndex uint64
	// SnapshotsInstalled counts the snapshots this node received from the
	// leader and installed since it started.
	SnapshotsInstalled int
}

// ReplicaStatus is one voter or observer as the leader tracks it.
type ReplicaStatus struct {
	ID int32
	// Match is the last raft index known replicated to it.
	Match uint64
	// LogEndOffset is the offset just past Match in the leader's metadata
	// log (offsets are node-local, see Storage; the leader's are the ones
	// its own high watermark is in).
	LogEndOffset int64
}

// Status returns the quorum's status. Like every Node method but Image it
// must be called from the goroutine that owns the node.
func (n *Node) Status() Status {
	st := n.rn.Status()
	snap, _ := n.st.Snapshot()
	s := Status{LeaderID: n.Leader(), Term: st.GetTerm(), Learner: !n.cfg.IsVoter(),
		SnapshotIndex: snap.GetMetadata().GetIndex(), SnapshotsInstalled: n.installed}
	if st.RaftState != raft.StateLeader {
		return s
	}
	s.Leader = true
	s.HighWatermark = n.st.EndOffset(st.GetCommit())
	for id, pr := range st.Progress {
		r := ReplicaStatus{ID: NodeIDOf(id), Match: pr.Match, LogEndOffset: n.st.EndOffset(pr.Match)}
		if pr.IsLearner {
			s.Observers = append(s.Observers, r)
		} else {
			s.Voters = append(s.Voters, r)
		}
	}
	byID := func(a, b ReplicaStatus) int { return int(a.ID) - int(b.ID) }
	slices.SortFunc(s.Voters, byID)
	slices.SortFunc(s.Observers, byID)
	return s
}

// EndOffset maps raft index i to the metadata log: the offset just past
// entry i's batch (Kafka's end offsets and high watermark are exclusive).
// Index 0 is offset 0; an index a snapshot covers maps to the log start
// offset, the first offset after the snapshot; an index past the last
// entry maps to the log end offset.
func (s *Storage) EndOffset(i uint64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case i == 0:
		return 0
	case i < s.first:
		return s.log.LogStartOffset()
	case i-s.first+1 < uint64(len(s.ents)):
		return s.ents[i-s.first+1].offset
	default:
		return s.log.LogEndOffset()
	}
}
