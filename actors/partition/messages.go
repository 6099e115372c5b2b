package partition

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirmq/weir/log"
)

// Commands: what the replica is asked to do.

// AppendBatches asks the leader to append one partition's records from a
// Produce request (or an embedded client). Answered by one
// AppendBatchesResult with the same ID.
type AppendBatches struct {
	// ID is chosen by the shell and echoed in the result.
	ID uint64
	// Records is the partition's records field: exactly one v2 record
	// batch, as Produce v3+ requires. The log sets its base offset and
	// leader epoch in place, so the shell must not share the buffer.
	Records []byte
	// Acks is the request's acks: 0, 1 or -1 (all).
	Acks int16
	// TimeoutMs is how long an acks=all append waits for the high
	// watermark before REQUEST_TIMED_OUT.
	TimeoutMs int32
	// NowMs is the injected clock's reading when the request arrived.
	NowMs int64
	// CheckLeaderEpoch makes the append conditional on the replica
	// leading at LeaderEpoch (else NOT_LEADER_OR_FOLLOWER): a writer that
	// took its state from one leadership (a group coordinator loaded at
	// an epoch) cannot write into a later one. Produce requests carry no
	// epoch and leave it unset.
	CheckLeaderEpoch bool
	LeaderEpoch      int32
	// AwaitLeader says the node's metadata image makes this replica
	// leader at AwaitLeaderEpoch: an append that arrives before the
	// replica knows that epoch waits for it (early.go) instead of being
	// refused.
	AwaitLeader      bool
	AwaitLeaderEpoch int32
}

// AppendBatchesResult answers AppendBatches. For acks=0 the shell sends
// nothing to the client but keeps the request's slot in the connection's
// order; a non-zero ErrorCode with acks=0 closes the connection.
type AppendBatchesResult struct {
	ID   uint64
	Acks int16
	// ErrorCode is a Kafka error code, 0 for success.
	ErrorCode    int16
	ErrorMessage string
	// BaseOffset is the batch's first offset (the original append's for a
	// duplicate), -1 on error.
	BaseOffset int64
	// LogAppendTimeMs is the time the leader stamped on the batch under
	// message.timestamp.type=LogAppendTime (for a duplicate, the
	// original's), -1 under CreateTime or on error.
	LogAppendTimeMs int64
	LogStartOffset  int64
	// CurrentLeader is the leader hint (KIP-951) for NOT_LEADER_OR_FOLLOWER.
	CurrentLeader LeaderHint
}

// LeaderHint names the partition's leader as this replica knows it; -1 for
// unknown.
type LeaderHint struct {
	LeaderID    int32
	LeaderEpoch int32
}

// BecomeLeader makes the replica the partition's leader at LeaderEpoch,
// from the metadata image. Sent again with the same LeaderEpoch and a
// higher PartitionEpoch, it says the committed ISR changed while the
// leadership stayed: follower positions are kept, and the outstanding ISR
// proposal, if any, is settled (accepted or refused, the image says which).
type BecomeLeader struct {
	LeaderEpoch int32
	// PartitionEpoch is the partition's epoch in the image, bumped by
	// every change of leader or ISR (KIP-497).
	PartitionEpoch int32
	// ISR is the committed in-sync replica set (node ids, this node
	// included).
	ISR []int32
	// Replicas is the assignment, in preference order (nil: the ISR). A
	// follower fetch from a node outside it is ignored.
	Replicas []int32
}

// BecomeFollower makes the replica a follower of Leader (-1: none known).
type BecomeFollower struct {
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32
}

// Tick carries the injected clock's reading; the node's ticker sends it.
type Tick struct{ NowMs int64 }

// Reconfigure replaces the replica's settings when its topic's configs
// change (AlterConfigs): max.message.bytes, min.insync.replicas, the flush
// policy (GroupCommit), message.timestamp.type and the producer expiry
// apply from the next message on; NodeID is kept. No answer: an invalid
// Config is logged and ignored.
type Reconfigure struct{ Config Config }

// Outputs: what the replica asks the shell to do.

// AppendToLog asks the shell to call log.Append(Records, Options) and to
// feed the outcome back as LogAppended with the same Seq, before stepping
// anything else.
type AppendToLog struct {
	Seq     uint64
	Records []byte
	Options log.AppendOptions
}

// Events: what happened, fed back by the shell.

// LogAppended reports the outcome of an AppendToLog.
type LogAppended struct {
	Seq    uint64
	Result log.AppendResult
	Err    error
}

// FlushCompleted reports that every offset below UpTo is durable (the
// callback of log.OnFlushed(UpTo)), or the error that prevented it.
type FlushCompleted struct {
	UpTo int64
	Err  error
}

