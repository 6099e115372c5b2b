package partition

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/internal/kafkaerr"
	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

// The follower's side of replication (Kafka's ReplicaFetcherThread and
// Partition.appendRecordsToFollower): the replica fetcher hands each
// fetched partition's records to the follower partition actor, which
// appends them as they are (offsets and leader epochs kept), replays their
// producer state, follows the leader's high watermark and log start
// offset, and answers where the next fetch starts. A diverging or
// out-of-range fetch makes it truncate; the producer state is then
// rebuilt for the log that is left.

// replicatedAppend is the follower append the shell is performing.
type replicatedAppend struct {
	seq uint64
	// id is the ReplicaPosition's ID.
	id      uint64
	req     *AppendReplicated
	records []byte
	batches []ProducerBatch
	// epoch is the leader epoch of the last batch.
	epoch int32
}

// pendingTruncation is the truncation the shell is performing; then, if
// set, is the append to start after it.
type pendingTruncation struct {
	seq  uint64
	id   uint64
	then *replicatedAppend
}

// pendingPosition is a ReplicaPosition waiting, under the group-commit
// policy, for the flush of everything below upTo.
type pendingPosition struct {
	id   uint64
	upTo int64
}

// followerFence returns the error of a replication request of leaderEpoch
// (0: none): NOT_LEADER_OR_FOLLOWER on the leader, FENCED_LEADER_EPOCH for
// an older epoch, UNKNOWN_LEADER_EPOCH for a newer one.
func (r *Replica) followerFence(leaderEpoch int32) int16 {
	switch {
	case r.role == Leader:
		return kerr.NotLeaderForPartition.Code
	case leaderEpoch < r.leaderEpoch:
		return kerr.FencedLeaderEpoch.Code
	case leaderEpoch > r.leaderEpoch:
		return kerr.UnknownLeaderEpoch.Code
	}
	return 0
}

// busy reports whether an append or truncation is being performed (never
// between two messages in the actor, whose shell performs them at once).
func (r *Replica) busy() bool {
	return r.inflight != nil || r.replicating != nil || r.truncating != nil
}

// position is the answer with the follower's current fetch position.
func (r *Replica) position(id uint64, code int16) *ReplicaPosition {
	return &ReplicaPosition{ID: id, ErrorCode: code, FetchOffset: r.localEnd(), LastFetchedEpoch: -1, LeaderEpoch: r.leaderEpoch}
}

// answerPosition answers id with the current position, at once or, under
// the group-commit policy with data not yet flushed, once it is.
func (r *Replica) answerPosition(out *Output, id uint64) {
	if r.cfg.GroupCommit && r.flushed < r.leo {
		r.positions = append(r.positions, pendingPosition{id: id, upTo: r.leo})
		out.FlushUpTo = max(out.FlushUpTo, r.leo)
		return
	}
	out.Positions = append(out.Positions, r.position(id, 0))
}

// refuse answers id with an error and the current position.
func refuse(out *Output, r *Replica, id uint64, code int16) {
	out.Positions = append(out.Positions, r.position(id, code))
}

// flushedPositions answers the positions the flushed offset now covers.
func (r *Replica) flushedPositions(out *Output) {
	kept := r.positions[:0]
	for _, p := range r.positions {
		if r.flushed >= min(p.upTo, r.leo) {
			out.Positions = append(out.Positions, r.position(p.id, 0))
			continue
		}
		kept = append(kept, p)
	}
	clear(r.positions[len(kept):])
	r.positions = kept
}

// failPositions answers KAFKA_STORAGE_ERROR to the positions waiting for a
// flush below upTo, which failed.
func (r *Replica) failPositions(out *Output, upTo int64) {
	kept := r.positions[:0]
	for _, p := range r.positions {
		if p.upTo <= upTo {
			refuse(out, r, p.id, kerr.KafkaStorageError.Code)
			continue
		}
		kept = append(kept, p)
	}
	clear(r.positions[len(kept):])
	r.positions = kept
}

