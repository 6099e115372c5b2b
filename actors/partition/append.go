package partition

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/internal/kafkaerr"
	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

// inflight is the append the shell is performing.
type inflight struct {
	seq   uint64
	req   *AppendBatches
	batch ProducerBatch
	// appendTimeMs is the LogAppendTime stamped on the batch, -1 if none.
	appendTimeMs int64
}

// OnAppendBatches decides on a producer's append (phase one): it answers at
// once (an error, or a duplicate's original offsets), or returns the bytes
// to append in Output.Append. While an append is in flight, later requests
// wait in order and are decided when its LogAppended arrives.
func (r *Replica) OnAppendBatches(m *AppendBatches) Output {
	r.observeTime(m.NowMs)
	var out Output
	if r.inflight != nil {
		r.queue = append(r.queue, m)
		return out
	}
	r.decide(m, &out)
	return out
}

// OnLogAppended takes the outcome of the log append (phase two): on success
// it advances the log end offset, records the batch in the producer state
// and answers or parks the request according to its acks; on failure the
// log wrote nothing and the request gets the error.
func (r *Replica) OnLogAppended(e *LogAppended) Output {
	var out Output
	if rp := r.replicating; rp != nil && e.Seq == rp.seq {
		r.replicatedAppended(&out, rp, e)
		return out
	}
	in := r.inflight
	if in == nil || e.Seq != in.seq {
		return out // not the append in flight: stale, ignore
	}
	r.inflight = nil
	if e.Err != nil {
		code := kafkaerr.StorageCode(e.Err)
		out.Replies = append(out.Replies, r.failure(in.req.ID, in.req.Acks, code, kerr.ErrorForCode(code).Error()))
	} else {
		res := e.Result
		r.leo = res.LastOffset + 1
		r.logStart = max(r.logStart, res.LogStartOffset)
		r.latestEpoch = max(r.latestEpoch, r.leaderEpoch)
		in.batch.FirstOffset, in.batch.LastOffset = res.FirstOffset, res.LastOffset
		r.producers.Update(in.batch)
		if r.cfg.GroupCommit {
			out.FlushUpTo = r.leo
		}
		r.acknowledge(&out, in.req, res.FirstOffset, res.LastOffset, in.appendTimeMs)
		r.progress(&out)
	}
	for r.inflight == nil && len(r.queue) > 0 {
		m := r.queue[0]
		r.queue = r.queue[1:]
		r.decide(m, &out)
	}
	r.checkHandOver(&out)
	return out
}

// decide validates m, checks the producer state, and either answers or
// starts the append.
func (r *Replica) decide(m *AppendBatches, out *Output) {
	if r.early(m) {
		return
	}
	if r.handingOver() {
		if r.hold(m) {
			return
		}
		// A controlled shutdown: the leadership is about to go elsewhere.
		res := r.failure(m.ID, m.Acks, kerr.NotLeaderForPartition.Code, "leadership is being handed over")
		out.Replies = append(out.Replies, res)
		return
	}
	pb, reply := r.validate(m)
	if reply != nil {
		out.Replies = append(out.Replies, reply)
		return
	}
	if pb.Idempotent() {
		chk := r.producers.CheckAppend(pb)
		switch chk.Verdict {
		case Duplicate:
			// Kafka answers a duplicate with the original's offsets and,
			// under LogAppendTime, its timestamp.
			appendTime := int64(-1)
			if r.cfg.LogAppendTime {
				appendTime = chk.Original.Timestamp
			}
			r.acknowledge(out, m, chk.Original.FirstOffset, chk.Original.LastOffset, appendTime)
			r.completeWaits(out)
			return
		case OutOfOrderSequence, InvalidProducerEpoch:
			out.Replies = append(out.Replies, r.failure(m.ID, m.Acks, chk.Verdict.ErrorCode(), chk.Reason))
			return
		}
	}
	appendTime := int64(-1)
	if r.cfg.LogAppendTime {
		appendTime = m.NowMs
		stampLogAppendTime(m.Records, appendTime)
		pb.MaxTimestamp = appendTime
	}
	r.nextSeq++
	r.inflight = &inflight{seq: r.nextSeq, req: m, batch: pb, appendTimeMs: appendTime}
	out.Append = &AppendToLog{
		Seq: r.nextSeq, Records: m.Records,
		Options: log.AppendOptions{AssignOffsets: true, LeaderEpoch: r.leaderEpoch, CRCChecked: true},
	}
}