// Output is everything one step asks of the shell, to be done in this
// order: send Replies, then if FlushUpTo > 0 call log.OnFlushed(FlushUpTo)
// and feed FlushCompleted, then perform Append (if set) and feed
// LogAppended, then publish Status if HighWatermarkChanged.
type Output struct {
	Replies              []*AppendBatchesResult
	FlushUpTo            int64
	Append               *AppendToLog
	HighWatermarkChanged bool
	// ExpiredProducers lists the producer ids removed by expiry.
	ExpiredProducers []int64
	// Positions answer AppendReplicated, TruncateDiverging and
	// ResetToLeaderStart (by ID); the shell fills LastFetchedEpoch from
	// the log before it sends them.
	Positions []*ReplicaPosition
	// Truncate asks the shell to cut the log (a follower), rebuild the
	// producer state for what is left and step LogTruncated with the same
	// Seq before anything else.
	Truncate *TruncateLog
	// ProposeISR is an ISR change for the shell to hand to
	// ActorConfig.ProposeISR.
	ProposeISR *ISRChange
	// HandOverReady answers a HandOver (to its sender).
	HandOverReady *HandOverReady
	// AdvanceLogStart > 0 asks the shell to move the log start offset up
	// to it (a follower following its leader's), off the mailbox, and to
	// report the new start with Replica.OnLogStartAdvanced.
	AdvanceLogStart int64
}

// HandOver asks the leader to prepare a planned move of its leadership:
// it takes no new append from now on and answers one HandOverReady, to
// the sender, once an in-sync follower holds its whole log (handover.go).
// A controlled shutdown's (Rebalance false) refuses appends until
// leadership moves. A rebalance's holds them, waits for the follower To
// only, and ends when leadership moves, on HandOverCancel, or when the
// partition changes while this replica still leads it.
type HandOver struct {
	ID        uint64
	Rebalance bool
	To        int32
}

// HandOverCancel calls off the rebalance hand-over ID: the held appends
// run. Sent only when the move cannot apply: before it was sent, or once
// the controller refused it for good.
type HandOverCancel struct {
	ID uint64
}

// LeaseLapsed tells a leader that its node's lease lapsed
// (ActorConfig.LeaseValid): the appends a rebalance's hand-over holds are
// refused NOT_LEADER_OR_FOLLOWER, as a new append is, so that none runs
// when the hand-over is called off or made moot (another node may lead by
// then), and the acks=all appends waiting for the in-sync replicas are
// failed NOT_LEADER_OR_FOLLOWER, so that their producers go to the next
// leader. The shell steps it before any step that may run held appends,
// and on its ticks.
type LeaseLapsed struct{}

// HandOverReady answers HandOver: Successor is an in-sync follower whose
// fetch offset reached LogEndOffset with every append done (-1: the ISR
// holds no other replica). ErrorCode NOT_LEADER_OR_FOLLOWER: the replica
// does not lead.
type HandOverReady struct {
	ID             uint64
	ErrorCode      int16
	Successor      int32
	LeaderEpoch    int32
	PartitionEpoch int32
	LogEndOffset   int64
}

// Reads: served by the actor shell from the log, not by the Replica.

// IsolationLevel is a Fetch request's isolation_level.
type IsolationLevel int8

// Isolation levels. Without transactions the last stable offset is the
// high watermark, so both read up to it.
const (
	ReadUncommitted IsolationLevel = 0
	ReadCommitted   IsolationLevel = 1
)

// ReadRecords asks for whole batches from Offset, below the high watermark
// (and below MaxOffset when it is > 0), at most MaxBytes (the first batch
// is returned whole). With MaxWaitMs > 0 a read that finds nothing is
// parked until an append moves the high watermark past Offset or a Tick
// passes its deadline; it is answered by one ReadRecordsResult.
type ReadRecords struct {
	Offset int64
	// MaxBytes bounds the bytes read; the first batch may exceed it
	// (KIP-74) unless HardMaxBytes is set, when a first batch larger than
	// MaxBytes returns no records.
	MaxBytes     int
	HardMaxBytes bool
	MaxOffset    int64
	Isolation    IsolationLevel
	MaxWaitMs    int32
	// CheckLeaderEpoch fences the read with CurrentLeaderEpoch, the
	// fetcher's leader epoch (Fetch v9+ with an epoch other than -1):
	// FENCED_LEADER_EPOCH if older than the replica's, UNKNOWN_LEADER_EPOCH
	// if newer.
	CheckLeaderEpoch   bool
	CurrentLeaderEpoch int32
	// Replica is a follower's read (a Fetch with a replica id): bounded by
	// the log end offset, or under the group-commit policy by the flushed
	// offset, instead of the high watermark; MaxOffset still applies.
	Replica bool
	// Buf, when its capacity suffices, receives the data (ReadNow only):
	// a caller that reuses read buffers passes one in.
	Buf []byte
}

