package partition

import "github.com/weirmq/weir/log"

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
	// LogAppendTimeMs is -1: CreateTime (LogAppendTime is not applied yet).
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
// from the metadata image.
type BecomeLeader struct {
	LeaderEpoch int32
	// ISR is the committed in-sync replica set (node ids, this node
	// included).
	ISR []int32
}

// BecomeFollower makes the replica a follower of Leader (-1: none known).
type BecomeFollower struct {
	Leader      int32
	LeaderEpoch int32
}

// Tick carries the injected clock's reading; the node's ticker sends it.
type Tick struct{ NowMs int64 }

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
	Offset    int64
	MaxBytes  int
	MaxOffset int64
	Isolation IsolationLevel
	MaxWaitMs int32
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
}
