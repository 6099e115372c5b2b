package batch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Layout of a record batch v2 header (magic 2). Offsets 0-20 lie outside the
// CRC; the CRC-32C at 17 covers attributes (21) to the end of the batch.
const (
	offBaseOffset      = 0
	offLength          = 8
	offLeaderEpoch     = 12
	offMagic           = 16
	offCRC             = 17
	offAttributes      = 21
	offLastOffsetDelta = 23
	offBaseTimestamp   = 27
	offMaxTimestamp    = 35
	offProducerID      = 43
	offProducerEpoch   = 51
	offBaseSequence    = 53
	offNumRecords      = 57

	// HeaderSize is the size of the fixed batch header, records follow it.
	HeaderSize = 61
	// LengthPrefix is the number of bytes before the batch length field's
	// count starts: baseOffset (8) and length (4).
	LengthPrefix = 12
	// minLength is the smallest legal value of the length field.
	minLength = HeaderSize - LengthPrefix
	// maxLength is the largest legal value of the length field: the whole
	// batch, prefix included, must fit in an int32 (and an int on 32-bit
	// platforms).
	maxLength = math.MaxInt32 - LengthPrefix
	// CurrentMagic is the only batch format weir stores.
	CurrentMagic = 2
)

// Attribute bits of a batch.
const (
	CodecMask        = 0x07
	CodecNone        = 0
	CodecGzip        = 1
	CodecSnappy      = 2
	CodecLz4         = 3
	CodecZstd        = 4
	LogAppendTimeBit = 0x08
	TransactionalBit = 0x10
	ControlBit       = 0x20
	DeleteHorizonBit = 0x40
)

