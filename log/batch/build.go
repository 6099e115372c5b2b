package batch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Header values Kafka writes where a field does not apply.
const (
	// NoProducerID is the producer id of a batch from a producer that is not
	// idempotent.
	NoProducerID = -1
	// NoProducerEpoch is the producer epoch that goes with NoProducerID.
	NoProducerEpoch = -1
	// NoSequence is the base sequence that goes with NoProducerID.
	NoSequence = -1
	// NoTimestamp is the max timestamp of a batch without records.
	NoTimestamp = -1
	// NoPartitionLeaderEpoch is what producers write before the leader sets
	// the partition leader epoch.
	NoPartitionLeaderEpoch = -1
)

// ErrBuild is returned, wrapped with detail, for Options or records that
// Build cannot encode as a valid batch.
var ErrBuild = errors.New("batch: cannot build record batch")

// Options are the header fields of a batch that Build writes. The zero value
// is an uncompressed, non-transactional CreateTime batch at offset 0 from
// idempotent producer 0; set ProducerID, ProducerEpoch and BaseSequence to
// the No* constants for a batch from a producer that is not idempotent.
type Options struct {
	// Codec compresses the records section: CodecNone to CodecZstd.
	Codec int16
	// ProducerID is the producer's id, NoProducerID if not idempotent.
	ProducerID int64
	// ProducerEpoch is the producer's epoch, NoProducerEpoch if not
	// idempotent.
	ProducerEpoch int16
	// BaseSequence is the first record's sequence number, NoSequence if not
	// idempotent.
	BaseSequence int32
	// Transactional sets the transactional attribute bit.
	Transactional bool
	// Control sets the control attribute bit; the caller encodes the control
	// record's key and value.
	Control bool
	// LogAppendTime sets the timestamp type to LogAppendTime; the broker's
	// append time then belongs in MaxTimestamp.
	LogAppendTime bool
	// PartitionLeaderEpoch is written as is (producers write
	// NoPartitionLeaderEpoch).
	PartitionLeaderEpoch int32
	// BaseOffset is the offset of the record with offset delta 0.
	BaseOffset int64
	// BaseTimestamp is the timestamp, in milliseconds, that record timestamp
	// deltas count from. With DeleteHorizon it is the delete horizon.
	BaseTimestamp int64
	// DeleteHorizon sets attribute bit 0x40: BaseTimestamp then holds the
	// time after which the cleaner may drop tombstones and markers, as
	// Kafka's cleaner writes it (KIP-534).
	DeleteHorizon bool
	// LastOffsetDelta, if set, overrides the last offset delta, which is
	// otherwise the last record's offset delta (0 without records). The
	// cleaner keeps a batch's original value when it drops trailing records,
	// or all of them. It must not be below the last record's delta.
	LastOffsetDelta *int32
	// MaxTimestamp, if set, overrides the max timestamp, which is otherwise
	// the largest record timestamp (NoTimestamp without records).
	MaxTimestamp *int64
}

// attributes returns the attribute bits opts describe.
func (opts *Options) attributes() int16 {
	a := opts.Codec
	if opts.LogAppendTime {
		a |= LogAppendTimeBit
	}
	if opts.Transactional {
		a |= TransactionalBit
	}
	if opts.Control {
		a |= ControlBit
	}
	if opts.DeleteHorizon {
		a |= DeleteHorizonBit
	}
	return a
}

