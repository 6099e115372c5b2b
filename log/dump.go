package log

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/weirmq/weir/log/batch"
)

// Read-only access to single segment files, for `weir dump-log` and other
// tools that inspect a directory without opening it through a Manager. These
// helpers never write, never repair and never panic on corrupt input: they
// report what they find with errors that name the file and the position.

// ErrFileName is a path whose base name is not a segment file name: a
// 20-digit base offset followed by .log, .index or .timeindex.
var ErrFileName = errors.New("log: not a segment file name")

// maxCheckProblems bounds how many problems CheckOffsetIndex and
// CheckTimeIndex list before summing up the rest.
const maxCheckProblems = 20

// OffsetIndexEntry is one entry of a .index file.
type OffsetIndexEntry struct {
	// Offset is the absolute offset the entry indexes: the segment's base
	// plus the relative offset stored. Kafka indexes a batch's last offset.
	Offset int64
	// Position is the byte position in the .log of the batch holding Offset.
	Position int64
}

// TimeIndexEntry is one entry of a .timeindex file.
type TimeIndexEntry struct {
	// Timestamp is the largest timestamp, in milliseconds, in the segment up
	// to and including Offset.
	Timestamp int64
	// Offset is the absolute offset of the batch holding Timestamp (its
	// last offset).
	Offset int64
}

// SegmentBaseOffset returns the base offset a segment file's name carries,
// for a path ending in a .log, .index or .timeindex segment file name.
// Other names fail with an error wrapping ErrFileName.
func SegmentBaseOffset(path string) (int64, error) {
	name := filepath.Base(path)
	for _, suffix := range []string{logSuffix, indexSuffix, timeIndexSuffix} {
		if base, ok := parseSegmentFileName(name, suffix); ok {
			return base, nil
		}
	}
	return 0, fmt.Errorf("%w: %s (want a 20-digit base offset and .log, .index or .timeindex)", ErrFileName, path)
}

// openIndex loads the index file at path, whose name must end in suffix.
func openIndex(fsys FS, path, suffix string, entrySize int) (*indexFile, error) {
	base, ok := parseSegmentFileName(filepath.Base(path), suffix)
	if !ok {
		return nil, fmt.Errorf("%w: %s (want a 20-digit base offset and %s)", ErrFileName, path, suffix)
	}
	x := &indexFile{path: path, base: base, entrySize: entrySize, size: -1}
	if err := x.load(fsys); err != nil {
		return nil, err
	}
	return x, nil
}

// ReadOffsetIndex returns the entries of the .index file at path, in file
// order, with offsets made absolute from the base offset in the file's name.
// It stops at the first all-zero entry, the start of a preallocated tail (as
// kafka-dump-log.sh does): such an entry is never real, since Kafka (and
// weir) never index the batch at position 0. It does
// not check the entries against each other or the log (CheckOffsetIndex
// does). A size that is not a whole number of entries fails with an error
// wrapping ErrCorrupt.
func ReadOffsetIndex(fsys FS, path string) ([]OffsetIndexEntry, error) {
	x, err := openIndex(fsys, path, indexSuffix, indexEntrySize)
	if err != nil {
		return nil, fmt.Errorf("read offset index: %w", err)
	}
	out := make([]OffsetIndexEntry, 0, x.entries())
	for i := range x.entries() {
		off, pos := x.offsetAt(i)
		if off == x.base && pos == 0 {
			break // preallocated hole
		}
		out = append(out, OffsetIndexEntry{Offset: off, Position: pos})
	}
	return out, nil
}

