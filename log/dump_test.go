package log

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weirmq/weir/log/batch"
)

// dumpTestConfig is smallConfig: 4 KiB segments indexed every 256 bytes.
var dumpTestConfig = smallConfig()

// writeDumpTestLog appends batches of varying sizes and timestamps (some out
// of order) through a Manager on fsys in dir, optionally flushing and
// checkpointing before closing, and returns the partition directory and the
// manager (closed when closeIt is set).
func writeDumpTestLog(t *testing.T, fsys FS, dir string, closeIt bool) (string, *Manager) {
	t.Helper()
	clock := &testClock{ms: 1_000_000}
	m := openTestManager(t, fsys, dir, clock)
	l, err := m.OpenLog(TopicPartition{"dump", 0}, dumpTestConfig, [16]byte{7})
	if err != nil {
		t.Fatal(err)
	}
	first := 0
	for i := range 60 {
		n := 1 + i%4
		ts := clock.ms + int64(i*10)
		if i%7 == 3 {
			ts -= 500 // older than what came before: the max must not move
		}
		if _, err := l.Append(makeBatch(t, first, n, ts, 20+i*3), AppendOptions{AssignOffsets: true, LeaderEpoch: int32(i / 20)}); err != nil {
			t.Fatal(err)
		}
		first += n
	}
	if l.SegmentCount() < 3 {
		t.Fatalf("want several segments, got %d", l.SegmentCount())
	}
	if closeIt {
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return l.Dir(), m
}

// dumpLogPaths returns the .log files of a partition directory, in order.
func dumpLogPaths(t *testing.T, fsys FS, dir string) []string {
	t.Helper()
	names, err := fsys.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, logSuffix) {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out
}

// dumpExpectedIndexes computes, from the batches of the .log at path alone,
// the entries Kafka's rules give: an offset entry (last offset, position)
// for a batch once more than index.interval.bytes were appended since the
// last entry, a time entry (max timestamp so far, its batch's last offset)
// beside it when the max grew, and with seal a final time entry.
func dumpExpectedIndexes(t *testing.T, fsys FS, path string, seal bool) ([]OffsetIndexEntry, []TimeIndexEntry) {
	t.Helper()
	var offs []OffsetIndexEntry
	var times []TimeIndexEntry
	since, maxTs, maxTsOff, lastTs := int64(0), int64(-1), int64(-1), int64(-1)
	err := ScanLogFile(fsys, path, func(pos int64, b []byte, err error) error {
		if err != nil {
			return err
		}
		if ts := batch.MaxTimestamp(b); ts > maxTs {
			maxTs, maxTsOff = ts, batch.LastOffset(b)
		}
		if since > dumpTestConfig.IndexIntervalBytes {
			offs = append(offs, OffsetIndexEntry{Offset: batch.LastOffset(b), Position: pos})
			if maxTs > lastTs {
				times = append(times, TimeIndexEntry{Timestamp: maxTs, Offset: maxTsOff})
				lastTs = maxTs
			}
			since = 0
		}
		since += int64(len(b))
		return nil
	})
	if err != nil {
		t.Fatalf("scan %s: %v", path, err)
	}
	if seal && maxTs > lastTs {
		times = append(times, TimeIndexEntry{Timestamp: maxTs, Offset: maxTsOff})
	}
	return offs, times
}

// dumpIndexPaths returns the .index and .timeindex paths beside a .log path.
func dumpIndexPaths(logPath string) (string, string) {
	stem := strings.TrimSuffix(logPath, logSuffix)
	return stem + indexSuffix, stem + timeIndexSuffix
}

func TestDumpReadIndexes(t *testing.T) {
	fsys := OSFS{}
	dir, _ := writeDumpTestLog(t, fsys, t.TempDir(), true)
	paths := dumpLogPaths(t, fsys, dir)
	indexed := 0
	for _, p := range paths {
		wantOffs, wantTimes := dumpExpectedIndexes(t, fsys, p, true)
		idx, tidx := dumpIndexPaths(p)
		offs, err := ReadOffsetIndex(fsys, idx)
		if err != nil {
			t.Fatal(err)
		}
		times, err := ReadTimeIndex(fsys, tidx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(offs, wantOffs) {
			t.Errorf("%s: offset index %v, want %v", idx, offs, wantOffs)
		}
		if !slices.Equal(times, wantTimes) {
			t.Errorf("%s: time index %v, want %v", tidx, times, wantTimes)
		}
		if err := CheckOffsetIndex(fsys, idx, p); err != nil {
			t.Errorf("CheckOffsetIndex: %v", err)
		}
		if err := CheckTimeIndex(fsys, tidx, p); err != nil {
			t.Errorf("CheckTimeIndex: %v", err)
		}
		indexed += len(offs)
	}
	if indexed < 2*len(paths) {
		t.Errorf("only %d offset index entries in %d segments: the test indexes too little", indexed, len(paths))
	}
}

// TestDumpReadPreallocatedIndexes reads the active segment's indexes while
// they are preallocated (checkpointed, not yet trimmed): the zero tail is not
// read as entries.
func TestDumpReadPreallocatedIndexes(t *testing.T) {
	fsys := OSFS{}
	dir, m := writeDumpTestLog(t, fsys, t.TempDir(), false)
	defer m.Close()
	l, _ := m.Log(TopicPartition{"dump", 0})
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := m.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	paths := dumpLogPaths(t, fsys, dir)
	active := paths[len(paths)-1]
	idx, tidx := dumpIndexPaths(active)
	for _, p := range []string{idx, tidx} {
		size, err := fsys.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if size < dumpTestConfig.SegmentIndexBytes-timeIndexEntrySize {
			t.Fatalf("%s is %d bytes: not preallocated", p, size)
		}
	}
	wantOffs, wantTimes := dumpExpectedIndexes(t, fsys, active, false)
	offs, err := ReadOffsetIndex(fsys, idx)
	if err != nil || !slices.Equal(offs, wantOffs) {
		t.Errorf("preallocated offset index: %v, %v; want %v", offs, err, wantOffs)
	}
	times, err := ReadTimeIndex(fsys, tidx)
	if err != nil || !slices.Equal(times, wantTimes) {
		t.Errorf("preallocated time index: %v, %v; want %v", times, err, wantTimes)
	}
	if err := CheckOffsetIndex(fsys, idx, active); err != nil {
		t.Error(err)
	}
	if err := CheckTimeIndex(fsys, tidx, active); err != nil {
		t.Error(err)
	}
}

func TestDumpReadEmptyPreallocatedIndex(t *testing.T) {
	fsys := NewMemFS()
	if err := fsys.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{segmentFileName(5, indexSuffix), segmentFileName(5, timeIndexSuffix)} {
		f, err := fsys.OpenFile("/d/"+name, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(960); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if e, err := ReadOffsetIndex(fsys, "/d/"+segmentFileName(5, indexSuffix)); err != nil || len(e) != 0 {
		t.Errorf("all-zero offset index: %v, %v; want no entries", e, err)
	}
	if e, err := ReadTimeIndex(fsys, "/d/"+segmentFileName(5, timeIndexSuffix)); err != nil || len(e) != 0 {
		t.Errorf("all-zero time index: %v, %v; want no entries", e, err)
	}
}

func TestDumpBadNamesAndMissingFiles(t *testing.T) {
	fsys := OSFS{}
	dir := t.TempDir()
	for _, p := range []string{"x.index", "123.index", "00000000000000000000.timeindex"} {
		if _, err := ReadOffsetIndex(fsys, filepath.Join(dir, p)); !errors.Is(err, ErrFileName) {
			t.Errorf("ReadOffsetIndex(%s): %v, want ErrFileName", p, err)
		}
	}
	if _, err := SegmentBaseOffset("a/b.log"); !errors.Is(err, ErrFileName) {
		t.Errorf("SegmentBaseOffset(b.log): %v", err)
	}
	if base, err := SegmentBaseOffset("a/00000000000000000042.timeindex"); err != nil || base != 42 {
		t.Errorf("SegmentBaseOffset: %d, %v", base, err)
	}
	missing := filepath.Join(dir, segmentFileName(0, logSuffix))
	err := ScanLogFile(fsys, missing, func(int64, []byte, error) error { return nil })
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("ScanLogFile on a missing file: %v", err)
	}
	if _, err := ReadTimeIndex(fsys, filepath.Join(dir, segmentFileName(0, timeIndexSuffix))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadTimeIndex on a missing file: %v", err)
	}
}

// dumpCopySegment copies the three files of the segment at logPath into a new
// directory and returns the copy's .log path.
func dumpCopySegment(t *testing.T, logPath string) string {
	t.Helper()
	dst := t.TempDir()
	idx, tidx := dumpIndexPaths(logPath)
	for _, p := range []string{logPath, idx, tidx} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, filepath.Base(p)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dst, filepath.Base(logPath))
}

// dumpScanned is what ScanLogFile passed for one batch.
type dumpScanned struct {
	pos, size int64
	err       error
}

func dumpScanAll(fsys FS, path string) ([]dumpScanned, error) {
	var out []dumpScanned
	err := ScanLogFile(fsys, path, func(pos int64, b []byte, err error) error {
		out = append(out, dumpScanned{pos, int64(len(b)), err})
		return nil
	})
	return out, err
}

// dumpPatchFile applies fn to the bytes of the file at path.
func dumpPatchFile(t *testing.T, path string, fn func([]byte) []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, fn(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDumpScanLogFileCorrupt(t *testing.T) {
	fsys := OSFS{}
	dir, _ := writeDumpTestLog(t, fsys, t.TempDir(), true)
	orig := dumpLogPaths(t, fsys, dir)[0]
	good, err := dumpScanAll(fsys, orig)
	if err != nil || len(good) < 4 {
		t.Fatalf("scan of the good segment: %d batches, %v", len(good), err)
	}
	for _, b := range good {
		if b.err != nil {
			t.Fatalf("good segment: %v", b.err)
		}
	}

	t.Run("crc", func(t *testing.T) {
		p := dumpCopySegment(t, orig)
		bad := good[2]
		dumpPatchFile(t, p, func(d []byte) []byte { d[bad.pos+bad.size-1] ^= 0x40; return d })
		got, err := dumpScanAll(fsys, p)
		if err != nil || len(got) != len(good) {
			t.Fatalf("scan: %d batches, %v; want all %d batches", len(got), err, len(good))
		}
		for i, b := range got {
			if i != 2 && b.err != nil {
				t.Errorf("batch %d: %v", i, b.err)
			}
		}
		e := got[2].err
		if !errors.Is(e, ErrCorrupt) || !errors.Is(e, batch.ErrCorrupt) || !strings.Contains(e.Error(), p) ||
			!strings.Contains(e.Error(), "position "+strconv.FormatInt(bad.pos, 10)) {
			t.Errorf("flipped batch: %v", e)
		}
	})

	t.Run("magic", func(t *testing.T) {
		p := dumpCopySegment(t, orig)
		dumpPatchFile(t, p, func(d []byte) []byte { d[good[1].pos+16] = 1; return d })
		got, err := dumpScanAll(fsys, p)
		if err != nil || len(got) != len(good) || !errors.Is(got[1].err, batch.ErrUnsupportedMagic) {
			t.Errorf("magic 1: %d batches, %v, batch 1: %v", len(got), err, got[1].err)
		}
	})

	t.Run("torn", func(t *testing.T) {
		p := dumpCopySegment(t, orig)
		cut := good[3].pos + 30
		dumpPatchFile(t, p, func(d []byte) []byte { return d[:cut] })
		got, err := dumpScanAll(fsys, p)
		if len(got) != 3 || !errors.Is(err, ErrCorrupt) || !errors.Is(err, batch.ErrTruncated) ||
			!strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "position "+strconv.FormatInt(good[3].pos, 10)) {
			t.Errorf("torn at %d: %d batches, %v", cut, len(got), err)
		}
		idx, _ := dumpIndexPaths(p)
		if err := CheckOffsetIndex(fsys, idx, p); !errors.Is(err, ErrCorrupt) {
			t.Errorf("CheckOffsetIndex on a torn log: %v", err)
		} else {
			t.Log(err)
		}
	})

	t.Run("impossible length", func(t *testing.T) {
		p := dumpCopySegment(t, orig)
		dumpPatchFile(t, p, func(d []byte) []byte {
			binary.BigEndian.PutUint32(d[good[2].pos+8:], 3)
			return d
		})
		got, err := dumpScanAll(fsys, p)
		if len(got) != 2 || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "position "+strconv.FormatInt(good[2].pos, 10)) {
			t.Errorf("length 3: %d batches, %v", len(got), err)
		}
	})

	t.Run("callback error", func(t *testing.T) {
		stop := errors.New("stop")
		n := 0
		err := ScanLogFile(fsys, orig, func(int64, []byte, error) error { n++; return stop })
		if err != stop || n != 1 {
			t.Errorf("ScanLogFile returned %v after %d calls, want the callback's error after 1", err, n)
		}
	})
}

func TestDumpCheckIndexesCorrupt(t *testing.T) {
	fsys := OSFS{}
	dir, _ := writeDumpTestLog(t, fsys, t.TempDir(), true)
	orig := dumpLogPaths(t, fsys, dir)[0]
	idx0, _ := dumpIndexPaths(orig)
	entries, err := ReadOffsetIndex(fsys, idx0)
	if err != nil || len(entries) < 3 {
		t.Fatalf("index of the first segment: %v, %v", entries, err)
	}
	cases := []struct {
		name  string
		patch func(idx, tidx []byte) ([]byte, []byte)
		want  string // in CheckOffsetIndex's or CheckTimeIndex's error
	}{
		{"position inside a batch", func(idx, tidx []byte) ([]byte, []byte) {
			binary.BigEndian.PutUint32(idx[4:], uint32(entries[0].Position+5))
			return idx, tidx
		}, "where no batch"},
		{"position past the log", func(idx, tidx []byte) ([]byte, []byte) {
			binary.BigEndian.PutUint32(idx[len(idx)-4:], 1<<30)
			return idx, tidx
		}, "past the end"},
		{"wrong offset", func(idx, tidx []byte) ([]byte, []byte) {
			binary.BigEndian.PutUint32(idx[8:], binary.BigEndian.Uint32(idx[8:])-1)
			return idx, tidx
		}, "has last offset"},
		{"offsets out of order", func(idx, tidx []byte) ([]byte, []byte) {
			copy(idx[8:16], idx[0:8])
			return idx, tidx
		}, "is not after"},
		{"torn index", func(idx, tidx []byte) ([]byte, []byte) { return idx[:len(idx)-3], tidx }, "not a multiple"},
		{"wrong timestamp", func(idx, tidx []byte) ([]byte, []byte) {
			binary.BigEndian.PutUint64(tidx[0:], binary.BigEndian.Uint64(tidx[0:])-1)
			return idx, tidx
		}, "max timestamp"},
		{"time offset of no batch", func(idx, tidx []byte) ([]byte, []byte) {
			binary.BigEndian.PutUint32(tidx[8:], 1<<20)
			return idx, tidx
		}, "last offset of no batch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := dumpCopySegment(t, orig)
			idx, tidx := dumpIndexPaths(p)
			a, err := os.ReadFile(idx)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(tidx)
			if err != nil {
				t.Fatal(err)
			}
			a, b = tc.patch(a, b)
			dumpPatchFile(t, idx, func([]byte) []byte { return a })
			dumpPatchFile(t, tidx, func([]byte) []byte { return b })
			err = errors.Join(CheckOffsetIndex(fsys, idx, p), CheckTimeIndex(fsys, tidx, p))
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want ErrCorrupt mentioning %q", err, tc.want)
			}
		})
	}
}

