package partition

import (
	"errors"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/log"
)

// OnLogStartAdvanced records that the log start offset moved to start
// (DeleteRecords, retention); it never moves back.
func (r *Replica) OnLogStartAdvanced(start int64) { r.logStart = max(r.logStart, start) }

// onDeleteRecords moves the log start offset (Kafka's
// ReplicaManager.deleteRecords on the leader): -1 means the high
// watermark; a negative offset or one past the high watermark is
// OFFSET_OUT_OF_RANGE; one at or below the log start offset changes
// nothing. The segment deletions are file removals, done here.
func (a *partitionActor) onDeleteRecords(ctx actor.Context, m *DeleteRecords) {
	res := a.deleteRecords(m)
	if ctx.Sender() != nil {
		ctx.Send(ctx.Sender(), res)
	}
	if res.ErrorCode == 0 {
		a.publish()
		a.wakeWatches(ctx, false, false)
	}
}

func (a *partitionActor) deleteRecords(m *DeleteRecords) *DeleteRecordsResult {
	res := &DeleteRecordsResult{ID: m.ID, LowWatermark: -1}
	if a.r == nil {
		res.ErrorCode = kerr.KafkaStorageError.Code
		return res
	}
	st := a.r.Status()
	off := m.Offset
	if off == -1 {
		off = st.HighWatermark
	}
	switch {
	case st.Role != Leader:
		res.ErrorCode = kerr.NotLeaderForPartition.Code
		return res
	case off < 0 || off > st.HighWatermark:
		res.ErrorCode = kerr.OffsetOutOfRange.Code
		return res
	}
	start, err := a.cfg.Log.DeleteRecordsBefore(off)
	switch {
	case errors.Is(err, log.ErrOffsetOutOfRange), errors.Is(err, log.ErrInvalidOffset):
		res.ErrorCode = kerr.OffsetOutOfRange.Code
		return res
	case errors.Is(err, log.ErrClosed):
		res.ErrorCode = kerr.NotLeaderForPartition.Code
		return res
	case err != nil:
		a.log.Warn("partition actor: delete records", "offset", off, "err", err)
		res.ErrorCode = kerr.KafkaStorageError.Code
		return res
	}
	a.r.OnLogStartAdvanced(start)
	res.LowWatermark = a.r.Status().LogStartOffset
	return res
}

// onDescribeProducers answers with a copy of the producer state (leader
// only, as Kafka).
func (a *partitionActor) onDescribeProducers(ctx actor.Context, m *DescribeProducers) {
	if ctx.Sender() == nil {
		return
	}
	res := &DescribeProducersResult{ID: m.ID}
	switch {
	case a.r == nil:
		res.ErrorCode = kerr.KafkaStorageError.Code
	case a.r.Status().Role != Leader:
		res.ErrorCode = kerr.NotLeaderForPartition.Code
	default:
		ps := a.r.Producers()
		for _, id := range ps.ProducerIDs() {
			e, _ := ps.Entry(id)
			res.Producers = append(res.Producers, e)
		}
	}
	ctx.Send(ctx.Sender(), res)
}
