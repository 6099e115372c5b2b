package batch

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// minRecordSize is the smallest encoded record: a one-byte length and six
// one-byte fields (attributes, timestamp delta, offset delta, key length,
// value length, header count).
const minRecordSize = 7

// Records validates b as Validate does (CRC included), decompresses its
// records section if its codec bits say so, with limit bounding the
// decompressed size (an uncompressed section is not limited: it is already in
// memory), and decodes every record. It checks that the batch holds
// exactly NumRecords records, each of them exactly its length prefix long, with
// an offset delta in [0, LastOffsetDelta], and that nothing trails them.
// Errors wrap ErrCorrupt, ErrTruncated or ErrUnsupportedMagic.
//
// Keys, values and header values alias b, or the decompressed section.
func Records(b []byte, limit int) ([]kmsg.Record, error) {
	it, err := newRecordIter(b, limit)
	if err != nil {
		return nil, err
	}
	out := make([]kmsg.Record, it.count)
	for i := range out {
		if err := it.next(&out[i]); err != nil {
			return nil, err
		}
	}
	if err := it.finish(); err != nil {
		return nil, err
	}
	return out, nil
}

// ForEachRecord is Records without the slice: it calls fn with each record
// in turn and stops at fn's first error, which it returns unwrapped. The
// record passed to fn is reused (its Headers slice too): it is valid only
// during the call. Decoding an uncompressed batch allocates once per call,
// plus a string per non-empty header key (kmsg copies them). Since records
// are checked as they are reached, fn may see the first records of a batch
// that then fails.
func ForEachRecord(b []byte, limit int, fn func(r *kmsg.Record) error) error {
	it, err := newRecordIter(b, limit)
	if err != nil {
		return err
	}
	return it.each(fn)
}

// ScanRecords is ForEachRecord decompressing into a pooled buffer (as
// CheckRecords does) instead of a new one, and checking every record before
// fn sees the first: fn is called only for a batch that decodes whole, so a
// caller never acts on half of a bad batch. The keys, values and header
// values of the records passed to fn are valid only during the call, and fn
// must not call ScanRecords or CheckRecords (it holds one of a bounded
// number of buffers meanwhile). It suits a caller that looks at records and
// keeps nothing (ListOffsets, the cleaner's offset map, dump-log).
func ScanRecords(b []byte, limit int, fn func(r *kmsg.Record) error) error {
	rb, err := Validate(b)
	if err != nil {
		return err
	}
	section := rb.Records
	if codec := rb.Attributes & CodecMask; codec != CodecNone && len(section) > 0 {
		out, release, err := decompressScratch(codec, section, limit)
		if err != nil {
			return fmt.Errorf("batch at offset %d: %w", rb.FirstOffset, err)
		}
		defer release()
		section = out
	}
	it, err := sectionIter(&rb, section)
	if err != nil {
		return err
	}
	if err := it.check(); err != nil {
		return err
	}
	return it.each(fn)
}

// check walks a copy of the iterator over every record without decoding
// them: lengths, fields, offset deltas and nothing trailing, as next and
// finish check them.
func (it recordIter) check() error {
	for ; it.i < it.count; it.i++ {
		length, n := varint(it.rest)
		if n <= 0 || length < 0 || int(length) > len(it.rest)-n {
			return it.errorf("length prefix %d (%d bytes left)", length, len(it.rest))
		}
		size := n + int(length)
		used, delta, _, what := scanBody(it.rest[n:size])
		switch {
		case what != "":
			return it.errorf("%s", what)
		case used != int(length):
			return it.errorf("fields take %d of %d bytes", used, length)
		case delta < 0 || delta > it.lastOffsetDelta:
			return it.errorf("offset delta %d outside [0, %d]", delta, it.lastOffsetDelta)
		}
		it.rest = it.rest[size:]
		it.pos += size
	}
	return it.finish()
}