// ReadTimeIndex returns the entries of the .timeindex file at path, in file
// order, with offsets made absolute from the base offset in the file's name.
// It stops at the zeros of a preallocated tail, as the log does when it
// loads the file. A size that is not a whole number of entries fails with an
// error wrapping ErrCorrupt.
func ReadTimeIndex(fsys FS, path string) ([]TimeIndexEntry, error) {
	x, err := openIndex(fsys, path, timeIndexSuffix, timeIndexEntrySize)
	if err != nil {
		return nil, fmt.Errorf("read time index: %w", err)
	}
	out := make([]TimeIndexEntry, x.entries())
	for i := range out {
		ts, off := x.timeAt(i)
		out[i] = TimeIndexEntry{Timestamp: ts, Offset: off}
	}
	return out, nil
}

// ScanLogFile walks the batches of the .log file at path from its start and
// calls fn with each batch's byte position, its bytes (valid only during the
// call) and the result of batch.Validate: nil, or an error wrapping
// ErrCorrupt and the batch package's error, naming the path and position. A
// batch that fails validation but whose length field is sane is passed to fn
// and the walk goes on after it.
//
// The walk stops at the first length field that is impossible or runs past
// the end of the file: ScanLogFile then returns an error wrapping ErrCorrupt
// (and batch.ErrCorrupt or batch.ErrTruncated) that gives the path and the
// byte position. It returns fn's first error unchanged, and I/O errors
// wrapped with the path.
func ScanLogFile(fsys FS, path string, fn func(pos int64, b []byte, err error) error) error {
	return withLogFile(fsys, path, true, func(sc *batchScanner) error {
		for pos, b, ok := sc.next(); ok; pos, b, ok = sc.next() {
			var verr error
			if _, err := batch.Validate(b); err != nil {
				verr = fmt.Errorf("%w: %s: batch at position %d: %w", ErrCorrupt, path, pos, err)
			}
			if err := fn(pos, b, verr); err != nil {
				return err
			}
		}
		return scanError(sc)
	})
}

// withLogFile opens the log file at path read-only and runs fn with a
// scanner over the whole file (yielding whole batches with full, headers
// otherwise).
func withLogFile(fsys FS, path string, full bool, fn func(sc *batchScanner) error) error {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return fmt.Errorf("stat log %s: %w", path, err)
	}
	return fn(newBatchScanner(f, path, 0, size, full))
}

// scanError returns why sc stopped before the end, nil if it did not:
// corruption wrapped with ErrCorrupt, or an I/O error.
func scanError(sc *batchScanner) error {
	switch {
	case sc.err == nil:
		return nil
	case errors.Is(sc.err, batch.ErrCorrupt), errors.Is(sc.err, batch.ErrTruncated):
		return fmt.Errorf("%w: %w", ErrCorrupt, sc.err)
	default:
		return fmt.Errorf("scan log: %w", sc.err)
	}
}

// CheckOffsetIndex checks the .index file at indexPath against the .log
// file at logPath, the way kafka-dump-log.sh checks an index: offsets and
// positions strictly increase, and every entry points inside the log at the
// start of a batch whose last offset is the entry's offset. It returns nil
// when every entry holds, or an error wrapping ErrCorrupt that lists the bad
// entries (an errors.Join of one error per problem, the first
// maxCheckProblems of them), each naming the entry, its offset and its
// position. Failing to read either file is returned as is; corruption of the
// log itself is reported only where an entry points past the readable part.
func CheckOffsetIndex(fsys FS, indexPath, logPath string) error {
	entries, err := ReadOffsetIndex(fsys, indexPath)
	if err != nil {
		return err
	}
	var p problems
	err = withLogFile(fsys, logPath, false, func(sc *batchScanner) error {
		pos, hdr, ok := sc.next()
		prev := OffsetIndexEntry{Offset: -1, Position: -1}
		for i, e := range entries {
			if e.Offset <= prev.Offset || e.Position <= prev.Position {
				p.addf("%s: entry %d (offset %d, position %d) is not after entry (offset %d, position %d)",
					indexPath, i, e.Offset, e.Position, prev.Offset, prev.Position)
				continue
			}
			prev = e
			if e.Position >= sc.end {
				p.addf("%s: entry %d (offset %d) points at position %d, past the end of %s (%d bytes)",
					indexPath, i, e.Offset, e.Position, filepath.Base(logPath), sc.end)
				continue
			}
			for ok && pos < e.Position {
				pos, hdr, ok = sc.next()
			}
			switch {
			case !ok || pos != e.Position:
				p.addf("%s: entry %d (offset %d) points at position %d, where no batch of %s starts%s",
					indexPath, i, e.Offset, e.Position, filepath.Base(logPath), stopNote(sc))
			case batch.LastOffset(hdr) != e.Offset:
				p.addf("%s: entry %d (offset %d, position %d): the batch there has last offset %d",
					indexPath, i, e.Offset, e.Position, batch.LastOffset(hdr))
			}
		}
		return ioError(sc)
	})
	if err != nil {
		return fmt.Errorf("check offset index %s: %w", indexPath, err)
	}
	return p.err()
}

