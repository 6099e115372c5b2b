package partition

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/internal/kafkaerr"
)

// OnLogStartAdvanced records that the log start offset moved to start
// (DeleteRecords, retention); it never moves back.
func (r *Replica) OnLogStartAdvanced(start int64) { r.logStart = max(r.logStart, start) }

// pendingDelete is a DeleteRecords whose segment deletion runs off the
// mailbox: where to answer.
type pendingDelete struct {
	to *actor.PID
	id uint64
}

// recordsDeleted reports the outcome of log.DeleteRecordsBefore, run on a
// goroutine of its own, to the actor.
type recordsDeleted struct {
	seq   uint64
	start int64
	err   error
}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging):
// it may arrive after the actor stopped.
func (*recordsDeleted) IgnoreDeadLetterLogging() {}

// onDeleteRecords moves the log start offset (Kafka's
// ReplicaManager.deleteRecords on the leader): -1 means the high
// watermark; a negative offset or one past the high watermark is
// OFFSET_OUT_OF_RANGE; one at or below the log start offset changes
// nothing. The checks run here; the log's durable start-offset checkpoint
// and the segment file removals run on a goroutine, whose outcome comes
// back as recordsDeleted and is answered then.
func (a *partitionActor) onDeleteRecords(ctx actor.Context, m *DeleteRecords) {
	off, res := a.checkDeleteRecords(m)
	if res != nil {
		if ctx.Sender() != nil {
			ctx.Send(ctx.Sender(), res)
		}
		return
	}
	a.nextDelete++
	seq := a.nextDelete
	if a.deletes == nil {
		a.deletes = map[uint64]pendingDelete{}
	}
	a.deletes[seq] = pendingDelete{to: ctx.Sender(), id: m.ID}
	l, system, self := a.cfg.Log, a.system, a.self
	a.deleting.Add(1)
	go func() {
		defer a.deleting.Done()
		start, err := l.DeleteRecordsBefore(off)
		system.Root.Send(self, &recordsDeleted{seq: seq, start: start, err: err})
	}()
}

// checkDeleteRecords returns the offset to delete before, or the answer
// that refuses m.
func (a *partitionActor) checkDeleteRecords(m *DeleteRecords) (int64, *DeleteRecordsResult) {
	res := &DeleteRecordsResult{ID: m.ID, LowWatermark: -1}
	if a.r == nil {
		res.ErrorCode = kerr.KafkaStorageError.Code
		return 0, res
	}
	st := a.r.Status()
	off := m.Offset
	if off == -1 {
		off = st.HighWatermark
	}
	switch {
	case st.Role != Leader:
		res.ErrorCode = kerr.NotLeaderForPartition.Code
		return 0, res
	case off < 0 || off > st.HighWatermark:
		res.ErrorCode = kerr.OffsetOutOfRange.Code
		return 0, res
	}
	return off, nil
}

// onRecordsDeleted takes the log's answer: the replica's log start offset
// advances, the status is published and the requester answered.
func (a *partitionActor) onRecordsDeleted(ctx actor.Context, m *recordsDeleted) {
	p, ok := a.deletes[m.seq]
	if !ok {
		// A follower's own move (advanceFollowerStart): the log says
		// where its start is now (a truncation may have moved it since).
		if m.err == nil && a.r != nil {
			a.r.OnLogStartAdvanced(a.cfg.Log.LogStartOffset())
			a.publish()
			a.wakeWatches(ctx, false, false)
		}
		return
	}
	delete(a.deletes, m.seq)
	res := &DeleteRecordsResult{ID: p.id, LowWatermark: -1}
	switch err := m.err; {
	case err != nil:
		if res.ErrorCode = kafkaerr.StorageCode(err); res.ErrorCode == kerr.KafkaStorageError.Code {
			a.log.Warn("partition actor: delete records", "err", err)
		}
	case a.r != nil:
		a.r.OnLogStartAdvanced(m.start)
		res.LowWatermark = a.r.Status().LogStartOffset
		a.publish()
		a.wakeWatches(ctx, false, false)
	}
	if p.to != nil {
		ctx.Send(p.to, res)
	}
}

// answerPendingDeletes waits for the deletions in flight and answers
// their requesters NOT_LEADER_OR_FOLLOWER (the actor is stopping; the
// requester retries, DeleteRecords is idempotent).
func (a *partitionActor) answerPendingDeletes(ctx actor.Context) {
	a.deleting.Wait()
	for seq, p := range a.deletes {
		delete(a.deletes, seq)
		if p.to != nil {
			ctx.Send(p.to, &DeleteRecordsResult{ID: p.id, ErrorCode: kerr.NotLeaderForPartition.Code, LowWatermark: -1})
		}
	}
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

// onSyncStatus answers with the published status, which covers every
// message handled before this one.
func (a *partitionActor) onSyncStatus(ctx actor.Context, m *SyncStatus) {
	if ctx.Sender() == nil {
		return
	}
	ctx.Send(ctx.Sender(), &StatusSynced{ID: m.ID, Status: a.board.status.Load()})
}
