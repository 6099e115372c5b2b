package partition

import "github.com/twmb/franz-go/pkg/kerr"

// waitKind is what a parked append waits for.
type waitKind uint8

const (
	// waitFlush: acks=1 under the group-commit policy waits for the
	// leader's fsync.
	waitFlush waitKind = iota
	// waitHighWatermark: acks=all waits for the high watermark to pass the
	// batch.
	waitHighWatermark
)

// waiter is a parked append: answered when its batch is flushed or below
// the high watermark, or when its deadline passes.
type waiter struct {
	id          uint64
	acks        int16
	kind        waitKind
	first, last int64
	deadlineMs  int64 // acks=all only
	// appendTimeMs is the answer's LogAppendTimeMs (-1: CreateTime).
	appendTimeMs int64
}

// acknowledge answers an appended (or duplicate) batch now, or parks it:
// acks=0 and acks=1 answer after the append (acks=1 after the fsync under
// the group-commit policy); acks=all waits for the high watermark.
// appendTimeMs is the answer's LogAppendTimeMs.
func (r *Replica) acknowledge(out *Output, m *AppendBatches, first, last, appendTimeMs int64) {
	switch {
	case m.Acks == 0, m.Acks == 1 && !r.cfg.GroupCommit:
		out.Replies = append(out.Replies, r.success(m.ID, m.Acks, first, appendTimeMs))
	case m.Acks == 1:
		r.waiting = append(r.waiting, &waiter{id: m.ID, acks: m.Acks, kind: waitFlush, first: first, last: last, appendTimeMs: appendTimeMs})
	default:
		r.waiting = append(r.waiting, &waiter{
			id: m.ID, acks: m.Acks, kind: waitHighWatermark, first: first, last: last,
			deadlineMs: m.NowMs + int64(m.TimeoutMs), appendTimeMs: appendTimeMs,
		})
	}
}

// progress advances the high watermark and completes the waits it and the
// flushed offset satisfy.
func (r *Replica) progress(out *Output) {
	r.advanceHighWatermark(out)
	r.completeWaits(out)
}

// completeWaits answers every parked append whose condition holds. An
// acks=all append below the high watermark while the ISR is smaller than
// min.insync.replicas gets NOT_ENOUGH_REPLICAS_AFTER_APPEND (Kafka's
// Partition.checkEnoughReplicasReachOffset).
//
// While the committed ISR is below min.insync.replicas the high watermark
// is frozen (KIP-966), so a batch every maximal-ISR member has is answered
// NOT_ENOUGH_REPLICAS_AFTER_APPEND at once rather than left to time out.
func (r *Replica) completeWaits(out *Output) {
	if len(r.waiting) == 0 {
		return
	}
	replicated := r.hw
	if len(r.isr) < r.cfg.MinInSyncReplicas {
		if end, ok := r.replicatedEnd(); ok && r.role == Leader {
			replicated = max(replicated, end)
		}
	}
	kept := r.waiting[:0]
	for _, w := range r.waiting {
		switch {
		case w.kind == waitFlush && r.flushed > w.last:
			out.Replies = append(out.Replies, r.success(w.id, w.acks, w.first, w.appendTimeMs))
		case w.kind == waitHighWatermark && replicated > w.last && len(r.isr) < r.cfg.MinInSyncReplicas:
			out.Replies = append(out.Replies, r.failure(w.id, w.acks, kerr.NotEnoughReplicasAfterAppend.Code,
				"written, but the ISR is below min.insync.replicas"))
		case w.kind == waitHighWatermark && r.hw > w.last:
			out.Replies = append(out.Replies, r.success(w.id, w.acks, w.first, w.appendTimeMs))
		default:
			kept = append(kept, w)
		}
	}
	clear(r.waiting[len(kept):])
	r.waiting = kept
}

// OnFlushCompleted takes a group-commit round's outcome: the flushed offset
// advances (and with it, under the group-commit policy, the high
// watermark), or, on error, every wait on data below UpTo fails with
// KAFKA_STORAGE_ERROR.
func (r *Replica) OnFlushCompleted(e *FlushCompleted) Output {
	var out Output
	if e.Err != nil {
		kept := r.waiting[:0]
		for _, w := range r.waiting {
			if w.last < e.UpTo {
				out.Replies = append(out.Replies, r.failure(w.id, w.acks, kerr.KafkaStorageError.Code, "flush failed"))
				continue
			}
			kept = append(kept, w)
		}
		clear(r.waiting[len(kept):])
		r.waiting = kept
		r.failPositions(&out, e.UpTo)
		return out
	}
	r.flushed = max(r.flushed, min(e.UpTo, r.leo))
	r.progress(&out)
	r.flushedPositions(&out)
	return out
}

// OnTick advances the replica's clock: acks=all waits past their deadline
// get REQUEST_TIMED_OUT (Kafka's DelayedProduce expiry), and every
// producer.id.expiration.check.interval.ms expired producers are removed.
//
// On a leader it also drives the ISR: an unsettled proposal is re-sent,
// and members lagging for replica.lag.time.max.ms are proposed for removal.
func (r *Replica) OnTick(t *Tick) Output {
	r.observeTime(t.NowMs)
	var out Output
	r.tickISR(&out)
	kept := r.waiting[:0]
	for _, w := range r.waiting {
		if w.kind == waitHighWatermark && w.deadlineMs <= r.nowMs {
			out.Replies = append(out.Replies, r.failure(w.id, w.acks, kerr.RequestTimedOut.Code, "timed out waiting for the in-sync replicas"))
			continue
		}
		kept = append(kept, w)
	}
	clear(r.waiting[len(kept):])
	r.waiting = kept
	r.expireHeld(&out)
	r.expireEarly(&out)
	if r.nowMs-r.lastExpiryMs >= r.cfg.ProducerIDExpirationCheckIntervalMs {
		r.lastExpiryMs = r.nowMs
		out.ExpiredProducers = r.producers.RemoveExpired(r.nowMs, r.cfg.ProducerIDExpirationMs)
	}
	return out
}