// Errors of batch decoding. Each is wrapped with detail.
var (
	// ErrCorrupt is a batch whose length, CRC or fields are inconsistent.
	ErrCorrupt = errors.New("batch: corrupt record batch")
	// ErrUnsupportedMagic is a batch that is not record batch v2.
	ErrUnsupportedMagic = errors.New("batch: unsupported magic")
	// ErrTruncated is a buffer that ends inside a batch.
	ErrTruncated = errors.New("batch: truncated record batch")
	// ErrOverLimit is a compressed records section that decompresses past
	// the caller's limit (a decompression bomb, or a batch too large to
	// look inside). Errors wrapping it also wrap ErrCorrupt.
	ErrOverLimit = errors.New("batch: decompressed records over the limit")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Size returns the total size in bytes of the batch that starts b, read from
// its length field, or ErrTruncated if b is shorter than the length prefix,
// or ErrCorrupt if the length is impossible.
func Size(b []byte) (int, error) {
	if len(b) < LengthPrefix {
		return 0, fmt.Errorf("%w: %d bytes, need %d for the length prefix", ErrTruncated, len(b), LengthPrefix)
	}
	n := int32(binary.BigEndian.Uint32(b[offLength:]))
	if n < minLength {
		return 0, fmt.Errorf("%w: length field %d below minimum %d", ErrCorrupt, n, minLength)
	}
	if n > maxLength {
		return 0, fmt.Errorf("%w: length field %d above maximum %d", ErrCorrupt, n, maxLength)
	}
	return int(n) + LengthPrefix, nil
}

// BaseOffset reads the base offset of the batch starting b (len >= 8).
func BaseOffset(b []byte) int64 { return int64(binary.BigEndian.Uint64(b[offBaseOffset:])) }

// PartitionLeaderEpoch reads the partition leader epoch (len >= 16).
func PartitionLeaderEpoch(b []byte) int32 {
	return int32(binary.BigEndian.Uint32(b[offLeaderEpoch:]))
}

// LastOffsetDelta reads the last offset delta (len >= 27).
func LastOffsetDelta(b []byte) int32 { return int32(binary.BigEndian.Uint32(b[offLastOffsetDelta:])) }

// LastOffset is BaseOffset + LastOffsetDelta (len >= 27).
func LastOffset(b []byte) int64 { return BaseOffset(b) + int64(LastOffsetDelta(b)) }

// Attributes reads the attributes (len >= 23).
func Attributes(b []byte) int16 { return int16(binary.BigEndian.Uint16(b[offAttributes:])) }

// MaxTimestamp reads the max timestamp (len >= 43).
func MaxTimestamp(b []byte) int64 { return int64(binary.BigEndian.Uint64(b[offMaxTimestamp:])) }

// BaseTimestamp reads the base (first) timestamp (len >= 35).
func BaseTimestamp(b []byte) int64 { return int64(binary.BigEndian.Uint64(b[offBaseTimestamp:])) }

// NumRecords reads the record count (len >= 61).
func NumRecords(b []byte) int32 { return int32(binary.BigEndian.Uint32(b[offNumRecords:])) }

// SetBaseOffset writes the base offset in place; it lies outside the CRC.
func SetBaseOffset(b []byte, off int64) { binary.BigEndian.PutUint64(b[offBaseOffset:], uint64(off)) }

// SetPartitionLeaderEpoch writes the partition leader epoch in place; it lies
// outside the CRC.
func SetPartitionLeaderEpoch(b []byte, epoch int32) {
	binary.BigEndian.PutUint32(b[offLeaderEpoch:], uint32(epoch))
}

// ComputeCRC returns the CRC-32C of b[21:], the value the CRC field must hold.
func ComputeCRC(b []byte) uint32 { return crc32.Checksum(b[offAttributes:], castagnoli) }

// SetCRC recomputes and stores the CRC (used only when building batches).
func SetCRC(b []byte) { binary.BigEndian.PutUint32(b[offCRC:], ComputeCRC(b)) }

// ParseHeader decodes the fixed header of the batch starting b into a
// kmsg.RecordBatch, without checking the magic or the CRC. Records aliases b
// and holds the bytes after the header that are present, up to the batch's
// length. It does not allocate.
func ParseHeader(b []byte) (kmsg.RecordBatch, error) {
	if len(b) < HeaderSize {
		return kmsg.RecordBatch{}, fmt.Errorf("%w: %d bytes, need %d for the header", ErrTruncated, len(b), HeaderSize)
	}
	size, err := Size(b)
	if err != nil {
		return kmsg.RecordBatch{}, err
	}
	end := min(size, len(b))
	be := binary.BigEndian
	return kmsg.RecordBatch{
		FirstOffset:          BaseOffset(b),
		Length:               int32(size - LengthPrefix),
		PartitionLeaderEpoch: PartitionLeaderEpoch(b),
		Magic:                int8(b[offMagic]),
		CRC:                  int32(be.Uint32(b[offCRC:])),
		Attributes:           Attributes(b),
		LastOffsetDelta:      LastOffsetDelta(b),
		FirstTimestamp:       BaseTimestamp(b),
		MaxTimestamp:         MaxTimestamp(b),
		ProducerID:           int64(be.Uint64(b[offProducerID:])),
		ProducerEpoch:        int16(be.Uint16(b[offProducerEpoch:])),
		FirstSequence:        int32(be.Uint32(b[offBaseSequence:])),
		NumRecords:           NumRecords(b),
		Records:              b[HeaderSize:end:end],
	}, nil
}

// Validate checks that b holds exactly one whole, well-formed v2 batch: magic
// is 2, its length matches len(b), the CRC-32C matches, and the counts are
// consistent. It returns the decoded header. It never decompresses and does
// not allocate unless it fails.
//
// The magic is checked first, whenever b is long enough to hold it, so that a
// legacy message (magic 0 or 1, whose size may be below a v2 header's) fails
// with ErrUnsupportedMagic rather than ErrCorrupt.
func Validate(b []byte) (kmsg.RecordBatch, error) { return validate(b, true) }

// ValidateShape checks what Validate checks except the CRC, for a caller
// that has just verified the CRC of these very bytes (the partition leader
// validates a produced batch before handing it to the log, which would
// otherwise compute the same CRC again).
func ValidateShape(b []byte) (kmsg.RecordBatch, error) { return validate(b, false) }

func validate(b []byte, checkCRC bool) (kmsg.RecordBatch, error) {
	if len(b) > offMagic {
		if m := int8(b[offMagic]); m != CurrentMagic {
			return kmsg.RecordBatch{}, fmt.Errorf("%w: magic %d", ErrUnsupportedMagic, m)
		}
	}
	size, err := Size(b)
	if err != nil {
		return kmsg.RecordBatch{}, err
	}
	if len(b) < size {
		return kmsg.RecordBatch{}, fmt.Errorf("%w: batch of %d bytes, %d present", ErrTruncated, size, len(b))
	}
	if len(b) > size {
		return kmsg.RecordBatch{}, fmt.Errorf("%w: %d trailing bytes after a batch of %d", ErrCorrupt, len(b)-size, size)
	}
	rb, err := ParseHeader(b)
	if err != nil {
		return rb, err
	}
	if checkCRC {
		if want, got := ComputeCRC(b), uint32(rb.CRC); want != got {
			return rb, fmt.Errorf("%w: crc %d, computed %d", ErrCorrupt, got, want)
		}
	}
	if rb.LastOffsetDelta < 0 || rb.NumRecords < 0 {
		return rb, fmt.Errorf("%w: last offset delta %d, record count %d", ErrCorrupt, rb.LastOffsetDelta, rb.NumRecords)
	}
	if rb.Attributes&CodecMask > CodecZstd {
		return rb, fmt.Errorf("%w: compression codec %d", ErrCorrupt, rb.Attributes&CodecMask)
	}
	return rb, nil
}
