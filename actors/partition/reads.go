package partition

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/internal/kafkaerr"
	"github.com/weirmq/weir/log"
)

// Reads that need no decision by the replica run on the caller's
// goroutine: the log is safe for concurrent use, and the high watermark,
// leader epoch and role come from the Status the actor published. The
// actor publishes a step's Status before it sends the step's replies, so a
// producer's acknowledged records are readable by the time it hears of
// them.

// fencingError returns the Kafka error of a request carrying
// currentLeaderEpoch against a replica at st (Kafka's
// Partition.localLogWithEpochOrThrow): FENCED_LEADER_EPOCH for an older
// epoch, UNKNOWN_LEADER_EPOCH for a newer one, then NOT_LEADER_OR_FOLLOWER
// on a follower. check false skips the epoch comparison.
func fencingError(st *Status, check bool, currentLeaderEpoch int32) int16 {
	switch {
	case check && currentLeaderEpoch < st.LeaderEpoch:
		return kerr.FencedLeaderEpoch.Code
	case check && currentLeaderEpoch > st.LeaderEpoch:
		return kerr.UnknownLeaderEpoch.Code
	case st.Role != Leader:
		return kerr.NotLeaderForPartition.Code
	}
	return 0
}

// readLog serves m from l for a replica at st (nil: not started), bounded
// by the high watermark (the last stable offset too, without
// transactions).
func readLog(l *log.Log, st *Status, m *ReadRecords) *ReadRecordsResult {
	if st == nil {
		return &ReadRecordsResult{ErrorCode: kerr.NotLeaderForPartition.Code, ErrorMessage: "partition not started",
			HighWatermark: -1, LogStartOffset: -1, LastStableOffset: -1}
	}
	res := &ReadRecordsResult{HighWatermark: st.HighWatermark, LogStartOffset: st.LogStartOffset, LastStableOffset: st.HighWatermark}
	if code := fencingError(st, m.CheckLeaderEpoch, m.CurrentLeaderEpoch); code != 0 {
		res.ErrorCode, res.ErrorMessage = code, kerr.ErrorForCode(code).Error()
		return res
	}
	bound := st.HighWatermark
	if m.Replica {
		bound = st.replicaEnd
	}
	if m.MaxOffset > 0 {
		bound = min(bound, m.MaxOffset)
	}
	if m.Offset < st.LogStartOffset || m.Offset > st.LogEndOffset {
		res.ErrorCode = kerr.OffsetOutOfRange.Code
		res.ErrorMessage = fmt.Sprintf("offset %d outside [%d, %d]", m.Offset, st.LogStartOffset, st.LogEndOffset)
		return res
	}
	if m.Offset >= bound {
		return res
	}
	data, err := l.Read(m.Offset, log.ReadOptions{MaxBytes: m.MaxBytes, HardMaxBytes: m.HardMaxBytes, MaxOffset: bound, Buf: m.Buf})
	switch res.ErrorCode = kafkaerr.StorageCode(err); res.ErrorCode {
	case 0:
		res.Records = data
	case kerr.OffsetOutOfRange.Code:
		res.ErrorMessage = err.Error()
		res.LogStartOffset = l.LogStartOffset()
	case kerr.KafkaStorageError.Code:
		res.ErrorMessage, res.storageErr = err.Error(), err
	default:
		res.ErrorMessage = err.Error()
	}
	return res
}

// ListOffsetResult answers ListOffset.
type ListOffsetResult struct {
	// ErrorCode is a Kafka error code, 0 for success (also when nothing
	// matches: then Offset and Timestamp are -1).
	ErrorCode   int16
	Offset      int64
	Timestamp   int64
	LeaderEpoch int32
	storageErr  error // the log's error behind a KAFKA_STORAGE_ERROR
}

// listOffset answers ListOffsets for one partition (Kafka's
// Partition.fetchOffsetForTimestamp): -2 the log start offset, -1 the high
// watermark (the last fetchable offset for consumers, whatever the
// isolation level without transactions) with the current leader epoch, -3
// the record with the largest timestamp, else the first offset whose
// timestamp is at least ts. Lookups only see offsets below the high
// watermark.
func listOffset(l *log.Log, st *Status, ts int64, currentLeaderEpoch int32) ListOffsetResult {
	none := ListOffsetResult{Offset: -1, Timestamp: -1, LeaderEpoch: -1}
	if st == nil {
		none.ErrorCode = kerr.NotLeaderForPartition.Code
		return none
	}
	if code := fencingError(st, currentLeaderEpoch != NoLeaderEpochCheck, currentLeaderEpoch); code != 0 {
		none.ErrorCode = code
		return none
	}
	hw := st.HighWatermark
	switch ts {
	case log.LatestTimestamp:
		return ListOffsetResult{Offset: hw, Timestamp: -1, LeaderEpoch: st.LeaderEpoch}
	case log.EarliestTimestamp:
		start := max(st.LogStartOffset, l.LogStartOffset())
		return ListOffsetResult{Offset: start, Timestamp: -1, LeaderEpoch: epochAt(l.Epochs(), start)}
	}
	if ts < log.MaxTimestamp {
		return none // a special value this version does not know (-4, -5)
	}
	off, t, found, err := l.OffsetForTimestamp(ts)
	switch {
	case err != nil:
		if none.ErrorCode = kafkaerr.StorageCode(err); none.ErrorCode == kerr.KafkaStorageError.Code {
			none.storageErr = err
		}
		return none
	case !found || off >= hw:
		return none
	}
	return ListOffsetResult{Offset: off, Timestamp: t, LeaderEpoch: epochAt(l.Epochs(), off)}
}

// epochAt returns the leader epoch of the batch at offset: the epoch of
// the last entry starting at or before it, -1 if none.
func epochAt(entries []log.EpochEntry, offset int64) int32 {
	epoch := int32(-1)
	for _, e := range entries {
		if e.StartOffset > offset {
			break
		}
		epoch = e.Epoch
	}
	return epoch
}

// EpochEndResult answers EndOffsetForEpoch.
type EpochEndResult struct {
	ErrorCode int16
	// LeaderEpoch is the largest epoch <= the one asked for that the log
	// holds, and EndOffset where it ends; both -1 when unknown.
	LeaderEpoch int32
	EndOffset   int64
}

// endOffsetForEpoch answers OffsetForLeaderEpoch for one partition.
func endOffsetForEpoch(l *log.Log, st *Status, epoch, currentLeaderEpoch int32) EpochEndResult {
	res := EpochEndResult{LeaderEpoch: -1, EndOffset: -1}
	if st == nil {
		res.ErrorCode = kerr.NotLeaderForPartition.Code
		return res
	}
	if code := fencingError(st, currentLeaderEpoch != NoLeaderEpochCheck, currentLeaderEpoch); code != 0 {
		res.ErrorCode = code
		return res
	}
	res.LeaderEpoch, res.EndOffset = l.EndOffsetForEpoch(epoch)
	return res
}