// each calls fn with each record in turn, then checks nothing trails them.
func (it *recordIter) each(fn func(r *kmsg.Record) error) error {
	var r kmsg.Record
	for range it.count {
		if err := it.next(&r); err != nil {
			return err
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	return it.finish()
}

// Timestamp returns the absolute timestamp of record r of batch b (len >= 43):
// the batch's MaxTimestamp if b uses LogAppendTime, as Kafka reports it, else
// BaseTimestamp plus the record's timestamp delta. (When the delete horizon
// bit is set, BaseTimestamp is the horizon and the deltas are relative to it,
// so the sum still holds.)
func Timestamp(b []byte, r *kmsg.Record) int64 {
	if Attributes(b)&LogAppendTimeBit != 0 {
		return MaxTimestamp(b)
	}
	return BaseTimestamp(b) + timestampDelta(r)
}

// timestampDelta is the delta kmsg writes: TimestampDelta64, or the legacy
// int32 TimestampDelta when that is zero.
func timestampDelta(r *kmsg.Record) int64 {
	if r.TimestampDelta64 != 0 {
		return r.TimestampDelta64
	}
	return int64(r.TimestampDelta)
}

// recordIter walks the records section of one batch.
type recordIter struct {
	rest            []byte // records not yet decoded
	pos             int    // position of rest in the (decompressed) section
	count, i        int32
	lastOffsetDelta int32
	baseOffset      int64 // for errors
}

// newRecordIter validates b, decompresses its records and checks that the
// record count could fit in them, which bounds what Records preallocates.
func newRecordIter(b []byte, limit int) (recordIter, error) {
	rb, err := Validate(b)
	if err != nil {
		return recordIter{}, err
	}
	section := rb.Records
	if codec := rb.Attributes & CodecMask; codec != CodecNone && len(section) > 0 {
		if section, err = Decompress(codec, section, limit); err != nil {
			return recordIter{}, fmt.Errorf("batch at offset %d: %w", rb.FirstOffset, err)
		}
	}
	return sectionIter(&rb, section)
}

// sectionIter starts a walk of the (decompressed) records section of the
// batch whose header is rb, once the record count could fit in it.
func sectionIter(rb *kmsg.RecordBatch, section []byte) (recordIter, error) {
	if int64(rb.NumRecords)*minRecordSize > int64(len(section)) {
		return recordIter{}, fmt.Errorf("%w: batch at offset %d: %d records cannot fit in %d bytes",
			ErrCorrupt, rb.FirstOffset, rb.NumRecords, len(section))
	}
	return recordIter{rest: section, count: rb.NumRecords, lastOffsetDelta: rb.LastOffsetDelta, baseOffset: rb.FirstOffset}, nil
}

// next decodes the next record into r.
func (it *recordIter) next(r *kmsg.Record) error {
	length, n := varint(it.rest)
	if n <= 0 || length < 0 || int(length) > len(it.rest)-n {
		return it.errorf("length prefix %d (%d bytes left)", length, len(it.rest))
	}
	size := n + int(length)
	used, what := bodyLen(it.rest[n:size])
	if what != "" {
		return it.errorf("%s", what)
	}
	if used != int(length) {
		return it.errorf("fields take %d of %d bytes", used, length)
	}
	if err := r.ReadFrom(it.rest[:size]); err != nil {
		return it.errorf("%v", err)
	}
	if r.OffsetDelta < 0 || r.OffsetDelta > it.lastOffsetDelta {
		return it.errorf("offset delta %d outside [0, %d]", r.OffsetDelta, it.lastOffsetDelta)
	}
	it.rest = it.rest[size:]
	it.pos += size
	it.i++
	return nil
}

// finish checks that no bytes follow the last record.
func (it *recordIter) finish() error {
	if len(it.rest) > 0 {
		return fmt.Errorf("%w: batch at offset %d: %d bytes trail the %d records", ErrCorrupt, it.baseOffset, len(it.rest), it.count)
	}
	return nil
}

// errorf reports a bad record with its index and position.
func (it *recordIter) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: batch at offset %d: record %d of %d at byte %d: %s",
		ErrCorrupt, it.baseOffset, it.i, it.count, it.pos, fmt.Sprintf(format, args...))
}