// answerPositions answers every waiting position with code (the replica
// became leader: its fetcher must stop).
func (r *Replica) answerPositions(out *Output, code int16) {
	for _, p := range r.positions {
		refuse(out, r, p.id, code)
	}
	r.positions = nil
}

// OnAppendReplicated takes the records of one fetch (see AppendReplicated).
// Whole batches are validated (CRC included) and appended as they are, from
// the log end offset: batches wholly below it are skipped, and a first batch
// that starts below the start of an empty log restarts the log at its base
// offset first (the leader's log start may fall inside a batch). After the
// append the batches' producer state is replayed, the high watermark
// follows the leader's (never past the log end, never backwards) and the
// log start offset follows the leader's (never past the high watermark).
func (r *Replica) OnAppendReplicated(m *AppendReplicated) Output {
	r.observeTime(m.NowMs)
	var out Output
	if code := r.followerFence(m.LeaderEpoch); code != 0 {
		refuse(&out, r, m.ID, code)
		return out
	}
	if r.busy() || m.FetchOffset != r.leo {
		r.answerPosition(&out, m.ID)
		return out
	}
	ra, code := r.replicatedBatches(m)
	if code != 0 {
		refuse(&out, r, m.ID, code)
		return out
	}
	if ra == nil {
		r.followLeader(&out, m)
		r.answerPosition(&out, m.ID)
		return out
	}
	r.nextSeq++
	ra.seq = r.nextSeq
	if first := ra.batches[0].FirstOffset; first < r.leo {
		// Only an empty log may restart below its end (Kafka's
		// UnexpectedAppendOffsetException handling).
		if r.leo != r.logStart {
			refuse(&out, r, m.ID, kerr.UnknownServerError.Code)
			return out
		}
		r.startTruncation(&out, m.ID, first, true, ra)
		return out
	}
	r.startReplicatedAppend(&out, ra)
	return out
}

// replicatedBatches validates m's records and returns the append to make
// (nil: nothing past the log end), or an error code.
func (r *Replica) replicatedBatches(m *AppendReplicated) (*replicatedAppend, int16) {
	bs, err := batch.Split(m.Records)
	if err != nil && !errors.Is(err, batch.ErrTruncated) {
		return nil, kerr.CorruptMessage.Code
	}
	ra := &replicatedAppend{id: m.ID, req: m, epoch: -1}
	from, to := -1, 0
	pos := 0
	for _, b := range bs {
		start := pos
		pos += len(b)
		h, err := batch.Validate(b)
		if err != nil {
			return nil, kafkaerr.StorageCode(err)
		}
		pb := BatchFromHeader(h)
		if pb.LastOffset < r.leo {
			continue // already held
		}
		if from < 0 {
			from = start
		}
		to = pos
		ra.batches = append(ra.batches, pb)
		ra.epoch = h.PartitionLeaderEpoch
	}
	if from < 0 {
		return nil, 0
	}
	ra.records = m.Records[from:to]
	return ra, 0
}

// startReplicatedAppend hands ra to the shell.
func (r *Replica) startReplicatedAppend(out *Output, ra *replicatedAppend) {
	r.replicating = ra
	out.Append = &AppendToLog{Seq: ra.seq, Records: ra.records, Options: log.AppendOptions{CRCChecked: true}}
}

// replicatedAppended takes the outcome of a follower append.
func (r *Replica) replicatedAppended(out *Output, ra *replicatedAppend, e *LogAppended) {
	r.replicating = nil
	if e.Err != nil {
		refuse(out, r, ra.id, kafkaerr.StorageCode(e.Err))
		return
	}
	r.leo = e.Result.LastOffset + 1
	r.logStart = max(r.logStart, e.Result.LogStartOffset)
	r.latestEpoch = max(r.latestEpoch, ra.epoch)
	for _, b := range ra.batches {
		r.producers.ObserveBatch(b)
	}
	if r.cfg.GroupCommit {
		out.FlushUpTo = r.leo
	}
	r.followLeader(out, ra.req)
	r.answerPosition(out, ra.id)
}

