package log

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"sort"
)

// Sparse index files, as Kafka writes them. An offset index entry is 8 bytes:
// the offset relative to the segment's base (uint32) and the byte position of
// the batch in the .log file (uint32), both big-endian. A time index entry is
// 12 bytes: a timestamp (int64) and a relative offset (uint32). Entries are
// kept in memory while the segment is loaded and written to the preallocated
// file before it is synced, trimmed on roll and close.
const (
	indexEntrySize     = 8
	timeIndexEntrySize = 12
)

// indexFile holds the entries of one .index or .timeindex file.
type indexFile struct {
	path      string
	base      int64
	entrySize int
	buf       []byte // entries, len multiple of entrySize
	written   int    // prefix of buf already written to the file
	stale     bool   // the file holds entries past buf that were cut
	dirty     bool   // the file holds writes not yet synced
	size      int64  // the file's size, -1 when unknown
}

func (x *indexFile) entries() int { return len(x.buf) / x.entrySize }

// offsetAt returns entry i of an offset index as (absolute offset, position).
func (x *indexFile) offsetAt(i int) (int64, int64) {
	e := x.buf[i*indexEntrySize:]
	return x.base + int64(binary.BigEndian.Uint32(e)), int64(binary.BigEndian.Uint32(e[4:]))
}

// timeAt returns entry i of a time index as (timestamp, absolute offset).
func (x *indexFile) timeAt(i int) (int64, int64) {
	e := x.buf[i*timeIndexEntrySize:]
	return int64(binary.BigEndian.Uint64(e)), x.base + int64(binary.BigEndian.Uint32(e[8:]))
}

func (x *indexFile) appendOffset(offset, pos int64) {
	var e [indexEntrySize]byte
	binary.BigEndian.PutUint32(e[:], uint32(offset-x.base))
	binary.BigEndian.PutUint32(e[4:], uint32(pos))
	x.buf = append(x.buf, e[:]...)
}

func (x *indexFile) appendTime(ts, offset int64) {
	var e [timeIndexEntrySize]byte
	binary.BigEndian.PutUint64(e[:], uint64(ts))
	binary.BigEndian.PutUint32(e[8:], uint32(offset-x.base))
	x.buf = append(x.buf, e[:]...)
}

// lookupOffset returns the last entry whose offset is <= target, or the
// segment start (base, 0) when there is none.
func (x *indexFile) lookupOffset(target int64) (int64, int64) {
	n := x.entries()
	i := sort.Search(n, func(i int) bool { o, _ := x.offsetAt(i); return o > target })
	if i == 0 {
		return x.base, 0
	}
	return x.offsetAt(i - 1)
}

// lookupTime returns the last entry whose timestamp is <= ts, or (-1, base).
func (x *indexFile) lookupTime(ts int64) (int64, int64) {
	n := x.entries()
	i := sort.Search(n, func(i int) bool { t, _ := x.timeAt(i); return t > ts })
	if i == 0 {
		return -1, x.base
	}
	return x.timeAt(i - 1)
}

// lastTime returns the newest time entry, or (-1, base) if empty.
func (x *indexFile) lastTime() (int64, int64) {
	if x.entries() == 0 {
		return -1, x.base
	}
	return x.timeAt(x.entries() - 1)
}

// truncateOffsetsFrom drops offset entries at or past byte position pos.
func (x *indexFile) truncateOffsetsFrom(pos int64) {
	n := x.entries()
	i := sort.Search(n, func(i int) bool { _, p := x.offsetAt(i); return p >= pos })
	x.cut(i)
}

// truncateTimesFrom drops time entries whose offset is >= offset.
func (x *indexFile) truncateTimesFrom(offset int64) {
	n := x.entries()
	i := sort.Search(n, func(i int) bool { _, o := x.timeAt(i); return o >= offset })
	x.cut(i)
}

func (x *indexFile) cut(entries int) {
	x.buf = x.buf[:entries*x.entrySize]
	if x.written > len(x.buf) {
		x.written = len(x.buf)
		x.stale = true
	}
}

// reset drops every entry (the file is rewritten from scratch on next write).
func (x *indexFile) reset() {
	x.buf = x.buf[:0]
	x.written = 0
	x.stale = true
}

// full reports whether another entry would not fit in maxBytes.
func (x *indexFile) full(maxBytes int64) bool {
	return int64(len(x.buf)+x.entrySize) > maxBytes/int64(x.entrySize)*int64(x.entrySize)
}