// validate applies Kafka's checks in Kafka's order (KafkaApis,
// Partition.appendRecordsToLeader, UnifiedLog.analyzeAndValidateRecords,
// LogValidator) and returns the batch, or the answer that refuses it.
func (r *Replica) validate(m *AppendBatches) (ProducerBatch, *AppendBatchesResult) {
	fail := func(code int16, format string, args ...any) (ProducerBatch, *AppendBatchesResult) {
		return ProducerBatch{}, r.failure(m.ID, m.Acks, code, fmt.Sprintf(format, args...))
	}
	switch {
	case m.Acks != 0 && m.Acks != 1 && m.Acks != -1:
		return fail(kerr.InvalidRequiredAcks.Code, "acks %d is not -1, 0 or 1", m.Acks)
	case r.role != Leader, m.CheckLeaderEpoch && m.LeaderEpoch != r.leaderEpoch:
		return ProducerBatch{}, r.notLeader(m.ID, m.Acks)
	case m.Acks == -1 && len(r.isr) < r.cfg.MinInSyncReplicas:
		return fail(kerr.NotEnoughReplicas.Code, "%d in-sync replicas, min.insync.replicas is %d", len(r.isr), r.cfg.MinInSyncReplicas)
	case len(m.Records) > 16 && m.Records[16] != batch.CurrentMagic:
		return fail(kerr.InvalidRecord.Code, "record batch magic %d, only 2 is accepted", int8(m.Records[16]))
	}
	batches, err := batch.Split(m.Records)
	if err != nil {
		return fail(kerr.CorruptMessage.Code, "%v", err)
	}
	if len(batches) != 1 {
		return fail(kerr.InvalidRecord.Code, "%d record batches, a produce must carry exactly one", len(batches))
	}
	if len(batches[0]) > int(r.cfg.MaxMessageBytes) {
		return fail(kerr.MessageTooLarge.Code, "record batch of %d bytes exceeds max.message.bytes %d", len(batches[0]), r.cfg.MaxMessageBytes)
	}
	hdr, err := batch.Validate(batches[0])
	if err != nil {
		return fail(kafkaerr.StorageCode(err), "%v", err)
	}
	if msg := clientBatchProblem(hdr.NumRecords, hdr.LastOffsetDelta, hdr.Attributes, hdr.ProducerID, hdr.FirstSequence); msg != "" {
		return fail(kerr.InvalidRecord.Code, "%s", msg)
	}
	if !r.cfg.LogAppendTime {
		if msg := timestampProblem(hdr.FirstTimestamp, hdr.MaxTimestamp, m.NowMs, r.cfg.TimestampBeforeMaxMs, r.cfg.TimestampAfterMaxMs); msg != "" {
			return fail(kerr.InvalidTimestamp.Code, "%s", msg)
		}
	}
	// The records themselves, as Kafka's LogValidator walks them: a batch
	// whose CRC holds but whose records do not parse would stop every
	// consumer that reaches it, and a false record count would burn
	// offsets. An uncompressed batch is walked in place, a compressed one
	// decompressed into a pooled buffer, bounded by batch.MaxDecompressed.
	if err := batch.CheckRecords(batches[0], r.cfg.Compacted, batch.MaxDecompressed); err != nil {
		code, msg := recordsErrorCode(err)
		return fail(code, "%s: %v", msg, err)
	}
	return BatchFromHeader(hdr), nil
}

