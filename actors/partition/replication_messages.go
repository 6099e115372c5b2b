package partition

// Replication messages: what a follower's replica fetcher sends to its
// follower partition actor, what the wire Fetch handler reports to the
// leader, and the leader's ISR proposals.

// AppendReplicated carries the records a follower copied from its leader
// with one Fetch. Answered (to the sender) with ReplicaPosition, after the
// append and, under the group-commit policy, after the fsync of what was
// appended, so that the next fetch offset never runs ahead of the disk.
type AppendReplicated struct {
	ID uint64
	// LeaderEpoch is the follower's leader epoch when the fetch was sent:
	// an older one than the actor's is answered FENCED_LEADER_EPOCH, a
	// newer one UNKNOWN_LEADER_EPOCH, and the records are dropped.
	LeaderEpoch int32
	// FetchOffset is the offset the fetch asked from: it must equal the
	// follower's log end offset, else the records are dropped and the
	// current position is answered.
	FetchOffset int64
	// Records is zero or more whole v2 batches as the leader returned them
	// (offsets and epochs kept); a partial batch at the end is dropped.
	Records              []byte
	LeaderHighWatermark  int64
	LeaderLogStartOffset int64
	NowMs                int64
}

// TruncateDiverging reports a diverging epoch in the leader's Fetch answer
// (Fetch v12+ DivergingEpoch): the follower truncates to min(EndOffset, the
// end offset of Epoch in its own log) (KIP-320), rebuilds its producer
// state and answers ReplicaPosition.
type TruncateDiverging struct {
	ID          uint64
	LeaderEpoch int32
	Epoch       int32
	EndOffset   int64
}

// ResetToLeaderStart reports OFFSET_OUT_OF_RANGE from the leader. With
// LeaderLogEndOffset >= 0 and the follower's log end offset above it, the
// follower truncates to it; otherwise, if the follower's log end offset is
// below LogStartOffset (the leader's log start), its log is emptied and
// restarts there. Answered with ReplicaPosition.
type ResetToLeaderStart struct {
	ID                 uint64
	LeaderEpoch        int32
	LogStartOffset     int64
	LeaderLogEndOffset int64
}

// ReplicaPosition answers AppendReplicated, TruncateDiverging and
// ResetToLeaderStart: where the follower's next fetch starts.
type ReplicaPosition struct {
	ID uint64
	// ErrorCode is 0 or a Kafka code: FENCED_LEADER_EPOCH or
	// UNKNOWN_LEADER_EPOCH for a request of another leader epoch,
	// NOT_LEADER_OR_FOLLOWER when the actor leads, CORRUPT_MESSAGE for
	// records that do not validate, KAFKA_STORAGE_ERROR for a failed append,
	// truncation or flush.
	ErrorCode int16
	// FetchOffset is the follower's log end offset (under the group-commit
	// policy its flushed offset).
	FetchOffset int64
	// LastFetchedEpoch is the leader epoch of the last batch below
	// FetchOffset, -1 if none.
	LastFetchedEpoch int32
	// LeaderEpoch is the actor's leader epoch now.
	LeaderEpoch int32
}

// FollowerFetched tells the leader a follower's position, from one of its
// fetch requests (fire and forget: Client.ReportFollowerFetch). The leader
// counts the follower at FetchOffset for the high watermark and acks=all,
// updates its caught-up time, and may propose adding it to the ISR. A
// broker epoch below the last one seen from that replica, a replica id
// outside the assignment, and a fetch that diverges from the leader's log
// (see Client.DivergingEpoch) are ignored: report only fetches that were
// answered with records or an empty success.
//
// Session, when set, is the follower's incremental fetch session
// (KIP-227) that holds the partition: its later fetches may omit the
// partition while its position stays the same, and each of them counts
// as a fetch at that position (FollowerSession). nil: a sessionless
// fetch, which says nothing of later ones.
type FollowerFetched struct {
	ReplicaID        int32
	BrokerEpoch      int64
	FetchOffset      int64
	LastFetchedEpoch int32
	NowMs            int64
	Session          *FollowerSession
}

// FollowerLeftSession tells the leader that the follower's fetch session
// no longer holds the partition (the follower forgot it): its fetches stop
// counting for the partition until the next FollowerFetched.
type FollowerLeftSession struct {
	ReplicaID int32
	Session   *FollowerSession
}

// ISRChange is the leader's ISR proposal (Kafka's AlterPartition item),
// valid only at these epochs.
type ISRChange struct {
	LeaderEpoch    int32
	PartitionEpoch int32
	ISR            []int32
}

// TruncateLog asks the shell to cut the follower's log: with StartAt, to
// empty it and restart it at Offset (log.Log.TruncateFullyAndStartAt),
// else to remove everything at or past Offset (log.Log.TruncateTo). Then
// the shell rebuilds the producer state from the snapshots and the log
// that is left, and steps LogTruncated with the same Seq.
type TruncateLog struct {
	Seq     uint64
	Offset  int64
	StartAt bool
}

// LogTruncated reports the outcome of a TruncateLog: the log's offsets
// after it and the rebuilt producer state (nil on error).
type LogTruncated struct {
	Seq            uint64
	LogStartOffset int64
	LogEndOffset   int64
	FlushedOffset  int64
	LatestEpoch    int32
	Producers      *ProducerState
	Err            error
}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*AppendReplicated) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*TruncateDiverging) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*ResetToLeaderStart) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*ReplicaPosition) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*FollowerFetched) IgnoreDeadLetterLogging() {}

// ISRChangeRefused tells the leader that the controller refused its ISR
// proposal made at LeaderEpoch and PartitionEpoch (no answer).
type ISRChangeRefused struct {
	LeaderEpoch    int32
	PartitionEpoch int32
}
