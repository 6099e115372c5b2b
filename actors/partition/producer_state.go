package partition

import (
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Producer-state constants, as Apache Kafka defines them.
const (
	// BatchesToRetain is how many of a producer's latest batches are kept
	// for duplicate detection (Kafka's NUM_BATCHES_TO_RETAIN; it is also
	// the most in-flight requests an idempotent producer may have).
	BatchesToRetain = 5
	// NoProducerEpoch is the epoch of an entry that has none (Kafka's
	// RecordBatch.NO_PRODUCER_EPOCH).
	NoProducerEpoch int16 = -1
	// NoOffset marks an absent offset (no open transaction).
	NoOffset int64 = -1
)

// BatchMetadata is one retained batch of a producer: its sequence range,
// the offsets it was appended at, and its max timestamp.
type BatchMetadata struct {
	FirstSeq, LastSeq       int32
	FirstOffset, LastOffset int64
	Timestamp               int64
}

// ProducerEntry is the state of one producer id on this partition.
type ProducerEntry struct {
	ProducerID int64
	Epoch      int16
	// Batches holds up to BatchesToRetain batches of Epoch, oldest first.
	Batches []BatchMetadata
	// LastTimestamp is the max timestamp of the producer's latest batch or
	// marker; expiry counts from it.
	LastTimestamp int64
	// CoordinatorEpoch is the epoch of the transaction coordinator that
	// wrote the producer's latest marker, -1 if none. Not yet read from
	// markers (transactions are not served yet).
	CoordinatorEpoch int32
	// CurrentTxnFirstOffset is the first offset of the producer's open
	// transaction, NoOffset if none. An entry with an open transaction never
	// expires.
	CurrentTxnFirstOffset int64
}

// lastSeq is the last sequence of the latest batch; ok is false without
// batches.
func (e *ProducerEntry) lastSeq() (int32, bool) {
	if len(e.Batches) == 0 {
		return 0, false
	}
	return e.Batches[len(e.Batches)-1].LastSeq, true
}

// findBatch returns the retained batch with exactly this sequence range.
func (e *ProducerEntry) findBatch(first, last int32) (BatchMetadata, bool) {
	for _, b := range e.Batches {
		if b.FirstSeq == first && b.LastSeq == last {
			return b, true
		}
	}
	return BatchMetadata{}, false
}

// setEpoch moves the entry to epoch, dropping the batches of another epoch
// (Kafka's ProducerStateEntry.maybeUpdateProducerEpoch).
func (e *ProducerEntry) setEpoch(epoch int16) {
	if e.Epoch != epoch {
		e.Epoch = epoch
		e.Batches = e.Batches[:0]
	}
}

// addBatch retains b, dropping the oldest beyond BatchesToRetain.
func (e *ProducerEntry) addBatch(b BatchMetadata) {
	if len(e.Batches) == BatchesToRetain {
		copy(e.Batches, e.Batches[1:])
		e.Batches = e.Batches[:BatchesToRetain-1]
	}
	e.Batches = append(e.Batches, b)
	e.LastTimestamp = b.Timestamp
}

// Verdict is CheckAppend's decision on a producer's batch.
type Verdict uint8

// Verdicts of CheckAppend.
const (
	// Accept: append the batch.
	Accept Verdict = iota
	// Duplicate: the batch was appended before; do not append it again and
	// answer success with the original batch's offsets.
	Duplicate
	// OutOfOrderSequence: the first sequence does not follow the last one.
	OutOfOrderSequence
	// InvalidProducerEpoch: the epoch is older than the producer's.
	InvalidProducerEpoch
)

// ErrorCode is the Kafka error code of the verdict (0 for Accept and
// Duplicate: a duplicate is answered as a success, as Kafka does).
func (v Verdict) ErrorCode() int16 {
	switch v {
	case OutOfOrderSequence:
		return kerr.OutOfOrderSequenceNumber.Code
	case InvalidProducerEpoch:
		return kerr.InvalidProducerEpoch.Code
	}
	return 0
}

// String names the verdict.
func (v Verdict) String() string {
	return [...]string{"accept", "duplicate", "out-of-order-sequence", "invalid-producer-epoch"}[v]
}

// AppendCheck is the result of CheckAppend.
type AppendCheck struct {
	Verdict Verdict
	// Original is the earlier append of a Duplicate.
	Original BatchMetadata
	// Reason explains a rejection, for the error message and the log line.
	Reason string
}

// ProducerState is one partition's idempotent-producer state: per producer
// id, its epoch and its last BatchesToRetain batches (Kafka's
// ProducerStateManager). It does no I/O and reads no clock.
type ProducerState struct {
	producers map[int64]*ProducerEntry
	// endOffset is the offset after the last batch observed or updated:
	// a snapshot taken now covers the log below it.
	endOffset int64
}

// NewProducerState returns an empty state covering no offsets.
func NewProducerState() *ProducerState {
	return &ProducerState{producers: make(map[int64]*ProducerEntry)}
}

// Len is the number of producer ids held.
func (s *ProducerState) Len() int { return len(s.producers) }

// EndOffset is the offset after the last batch the state has seen: replay
// the log from here after LoadSnapshot.
func (s *ProducerState) EndOffset() int64 { return s.endOffset }

// SkipTo records that the state covers the log below offset (nothing
// between EndOffset and offset concerns a producer: the log ends there, or
// its start moved past it); EndOffset never moves back.
func (s *ProducerState) SkipTo(offset int64) { s.endOffset = max(s.endOffset, offset) }

// Entry returns a copy of a producer's entry.
func (s *ProducerState) Entry(pid int64) (ProducerEntry, bool) {
	e, ok := s.producers[pid]
	if !ok {
		return ProducerEntry{}, false
	}
	c := *e
	c.Batches = append([]BatchMetadata(nil), e.Batches...)
	return c, true
}

// ProducerIDs returns the producer ids held, ascending.
func (s *ProducerState) ProducerIDs() []int64 {
	ids := make([]int64, 0, len(s.producers))
	for id := range s.producers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// CheckAppend decides on a batch a producer sends to the leader, without
// changing the state. b's offsets are not read. The rules are Kafka's
// (UnifiedLog.analyzeAndValidateProducerState, ProducerAppendInfo):
//
//  1. The same epoch and exactly the sequence range of a retained batch:
//     Duplicate, with that batch's offsets.
//  2. An epoch below the producer's: InvalidProducerEpoch.
//  3. A producer id with no state, or whose entry has no epoch: Accept,
//     whatever the first sequence (KIP-360; the state may have expired or
//     been removed with the log's head).
//  4. A new (higher) epoch: the first sequence must be 0.
//  5. The same epoch: the first sequence must follow the last retained
//     batch's last sequence, wrapping from math.MaxInt32 to 0 (with no
//     batch retained, it must be 0).
//
// Anything else is OutOfOrderSequence, including an old sequence that is
// no longer among the retained batches.
func (s *ProducerState) CheckAppend(b ProducerBatch) AppendCheck {
	e, ok := s.producers[b.ProducerID]
	if !ok || e.Epoch == NoProducerEpoch {
		return AppendCheck{Verdict: Accept}
	}
	if b.ProducerEpoch == e.Epoch {
		if orig, dup := e.findBatch(b.FirstSeq, b.LastSeq); dup {
			return AppendCheck{Verdict: Duplicate, Original: orig}
		}
	}
	if b.ProducerEpoch < e.Epoch {
		return reject(InvalidProducerEpoch, "producer %d epoch %d is older than the current epoch %d", b.ProducerID, b.ProducerEpoch, e.Epoch)
	}
	if b.ProducerEpoch != e.Epoch {
		if b.FirstSeq != 0 {
			return reject(OutOfOrderSequence, "producer %d new epoch %d must start at sequence 0, got %d (current epoch %d)", b.ProducerID, b.ProducerEpoch, b.FirstSeq, e.Epoch)
		}
		return AppendCheck{Verdict: Accept}
	}
	last, has := e.lastSeq()
	if !has {
		last = -1
	}
	if !inSequence(last, b.FirstSeq) {
		return reject(OutOfOrderSequence, "producer %d epoch %d: sequence %d does not follow %d", b.ProducerID, b.ProducerEpoch, b.FirstSeq, last)
	}
	return AppendCheck{Verdict: Accept}
}

func reject(v Verdict, format string, args ...any) AppendCheck {
	return AppendCheck{Verdict: v, Reason: fmt.Sprintf(format, args...)}
}

// Update records a batch the leader appended after CheckAppend accepted it;
// b's offsets are those the log assigned.
func (s *ProducerState) Update(b ProducerBatch) { s.apply(b) }

// ObserveBatch records a batch read back from the log (a follower's
// replicated batches, a restart's replay after LoadSnapshot), in log order,
// without checking sequences (Kafka's replication origin). Batches without
// a producer id only advance EndOffset; a control batch (a transaction
// marker) moves the producer to its epoch and closes its transaction.
func (s *ProducerState) ObserveBatch(b ProducerBatch) { s.apply(b) }

func (s *ProducerState) apply(b ProducerBatch) {
	s.endOffset = max(s.endOffset, b.LastOffset+1)
	if !b.Idempotent() {
		return
	}
	e := s.producers[b.ProducerID]
	if e == nil {
		e = &ProducerEntry{ProducerID: b.ProducerID, Epoch: NoProducerEpoch, CoordinatorEpoch: -1, CurrentTxnFirstOffset: NoOffset}
		s.producers[b.ProducerID] = e
	}
	e.setEpoch(b.ProducerEpoch)
	if b.Control {
		e.CurrentTxnFirstOffset = NoOffset
		e.LastTimestamp = b.MaxTimestamp
		return
	}
	if b.Transactional && e.CurrentTxnFirstOffset == NoOffset {
		e.CurrentTxnFirstOffset = b.FirstOffset
	}
	e.addBatch(BatchMetadata{FirstSeq: b.FirstSeq, LastSeq: b.LastSeq, FirstOffset: b.FirstOffset, LastOffset: b.LastOffset, Timestamp: b.MaxTimestamp})
}

// RemoveExpired removes the producers without an open transaction whose
// last timestamp is at least expirationMs before nowMs (Kafka's
// ProducerStateManager.removeExpiredProducers with
// producer.id.expiration.ms), and returns their ids, ascending.
func (s *ProducerState) RemoveExpired(nowMs, expirationMs int64) []int64 {
	var gone []int64
	for id, e := range s.producers {
		if e.CurrentTxnFirstOffset == NoOffset && nowMs-e.LastTimestamp >= expirationMs {
			gone = append(gone, id)
		}
	}
	for _, id := range gone {
		delete(s.producers, id)
	}
	sort.Slice(gone, func(i, j int) bool { return gone[i] < gone[j] })
	return gone
}