// Build encodes records as one batch with the header opts describe, and
// returns it with its Length, NumRecords, LastOffsetDelta, MaxTimestamp, magic
// and CRC set. It honours each record's OffsetDelta and TimestampDelta64 (or
// TimestampDelta), which must leave gaps where a compacted batch has them;
// offset deltas must be non-negative and increasing. It sets each record's
// Length in its encoding but does not modify records. Without records it
// writes a bare header with an empty records section, whatever the codec, as
// Kafka's cleaner does. Errors wrap ErrBuild.
func Build(opts Options, records []kmsg.Record) ([]byte, error) {
	if opts.Codec < CodecNone || opts.Codec > CodecZstd {
		return nil, fmt.Errorf("%w: compression codec %d", ErrBuild, opts.Codec)
	}
	size, err := checkRecords(records)
	if err != nil {
		return nil, err
	}
	lastDelta, err := lastOffsetDelta(&opts, records)
	if err != nil {
		return nil, err
	}
	rb := kmsg.RecordBatch{
		FirstOffset:          opts.BaseOffset,
		PartitionLeaderEpoch: opts.PartitionLeaderEpoch,
		Magic:                CurrentMagic,
		Attributes:           opts.attributes(),
		LastOffsetDelta:      lastDelta,
		FirstTimestamp:       opts.BaseTimestamp,
		MaxTimestamp:         maxTimestamp(&opts, records),
		ProducerID:           opts.ProducerID,
		ProducerEpoch:        opts.ProducerEpoch,
		FirstSequence:        opts.BaseSequence,
		NumRecords:           int32(len(records)),
	}
	b := rb.AppendTo(make([]byte, 0, HeaderSize+size))
	for i := range records {
		r := records[i]
		r.Length = int32(bodySize(&r))
		b = r.AppendTo(b)
	}
	if opts.Codec != CodecNone && len(records) > 0 {
		section, err := Compress(opts.Codec, b[HeaderSize:])
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBuild, err)
		}
		b = append(b[:HeaderSize], section...)
	}
	if len(b) > maxLength+LengthPrefix {
		return nil, fmt.Errorf("%w: batch of %d bytes", ErrBuild, len(b))
	}
	binary.BigEndian.PutUint32(b[offLength:], uint32(len(b)-LengthPrefix))
	SetCRC(b)
	return b, nil
}

// checkRecords checks that the offset deltas increase from zero up and
// returns the encoded size of the records.
func checkRecords(records []kmsg.Record) (int, error) {
	if len(records) > maxLength/minRecordSize {
		return 0, fmt.Errorf("%w: %d records", ErrBuild, len(records))
	}
	size := 0
	for i := range records {
		r := &records[i]
		if r.OffsetDelta < 0 {
			return 0, fmt.Errorf("%w: record %d: negative offset delta %d", ErrBuild, i, r.OffsetDelta)
		}
		if i > 0 && r.OffsetDelta <= records[i-1].OffsetDelta {
			return 0, fmt.Errorf("%w: record %d: offset delta %d after %d", ErrBuild, i, r.OffsetDelta, records[i-1].OffsetDelta)
		}
		body := bodySize(r)
		if body > maxLength-size {
			return 0, fmt.Errorf("%w: records exceed %d bytes at record %d", ErrBuild, maxLength, i)
		}
		size += uvarintLen(zigzag(int64(body))) + body
	}
	return size, nil
}

// lastOffsetDelta is the override if set, else the last record's delta.
func lastOffsetDelta(opts *Options, records []kmsg.Record) (int32, error) {
	var last int32
	if len(records) > 0 {
		last = records[len(records)-1].OffsetDelta
	}
	if opts.LastOffsetDelta == nil {
		return last, nil
	}
	if d := *opts.LastOffsetDelta; d < last {
		return 0, fmt.Errorf("%w: last offset delta %d below the last record's %d", ErrBuild, d, last)
	}
	return *opts.LastOffsetDelta, nil
}

// maxTimestamp is the override if set, else the largest record timestamp.
func maxTimestamp(opts *Options, records []kmsg.Record) int64 {
	if opts.MaxTimestamp != nil {
		return *opts.MaxTimestamp
	}
	if len(records) == 0 {
		return NoTimestamp
	}
	ts := opts.BaseTimestamp + timestampDelta(&records[0])
	for i := range records[1:] {
		ts = max(ts, opts.BaseTimestamp+timestampDelta(&records[i+1]))
	}
	return ts
}

// bodySize is the encoded size of r after its length prefix, as kmsg's
// Record.AppendTo writes it.
func bodySize(r *kmsg.Record) int {
	n := 1 + uvarintLen(zigzag(timestampDelta(r))) + uvarintLen(zigzag(int64(r.OffsetDelta)))
	n += bytesSize(r.Key) + bytesSize(r.Value) + uvarintLen(zigzag(int64(len(r.Headers))))
	for i := range r.Headers {
		h := &r.Headers[i]
		n += uvarintLen(zigzag(int64(len(h.Key)))) + len(h.Key) + bytesSize(h.Value)
	}
	return n
}

// bytesSize is the size of a varint-prefixed nullable byte slice.
func bytesSize(b []byte) int {
	if b == nil {
		return 1 // the varint -1
	}
	return uvarintLen(zigzag(int64(len(b)))) + len(b)
}

func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func uvarintLen(u uint64) int { return (bits.Len64(u|1) + 6) / 7 }