// checkOffsets verifies a loaded offset index against its segment: offsets
// and positions strictly increasing (the first entry may be (base, 0)),
// offsets within the segment's range, positions inside the segment.
func (x *indexFile) checkOffsets(segSize int64) error {
	if len(x.buf)%indexEntrySize != 0 {
		return fmt.Errorf("%w: index %s: size %d not a multiple of %d", ErrCorrupt, x.path, len(x.buf), indexEntrySize)
	}
	prevOff, prevPos := int64(-1), int64(-1)
	for i := 0; i < x.entries(); i++ {
		off, pos := x.offsetAt(i)
		if off <= prevOff || pos <= prevPos {
			return fmt.Errorf("%w: index %s: entry %d (offset %d, position %d) not after (offset %d, position %d)",
				ErrCorrupt, x.path, i, off, pos, prevOff, prevPos)
		}
		if pos >= segSize {
			return fmt.Errorf("%w: index %s: entry %d points at position %d past the segment's %d bytes",
				ErrCorrupt, x.path, i, pos, segSize)
		}
		prevOff, prevPos = off, pos
	}
	return nil
}

// checkTimes verifies a loaded time index: timestamps non-decreasing and
// offsets non-decreasing, none below the base.
func (x *indexFile) checkTimes(nextOffset int64) error {
	if len(x.buf)%timeIndexEntrySize != 0 {
		return fmt.Errorf("%w: time index %s: size %d not a multiple of %d", ErrCorrupt, x.path, len(x.buf), timeIndexEntrySize)
	}
	prevTs, prevOff := int64(math.MinInt64), int64(-1)
	for i := 0; i < x.entries(); i++ {
		ts, off := x.timeAt(i)
		if ts < prevTs || off < prevOff || off >= nextOffset {
			return fmt.Errorf("%w: time index %s: entry %d (timestamp %d, offset %d) out of order or past offset %d",
				ErrCorrupt, x.path, i, ts, off, nextOffset)
		}
		prevTs, prevOff = ts, off
	}
	return nil
}

// load reads the file's entries (trimmed or preallocated files alike: a
// preallocated tail of zeros ends the entries).
func (x *indexFile) load(fsys FS) error {
	data, err := ReadFile(fsys, x.path)
	if err != nil {
		return err
	}
	n := len(data) / x.entrySize * x.entrySize
	if n != len(data) {
		return fmt.Errorf("%w: index %s: size %d not a multiple of %d", ErrCorrupt, x.path, len(data), x.entrySize)
	}
	// Trim a zero tail left by preallocation (after the first entry, an
	// all-zero entry cannot be valid: offsets strictly increase).
	zero := make([]byte, x.entrySize)
	for n > x.entrySize && string(data[n-x.entrySize:n]) == string(zero) {
		n -= x.entrySize
	}
	if n == x.entrySize && string(data[:n]) == string(zero) && x.entrySize == timeIndexEntrySize {
		n = 0 // an all-zero time entry (timestamp 0) is a hole, not data
	}
	x.buf = append(x.buf[:0], data[:n]...)
	x.written = n
	x.size = int64(len(data))
	x.dirty = false
	return nil
}

// write stores the unwritten entries in the file and sizes it to fileSize
// (rounded down to whole entries; a preallocated, sparse tail) or, when
// fileSize is smaller than the entries, to the entries alone (trimmed).
// With sync it also makes the file durable.
func (x *indexFile) write(fsys FS, fileSize int64, sync bool) error {
	want := max(int64(len(x.buf)), fileSize/int64(x.entrySize)*int64(x.entrySize))
	if x.written == len(x.buf) && !x.stale && x.size == want && !(sync && x.dirty) {
		return nil
	}
	f, err := fsys.OpenFile(x.path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open index %s: %w", x.path, err)
	}
	defer f.Close()
	if x.size < 0 {
		if x.size, err = f.Size(); err != nil {
			return fmt.Errorf("stat index %s: %w", x.path, err)
		}
	}
	if x.stale || x.size > int64(x.written) && x.size != want {
		// Drop stale entries (and anything past the written prefix) so the
		// regrown tail reads as zeros.
		if err := f.Truncate(int64(x.written)); err != nil {
			return fmt.Errorf("truncate index %s: %w", x.path, err)
		}
		x.size, x.stale = int64(x.written), false
	}
	if x.size != want {
		if err := f.Truncate(want); err != nil {
			return fmt.Errorf("size index %s to %d: %w", x.path, want, err)
		}
		x.size = want
	}
	if x.written < len(x.buf) {
		if _, err := f.WriteAt(x.buf[x.written:], int64(x.written)); err != nil {
			return fmt.Errorf("write index %s: %w", x.path, err)
		}
		x.written = len(x.buf)
	}
	x.dirty = true
	if sync {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("sync index %s: %w", x.path, err)
		}
		x.dirty = false
	}
	return nil
}
