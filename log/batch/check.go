package batch

import (
	"errors"
	"fmt"
)

// ErrNoKey is a record without a key in a batch that needs keys (a
// compacted topic's).
var ErrNoKey = errors.New("batch: record without a key")

// CheckRecords walks the records of b, a batch whose header Validate (or
// ValidateShape) accepted, as a partition leader checks a producer's batch
// (Kafka's LogValidator): exactly NumRecords records, each exactly as long
// as its length prefix says, their fields well formed, offset deltas 0, 1,
// 2, ... in order, and nothing after the last. With needKeys every record
// must have a key (ErrNoKey). A compressed records section is decompressed
// into at most limit bytes first (past it the error wraps ErrOverLimit),
// into a pooled buffer, so checking allocates nothing once the pool is
// warm; an uncompressed one is walked in place without allocating. Other
// errors wrap ErrCorrupt.
func CheckRecords(b []byte, needKeys bool, limit int) error {
	if len(b) < HeaderSize {
		return fmt.Errorf("%w: %d bytes, a batch header takes %d", ErrTruncated, len(b), HeaderSize)
	}
	base, count := BaseOffset(b), NumRecords(b)
	section := b[HeaderSize:]
	if codec := Attributes(b) & CodecMask; codec != CodecNone && len(section) > 0 {
		out, release, err := decompressScratch(codec, section, limit)
		if err != nil {
			return fmt.Errorf("batch at offset %d: %w", base, err)
		}
		defer release()
		section = out
	}
	return checkSection(section, base, count, needKeys)
}

// checkSection walks the records section (decompressed) of the batch at
// offset base that claims count records.
func checkSection(section []byte, base int64, count int32, needKeys bool) error {
	if int64(count)*minRecordSize > int64(len(section)) {
		return fmt.Errorf("%w: batch at offset %d: %d records cannot fit in %d bytes", ErrCorrupt, base, count, len(section))
	}
	bad := func(i int32, pos int, format string, args ...any) error {
		return fmt.Errorf("%w: batch at offset %d: record %d of %d at byte %d: %s",
			ErrCorrupt, base, i, count, pos, fmt.Sprintf(format, args...))
	}
	pos := 0
	for i := range count {
		length, n := varint(section[pos:])
		if n <= 0 || length < 0 || int(length) > len(section)-pos-n {
			return bad(i, pos, "length prefix %d (%d bytes left)", length, len(section)-pos)
		}
		body := section[pos+n : pos+n+int(length)]
		used, delta, keyLen, what := scanBody(body)
		switch {
		case what != "":
			return bad(i, pos, "%s", what)
		case used != int(length):
			return bad(i, pos, "fields take %d of %d bytes", used, length)
		}
		if delta != i {
			return bad(i, pos, "offset delta %d, want %d", delta, i)
		}
		if needKeys && keyLen < 0 {
			return fmt.Errorf("%w: batch at offset %d: record %d of %d", ErrNoKey, base, i, count)
		}
		pos += n + int(length)
	}
	if pos != len(section) {
		return fmt.Errorf("%w: batch at offset %d: %d bytes trail the %d records", ErrCorrupt, base, len(section)-pos, count)
	}
	return nil
}