// followLeader moves the follower's high watermark to min(the leader's,
// its log end offset), never backwards (Kafka's follower HW), and asks for
// the log start offset to follow the leader's, up to the high watermark.
func (r *Replica) followLeader(out *Output, m *AppendReplicated) {
	if hw := min(m.LeaderHighWatermark, r.leo); hw > r.hw {
		r.hw = hw
		out.HighWatermarkChanged = true
	}
	if start := min(m.LeaderLogStartOffset, r.hw); start > r.logStart {
		out.AdvanceLogStart = start
	}
}

// OnTruncateDiverging truncates to min(m.EndOffset, localEpochEnd), where
// localEpochEnd is the end offset of m.Epoch in this replica's own log
// (log.Log.EndOffsetForEpoch; -1 when its log has no epoch at or below
// m.Epoch's end to compare). A leader that did not know the epoch at all
// (EndOffset -1) makes it truncate to its high watermark, as Kafka does.
func (r *Replica) OnTruncateDiverging(m *TruncateDiverging, localEpochEnd int64) Output {
	var out Output
	if code := r.followerFence(m.LeaderEpoch); code != 0 {
		refuse(&out, r, m.ID, code)
		return out
	}
	if r.busy() {
		r.answerPosition(&out, m.ID)
		return out
	}
	target := m.EndOffset
	if target < 0 {
		target = r.hw
	}
	if localEpochEnd >= 0 {
		target = min(target, localEpochEnd)
	}
	if target >= r.leo {
		r.answerPosition(&out, m.ID)
		return out
	}
	r.startTruncation(&out, m.ID, max(target, 0), false, nil)
	return out
}

// OnResetToLeaderStart handles OFFSET_OUT_OF_RANGE (see ResetToLeaderStart).
func (r *Replica) OnResetToLeaderStart(m *ResetToLeaderStart) Output {
	var out Output
	if code := r.followerFence(m.LeaderEpoch); code != 0 {
		refuse(&out, r, m.ID, code)
		return out
	}
	switch {
	case r.busy():
		r.answerPosition(&out, m.ID)
	case m.LeaderLogEndOffset >= 0 && r.leo > m.LeaderLogEndOffset:
		r.startTruncation(&out, m.ID, m.LeaderLogEndOffset, false, nil)
	case r.leo < m.LogStartOffset:
		r.startTruncation(&out, m.ID, m.LogStartOffset, true, nil)
	default:
		r.answerPosition(&out, m.ID)
	}
	return out
}

// startTruncation hands a truncation to the shell.
func (r *Replica) startTruncation(out *Output, id uint64, offset int64, startAt bool, then *replicatedAppend) {
	r.nextSeq++
	r.truncating = &pendingTruncation{seq: r.nextSeq, id: id, then: then}
	out.Truncate = &TruncateLog{Seq: r.nextSeq, Offset: offset, StartAt: startAt}
}

// OnLogTruncated takes the outcome of a TruncateLog: the log's offsets, the
// rebuilt producer state, the high watermark clamped to the new end; then
// the append that waited for it, or the position answer.
func (r *Replica) OnLogTruncated(e *LogTruncated) Output {
	var out Output
	t := r.truncating
	if t == nil || e.Seq != t.seq {
		return out
	}
	r.truncating = nil
	r.logStart, r.leo = e.LogStartOffset, e.LogEndOffset
	r.flushed = min(e.FlushedOffset, r.leo)
	r.latestEpoch = e.LatestEpoch
	if e.Producers != nil {
		r.producers = e.Producers
	}
	if hw := min(max(r.hw, r.logStart), r.leo); hw != r.hw {
		r.hw = hw
		out.HighWatermarkChanged = true
	}
	if e.Err != nil {
		refuse(&out, r, t.id, kerr.KafkaStorageError.Code)
		return out
	}
	if ra := t.then; ra != nil {
		if len(ra.batches) == 0 || ra.batches[0].FirstOffset != r.leo {
			refuse(&out, r, t.id, kerr.UnknownServerError.Code)
			return out
		}
		r.nextSeq++
		ra.seq = r.nextSeq
		r.startReplicatedAppend(&out, ra)
		return out
	}
	r.answerPosition(&out, t.id)
	return out
}