// timestampProblem applies message.timestamp.before.max.ms and
// message.timestamp.after.max.ms to a CreateTime batch (Kafka's
// LogValidator.validateTimestamp): its first timestamp may be at most
// before ms older than nowMs, its max timestamp at most after ms newer.
// -1 (no timestamp) passes. It returns an INVALID_TIMESTAMP reason, or "".
func timestampProblem(first, maxTs, nowMs, before, after int64) string {
	// nowMs is a wall-clock time and both limits are at least 0 (validated
	// configs), so lo cannot overflow; hi saturates, as a limit may be
	// math.MaxInt64.
	lo, hi := nowMs-before, nowMs+min(after, math.MaxInt64-nowMs)
	switch {
	case first != -1 && first < lo:
		return fmt.Sprintf("timestamp %d of the first record is out of range: timestamps must be within [%d, %d] (message.timestamp.before.max.ms %d)", first, lo, hi, before)
	case maxTs != -1 && maxTs > hi:
		return fmt.Sprintf("max timestamp %d is out of range: timestamps must be within [%d, %d] (message.timestamp.after.max.ms %d)", maxTs, lo, hi, after)
	}
	return ""
}

// recordsErrorCode maps a CheckRecords failure to the code a producer gets
// and a reason. Kafka's LogValidator answers INVALID_RECORD
// (InvalidRecordException) for records that do not match their batch (a
// false count, bad structure, bytes left over) and for a record without a
// key on a compacted topic. Two departures: a compressed stream that does
// not decode gets INVALID_RECORD too, where Kafka's generic KafkaException
// answers UNKNOWN_SERVER_ERROR (the CRC held, so the bytes arrived as sent
// and a retry cannot help); and a batch that decompresses past
// batch.MaxDecompressed, which Kafka has no bound for, gets
// MESSAGE_TOO_LARGE, on which the Java producer splits a batch of several
// records and retries.
func recordsErrorCode(err error) (int16, string) {
	switch {
	case errors.Is(err, batch.ErrOverLimit):
		return kafkaerr.Code(err), fmt.Sprintf("record batch decompresses past %d bytes", batch.MaxDecompressed)
	case errors.Is(err, batch.ErrNoKey):
		return kafkaerr.Code(err), "compacted topic cannot accept a record without a key"
	}
	// Whatever the codec's sentinel: batch.ErrCorrupt is CORRUPT_MESSAGE
	// for a batch's framing and CRC, not for the records inside.
	return kerr.InvalidRecord.Code, "invalid records"
}

// clientBatchProblem applies LogValidator's checks of a producer's batch:
// an INVALID_RECORD reason, or "".
func clientBatchProblem(count, lastOffsetDelta int32, attrs int16, pid int64, firstSeq int32) string {
	switch {
	case count <= 0:
		return fmt.Sprintf("invalid record count %d", count)
	case int64(lastOffsetDelta)+1 != int64(count):
		return fmt.Sprintf("last offset delta %d inconsistent with record count %d", lastOffsetDelta, count)
	case attrs&batch.ControlBit != 0:
		return "clients are not allowed to write control records"
	case pid >= 0 && firstSeq < 0:
		return fmt.Sprintf("producer %d sent invalid sequence number %d", pid, firstSeq)
	}
	return ""
}

// Offsets of the record batch v2 header fields that LogAppendTime changes
// (docs/clients.md rule 13).
const (
	attributesAt   = 21
	maxTimestampAt = 35
)

// stampLogAppendTime applies message.timestamp.type=LogAppendTime to one
// validated v2 batch in place, as Kafka's LogValidator does without
// recompressing: the max timestamp becomes nowMs, the timestamp-type
// attribute bit is set, and the CRC (which covers both) is recomputed.
// Consumers then read nowMs as every record's timestamp.
func stampLogAppendTime(b []byte, nowMs int64) {
	attrs := binary.BigEndian.Uint16(b[attributesAt:])
	binary.BigEndian.PutUint16(b[attributesAt:], attrs|batch.LogAppendTimeBit)
	binary.BigEndian.PutUint64(b[maxTimestampAt:], uint64(nowMs))
	batch.SetCRC(b)
}
