package partition

import (
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/log/batch"
)

// ProducerBatch is what the producer state needs to know about one batch:
// its producer, its sequence range and, once appended, its offsets.
type ProducerBatch struct {
	ProducerID    int64
	ProducerEpoch int16
	// FirstSeq and LastSeq are the sequences of the first and last record;
	// LastSeq wraps past math.MaxInt32 to 0, as Kafka's sequences do.
	FirstSeq, LastSeq int32
	// FirstOffset and LastOffset are the offsets the log assigned; unset
	// (ignored) when checking a batch before its append.
	FirstOffset, LastOffset int64
	// MaxTimestamp is the batch's max timestamp: Kafka keeps it as the
	// producer's last timestamp, which producer expiry counts from.
	MaxTimestamp  int64
	Transactional bool
	Control       bool
}

// BatchFromHeader reads a ProducerBatch from a record batch header (as
// batch.Validate or batch.ParseHeader return it).
func BatchFromHeader(h kmsg.RecordBatch) ProducerBatch {
	return ProducerBatch{
		ProducerID:    h.ProducerID,
		ProducerEpoch: h.ProducerEpoch,
		FirstSeq:      h.FirstSequence,
		LastSeq:       incrementSequence(h.FirstSequence, h.LastOffsetDelta),
		FirstOffset:   h.FirstOffset,
		LastOffset:    h.FirstOffset + int64(h.LastOffsetDelta),
		MaxTimestamp:  h.MaxTimestamp,
		Transactional: h.Attributes&batch.TransactionalBit != 0,
		Control:       h.Attributes&batch.ControlBit != 0,
	}
}

// Idempotent reports whether the batch carries a producer id.
func (b ProducerBatch) Idempotent() bool { return b.ProducerID >= 0 }

// incrementSequence adds delta to seq, wrapping past math.MaxInt32 to 0
// (Kafka's DefaultRecordBatch.incrementSequence).
func incrementSequence(seq, delta int32) int32 {
	if seq > math.MaxInt32-delta {
		return delta - (math.MaxInt32 - seq) - 1
	}
	return seq + delta
}

// inSequence reports whether next directly follows last, wrapping from
// math.MaxInt32 to 0 (Kafka's ProducerAppendInfo.inSequence).
func inSequence(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == math.MaxInt32)
}