// ReadRecordsResult answers ReadRecords.
type ReadRecordsResult struct {
	// ErrorCode is a Kafka error code, 0 for success.
	ErrorCode      int16
	ErrorMessage   string
	Records        []byte
	HighWatermark  int64
	LogStartOffset int64
	// LastStableOffset equals HighWatermark (no transactions yet).
	LastStableOffset int64
	// storageErr is the log's error behind a KAFKA_STORAGE_ERROR.
	storageErr error
}

// NoLeaderEpochCheck as the current leader epoch of ListOffset or
// EndOffsetForEpoch skips the fencing check, as -1 does in Kafka's
// requests.
const NoLeaderEpochCheck int32 = -1

// WatchHighWatermark asks the actor to send one HighWatermarkReached to
// ReplyTo as soon as there may be something new to read past Above: the
// high watermark moves past Above, the log start offset passes it, the
// leader epoch or role changes from what it is when the watch arrives, the
// actor stops, or a Tick passes DeadlineMs (then Expired is set). A watch
// whose condition already holds fires at once. Long-poll fetches park one
// watch in each partition they read and wake on the first.
type WatchHighWatermark struct {
	// ID is chosen by the watcher and echoed; (ReplyTo, ID) names the
	// watch for CancelWatch.
	ID      uint64
	ReplyTo *actor.PID
	// Above is the high watermark the watcher has seen (or the offset it
	// reads from): the watch fires when the high watermark exceeds it.
	Above int64
	// DeadlineMs is the injected clock's time after which a Tick drops
	// the watch with an Expired answer (0: no deadline).
	DeadlineMs int64
	// LogEnd makes the watch fire also when the log end offset (the
	// flushed offset under the group-commit policy) passes Above: what a
	// follower's long-polled fetch waits on.
	LogEnd bool
}

// HighWatermarkReached answers WatchHighWatermark.
type HighWatermarkReached struct {
	ID            uint64
	HighWatermark int64
	// Expired is set when the watch's deadline passed instead.
	Expired bool
}

// CancelWatch drops a parked watch (the watcher was answered elsewhere);
// no answer. Unknown watches are ignored.
type CancelWatch struct {
	ID      uint64
	ReplyTo *actor.PID
}

// DeleteRecords asks the leader to move the log start offset up to Offset
// (-1: the high watermark), Kafka's DeleteRecords. Answered to the
// sender with DeleteRecordsResult.
type DeleteRecords struct {
	ID     uint64
	Offset int64
}

// DeleteRecordsResult answers DeleteRecords.
type DeleteRecordsResult struct {
	ID uint64
	// ErrorCode is a Kafka error code: OFFSET_OUT_OF_RANGE past the high
	// watermark, NOT_LEADER_OR_FOLLOWER on a follower.
	ErrorCode int16
	// LowWatermark is the log start offset after the deletion, -1 on
	// error.
	LowWatermark int64
}

// DescribeProducers asks the leader for a snapshot of its producer state
// (Kafka's DescribeProducers). Answered to the sender with
// DescribeProducersResult.
type DescribeProducers struct {
	ID uint64
}

// DescribeProducersResult answers DescribeProducers.
type DescribeProducersResult struct {
	ID        uint64
	ErrorCode int16
	// Producers are copies of the entries, ascending by producer id.
	Producers []ProducerEntry
}

// SyncStatus asks the actor for its Status once every message sent to it
// before has been handled: a caller that sent appends and then SyncStatus
// from one goroutine learns a status that covers those appends (Kafka
// serves one connection's requests one after another, so a ListOffsets
// after an acks=0 produce on the same connection sees that produce).
// Answered to the sender with StatusSynced.
type SyncStatus struct {
	ID uint64
}

// StatusSynced answers SyncStatus. Status is nil when the partition's log
// could not be opened.
type StatusSynced struct {
	ID     uint64
	Status *Status
}

// Requests and answers that may meet a stopped actor or a closed Inbox in
// the normal course of things (a partition moved, a long poll already
// answered) are not logged as dead letters: the requester learns of a
// stopped actor from protoactor's DeadLetterResponse, and a late answer
// is simply not needed.

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*AppendBatches) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*AppendBatchesResult) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*WatchHighWatermark) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*HighWatermarkReached) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*CancelWatch) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*DeleteRecords) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*DeleteRecordsResult) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*DescribeProducers) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*DescribeProducersResult) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*SyncStatus) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*StatusSynced) IgnoreDeadLetterLogging() {}