// CheckTimeIndex checks the .timeindex file at timeIndexPath against the
// .log file at logPath, the way kafka-dump-log.sh checks a time index:
// timestamps strictly increase, offsets do not decrease, and every entry's
// offset is the last offset of a batch whose max timestamp is the entry's
// timestamp. Its result is like CheckOffsetIndex's.
func CheckTimeIndex(fsys FS, timeIndexPath, logPath string) error {
	entries, err := ReadTimeIndex(fsys, timeIndexPath)
	if err != nil {
		return err
	}
	var p problems
	err = withLogFile(fsys, logPath, false, func(sc *batchScanner) error {
		_, hdr, ok := sc.next()
		prev := TimeIndexEntry{Timestamp: math.MinInt64, Offset: -1}
		for i, e := range entries {
			if e.Timestamp <= prev.Timestamp || e.Offset < prev.Offset {
				p.addf("%s: entry %d (timestamp %d, offset %d) is not after entry (timestamp %d, offset %d)",
					timeIndexPath, i, e.Timestamp, e.Offset, prev.Timestamp, prev.Offset)
				continue
			}
			prev = e
			for ok && batch.LastOffset(hdr) < e.Offset {
				_, hdr, ok = sc.next()
			}
			switch {
			case !ok || batch.LastOffset(hdr) != e.Offset:
				p.addf("%s: entry %d (timestamp %d) points at offset %d, the last offset of no batch of %s%s",
					timeIndexPath, i, e.Timestamp, e.Offset, filepath.Base(logPath), stopNote(sc))
			case batch.MaxTimestamp(hdr) != e.Timestamp:
				p.addf("%s: entry %d (timestamp %d, offset %d): the batch ending there has max timestamp %d",
					timeIndexPath, i, e.Timestamp, e.Offset, batch.MaxTimestamp(hdr))
			}
		}
		return ioError(sc)
	})
	if err != nil {
		return fmt.Errorf("check time index %s: %w", timeIndexPath, err)
	}
	return p.err()
}

// stopNote explains, for a problem message, that sc stopped at corruption.
func stopNote(sc *batchScanner) string {
	if sc.err == nil {
		return ""
	}
	return fmt.Sprintf(" (the log is unreadable from there: %v)", sc.err)
}

// ioError returns sc's error if it is an I/O failure rather than corruption
// (which the index checks report through the entries it leaves unmatched).
func ioError(sc *batchScanner) error {
	if err := scanError(sc); err != nil && !errors.Is(err, ErrCorrupt) {
		return err
	}
	return nil
}

// problems collects the findings of an index check.
type problems struct {
	list []error
	more int
}

func (p *problems) addf(format string, args ...any) {
	if len(p.list) == maxCheckProblems {
		p.more++
		return
	}
	p.list = append(p.list, fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...))
}

// err returns the findings as one error, nil if there are none.
func (p *problems) err() error {
	if p.more > 0 {
		p.list = append(p.list, fmt.Errorf("%w: %d more problems", ErrCorrupt, p.more))
	}
	return errors.Join(p.list...)
}