// dumpDetectable reports whether a change of byte at in the log, whose batches
// are good, must be caught by a batch's checks: every byte but those of the
// base offset and the partition leader epoch, which lie outside the CRC.
func dumpDetectable(good []dumpScanned, at int64) bool {
	for _, b := range good {
		if at >= b.pos && at < b.pos+b.size {
			rel := at - b.pos
			return !(rel < 8 || rel >= 12 && rel < 16)
		}
	}
	return true
}

// TestDumpRandomCorruption flips bytes and cuts copies of a segment at
// random: nothing panics, and every change the format can detect is
// reported by ScanLogFile, as a batch error or a stop.
func TestDumpRandomCorruption(t *testing.T) {
	fsys := OSFS{}
	dir, _ := writeDumpTestLog(t, fsys, t.TempDir(), true)
	orig := dumpLogPaths(t, fsys, dir)[1]
	good, err := dumpScanAll(fsys, orig)
	if err != nil {
		t.Fatal(err)
	}
	boundaries := map[int64]bool{}
	for _, b := range good {
		boundaries[b.pos] = true
		boundaries[b.pos+b.size] = true
	}
	rng := rand.New(rand.NewPCG(1, 2))
	p := dumpCopySegment(t, orig)
	idx, tidx := dumpIndexPaths(p)
	originals := map[string][]byte{}
	for _, f := range []string{p, idx, tidx} {
		if originals[f], err = os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 300 {
		target := []string{p, p, idx, tidx}[rng.IntN(4)]
		for f, data := range originals {
			if err := os.WriteFile(f, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		data := slices.Clone(originals[target])
		if len(data) == 0 {
			continue
		}
		at := rng.Int64N(int64(len(data)))
		truncate := rng.IntN(3) == 0
		if truncate {
			data = data[:at]
		} else {
			data[at] ^= byte(1 + rng.IntN(255))
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, scanErr := dumpScanAll(fsys, p)
		checkErr := errors.Join(CheckOffsetIndex(fsys, idx, p), CheckTimeIndex(fsys, tidx, p))
		if target != p {
			continue // index changes need only not panic
		}
		found := scanErr != nil || slices.ContainsFunc(got, func(b dumpScanned) bool { return b.err != nil })
		mustFind := truncate && !boundaries[at] || !truncate && dumpDetectable(good, at)
		if mustFind && !found {
			t.Fatalf("round %d: %s at %d of the log went unnoticed (index check: %v)", round, map[bool]string{true: "cut", false: "flip"}[truncate], at, checkErr)
		}
		if truncate && boundaries[at] && at < int64(len(originals[p])) && len(originals[idx]) > 0 && checkErr == nil {
			entries, _ := ReadOffsetIndex(fsys, idx)
			if len(entries) > 0 && entries[len(entries)-1].Position >= at {
				t.Fatalf("round %d: log cut at batch boundary %d below the last index entry went unnoticed", round, at)
			}
		}
	}
}

// FuzzDumpScanLogFile feeds arbitrary bytes to ScanLogFile and the index
// readers: they must not panic, and every batch passed without an error must
// pass batch.Validate.
func FuzzDumpScanLogFile(f *testing.F) {
	f.Add(makeBatch(f, 0, 3, 1000, 10))
	f.Add(append(makeBatch(f, 0, 1, 1000, 10), makeBatch(f, 1, 2, 1001, 5)...))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := NewMemFS()
		if err := fsys.MkdirAll("/p", 0o755); err != nil {
			t.Fatal(err)
		}
		for _, suffix := range []string{logSuffix, indexSuffix, timeIndexSuffix} {
			f, err := fsys.OpenFile("/p/"+segmentFileName(0, suffix), os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(data, 0); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
		logPath := "/p/" + segmentFileName(0, logSuffix)
		_ = ScanLogFile(fsys, logPath, func(pos int64, b []byte, err error) error {
			if _, verr := batch.Validate(b); (verr == nil) != (err == nil) {
				t.Fatalf("batch at %d: ScanLogFile says %v, Validate says %v", pos, err, verr)
			}
			return nil
		})
		_, _ = ReadOffsetIndex(fsys, "/p/"+segmentFileName(0, indexSuffix))
		_, _ = ReadTimeIndex(fsys, "/p/"+segmentFileName(0, timeIndexSuffix))
		_ = CheckOffsetIndex(fsys, "/p/"+segmentFileName(0, indexSuffix), logPath)
		_ = CheckTimeIndex(fsys, "/p/"+segmentFileName(0, timeIndexSuffix), logPath)
	})
}
