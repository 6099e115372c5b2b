package log

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/weirmq/weir/log/batch"
)

// An Append that returns an error has appended nothing: here the
// leader-epoch checkpoint cannot be written after the data was.
func TestBadInputFailedAppendLeavesNothing(t *testing.T) {
	mem := NewMemFS()
	clock := &testClock{ms: 1_700_000_000_000}
	fault := &plFault{op: "open", suffix: epochCheckpoint + ".tmp"}
	mem.SetFaults(fault.hook)
	m, l := plOpen(t, mem, clock)
	defer m.Close()
	fault.on.Store(true)
	_, err := l.Append(makeBatch(t, 0, 1, clock.ms, 10), AppendOptions{AssignOffsets: true, LeaderEpoch: 3})
	if err == nil {
		t.Fatal("append succeeded with the leader-epoch checkpoint failing")
	}
	if end := l.LogEndOffset(); end != 0 {
		data, _ := l.Read(0, ReadOptions{MaxBytes: 1 << 20})
		t.Fatalf("append failed (%v), yet the log end offset is %d and a read at 0 serves %d bytes", err, end, len(data))
	}
}

// The tests below feed the log each kind of bad input it must survive (a
// corrupt CRC, a length that runs past the buffer or the file, a magic
// other than 2, an index pointing past its segment, a missing directory, a
// permission error) and check that the error wraps its sentinel and names
// the path and position, that nothing bad is written or served, that the
// log works again afterwards, and that nothing panics (docs/DESIGN.md "Bad
// input").

// biTP is the partition biEnv opens, as plOpen does.
var biTP = TopicPartition{"cut", 0}

// biPartDir is biTP's directory under plDir.
var biPartDir = filepath.Join(plDir, biTP.String())

// biRun runs one case as a subtest and turns a panic into a failure that
// shows where it happened.
func biRun(t *testing.T, name string, fn func(t *testing.T)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		fn(t)
	})
}

// biWantErr fails unless err wraps every sentinel and its message holds
// every part.
func biWantErr(t *testing.T, what string, err error, sentinels []error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want one wrapping %v", what, sentinels)
		return
	}
	for _, s := range sentinels {
		if !errors.Is(err, s) {
			t.Errorf("%s: error %q does not wrap %q", what, err, s)
		}
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not name %q", what, err, p)
		}
	}
}

// biHasPosition reports whether s holds "position N" as a whole number.
func biHasPosition(s string, n int64) bool {
	return regexp.MustCompile(fmt.Sprintf(`position %d\b`, n)).MatchString(s)
}

// biFault fails the operations its match selects with an error wrapping
// fs.ErrPermission, and counts them.
type biFault struct {
	mu    sync.Mutex
	match func(op, path string) bool
	hits  int
}

func (f *biFault) set(match func(op, path string) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.match, f.hits = match, 0
}

func (f *biFault) hitCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits
}

func (f *biFault) hook(op, path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.match == nil || !f.match(op, path) {
		return nil
	}
	f.hits++
	return fmt.Errorf("injected: %w", fs.ErrPermission)
}

// biOn matches one operation on paths ending with suffix.
func biOn(op, suffix string) func(string, string) bool {
	return func(o, p string) bool { return o == op && strings.HasSuffix(p, suffix) }
}

// biLogger writes the manager's lines to the test's output and, if out is
// not nil, to out.
func biLogger(t *testing.T, out io.Writer) *slog.Logger {
	w := io.Writer(testWriter{t})
	if out != nil {
		w = io.MultiWriter(out, w)
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// biEnv is one MemFS with a fault hook, a manager on plDir and the log of
// biTP, configured as plOpen does (1 KiB segments, group commit).
type biEnv struct {
	t     *testing.T
	mem   *MemFS
	clock *testClock
	out   *plLogBuffer
	fault *biFault
	m     *Manager
	l     *Log
	key   int // next record key
}

func newBIEnv(t *testing.T) *biEnv {
	e := &biEnv{t: t, mem: NewMemFS(), clock: &testClock{ms: 1_700_000_000_000}, out: &plLogBuffer{}, fault: &biFault{}}
	e.mem.SetFaults(e.fault.hook)
	t.Cleanup(func() {
		if e.m != nil {
			e.m.Abandon()
		}
	})
	return e
}

func (e *biEnv) openManager() (*Manager, error) {
	return OpenManager(ManagerConfig{Dir: plDir, FS: e.mem, Now: e.clock.now, NoBackground: true, Logger: biLogger(e.t, e.out)})
}

func (e *biEnv) openLog(m *Manager) (*Log, error) {
	cfg := smallConfig()
	cfg.SegmentBytes = 1024
	cfg.FlushMessages = 1
	return m.OpenLog(biTP, cfg, [16]byte{1})
}

// tryOpen opens the manager and the log; on error nothing stays open.
func (e *biEnv) tryOpen() error {
	m, err := e.openManager()
	if err != nil {
		return err
	}
	l, err := e.openLog(m)
	if err != nil {
		m.Abandon()
		return err
	}
	e.m, e.l = m, l
	return nil
}

func (e *biEnv) open() {
	e.t.Helper()
	if err := e.tryOpen(); err != nil {
		e.t.Fatalf("open: %v", err)
	}
}

// close shuts down cleanly.
func (e *biEnv) close() {
	e.t.Helper()
	err := e.m.Close()
	e.m, e.l = nil, nil
	if err != nil {
		e.t.Fatalf("close: %v", err)
	}
}

// crash kills the process: handles are lost, the page cache survives.
func (e *biEnv) crash() {
	e.mem.Crash()
	e.m.Abandon()
	e.m, e.l = nil, nil
}

// batch builds a batch of n records with values of size bytes.
func (e *biEnv) batch(n, size int) []byte {
	b := makeBatch(e.t, e.key, n, e.clock.ms, size)
	e.key += n
	return b
}

// append appends b as the leader and returns it as stored.
func (e *biEnv) append(b []byte) []byte {
	e.t.Helper()
	if _, err := e.l.Append(b, AppendOptions{AssignOffsets: true}); err != nil {
		e.t.Fatalf("append: %v", err)
	}
	return bytes.Clone(b)
}

// fill appends batches of two records until the log has segs segments,
// then extra more, and returns them as stored.
func (e *biEnv) fill(segs, extra int) [][]byte {
	e.t.Helper()
	var out [][]byte
	for e.l.SegmentCount() < segs {
		out = append(out, e.append(e.batch(2, 40)))
	}
	for range extra {
		out = append(out, e.append(e.batch(2, 40)))
	}
	return out
}

// segPaths returns the .log paths of the log's segments.
func (e *biEnv) segPaths() []string {
	e.l.mu.RLock()
	defer e.l.mu.RUnlock()
	var out []string
	for _, s := range e.l.segs {
		out = append(out, s.logPath)
	}
	return out
}

// batchesIn returns the batches of a .log file and their positions.
func (e *biEnv) batchesIn(path string) ([][]byte, []int64) {
	e.t.Helper()
	data, err := ReadFile(e.mem, path)
	if err != nil {
		e.t.Fatal(err)
	}
	bs, err := batch.Split(data)
	if err != nil {
		e.t.Fatalf("%s: %v", path, err)
	}
	pos := make([]int64, len(bs))
	for i := 1; i < len(bs); i++ {
		pos[i] = pos[i-1] + int64(len(bs[i-1]))
	}
	return bs, pos
}

// files returns the names in the partition directory with, for .log files,
// their sizes (index files are trimmed and regrown freely: -1).
func (e *biEnv) files() map[string]int64 {
	e.t.Helper()
	names, err := e.mem.ReadDir(biPartDir)
	if err != nil {
		e.t.Fatal(err)
	}
	out := make(map[string]int64, len(names))
	for _, n := range names {
		out[n] = -1
		if !strings.HasSuffix(n, logSuffix) {
			continue
		}
		size, err := e.mem.Stat(filepath.Join(biPartDir, n))
		if err != nil {
			e.t.Fatal(err)
		}
		out[n] = size
	}
	return out
}

// wantLogged fails unless one of the manager's lines holds msg and every
// part.
func (e *biEnv) wantLogged(msg string, parts ...string) {
	e.t.Helper()
	for line := range strings.SplitSeq(e.out.String(), "\n") {
		if strings.Contains(line, msg) && !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
			return
		}
	}
	e.t.Fatalf("no log line %q naming %q; the manager logged:\n%s", msg, parts, e.out.String())
}

// checkServed checks that the log holds exactly want from offset 0: its end
// offset, every batch read in bulk and at each of its offsets byte for
// byte, and nothing at the end.
func (e *biEnv) checkServed(what string, want [][]byte) {
	e.t.Helper()
	l := e.l
	end := int64(0)
	if len(want) > 0 {
		end = batch.LastOffset(want[len(want)-1]) + 1
	}
	if got := l.LogEndOffset(); got != end {
		e.t.Fatalf("%s: log end offset %d, want %d", what, got, end)
	}
	got := readAll(e.t, l, 1<<20)
	if len(got) != len(want) {
		e.t.Fatalf("%s: %d batches served, want %d", what, len(got), len(want))
	}
	for i, w := range want {
		if !bytes.Equal(got[i], w) {
			e.t.Fatalf("%s: batch %d served differs from the one appended at offset %d", what, i, batch.BaseOffset(w))
		}
		for off := batch.BaseOffset(w); off <= batch.LastOffset(w); off++ {
			data, err := l.Read(off, ReadOptions{MaxBytes: 1})
			if err != nil || !bytes.Equal(data, w) {
				e.t.Fatalf("%s: read at %d: %d bytes, %v; want the batch [%d, %d]", what, off, len(data), err, batch.BaseOffset(w), batch.LastOffset(w))
			}
		}
	}
	if data, err := l.Read(end, ReadOptions{MaxBytes: 1 << 20}); err != nil || len(data) > 0 {
		e.t.Fatalf("%s: read at the log end %d: %d bytes, %v; want nothing", what, end, len(data), err)
	}
}

// biLegacyMessage builds one message of magic 0 or 1, the formats before
// record batches: offset, size, CRC-32 (IEEE) of the rest, magic,
// attributes, a timestamp (magic 1 only), key and value.
func biLegacyMessage(magic byte, value []byte) []byte {
	body := []byte{magic, 0}
	if magic == 1 {
		body = binary.BigEndian.AppendUint64(body, 1_700_000_000_000)
	}
	body = binary.BigEndian.AppendUint32(body, 0xffffffff) // null key
	body = binary.BigEndian.AppendUint32(body, uint32(len(value)))
	body = append(body, value...)
	msg := binary.BigEndian.AppendUint64(nil, 0)
	msg = binary.BigEndian.AppendUint32(msg, uint32(4+len(body)))
	msg = binary.BigEndian.AppendUint32(msg, crc32.ChecksumIEEE(body))
	return append(msg, body...)
}

// biAppendCase is one bad batch given to Append.
type biAppendCase struct {
	name string
	// bad returns the bad input and the byte, within it, the error is at.
	bad  func(t *testing.T) ([]byte, int)
	want error
	// split: the bad length is caught while cutting the buffer into
	// batches, so the message gives the byte position but no batch index.
	split bool
	// loose: only the byte position is checked.
	loose bool
}

func biAppendCases() []biAppendCase {
	good := func(t *testing.T) []byte { return makeBatch(t, 100, 2, 1_700_000_000_000, 30) }
	edit := func(fn func(b []byte)) func(t *testing.T) ([]byte, int) {
		return func(t *testing.T) ([]byte, int) {
			b := good(t)
			fn(b)
			return b, 0
		}
	}
	setLength := func(n uint32) func(b []byte) { return func(b []byte) { binary.BigEndian.PutUint32(b[8:], n) } }
	legacy := func(magic byte, valueSize int) func(*testing.T) ([]byte, int) {
		return func(*testing.T) ([]byte, int) { return biLegacyMessage(magic, make([]byte, valueSize)), 0 }
	}
	return []biAppendCase{
		{name: "crc-of-records", bad: edit(func(b []byte) { b[len(b)-1] ^= 0x01 }), want: batch.ErrCorrupt},
		{name: "crc-field", bad: edit(func(b []byte) { b[17] ^= 0xff }), want: batch.ErrCorrupt},
		{name: "length-one-past-buffer", bad: func(t *testing.T) ([]byte, int) {
			b := good(t)
			setLength(uint32(len(b) - batch.LengthPrefix + 1))(b)
			return b, 0
		}, want: batch.ErrTruncated, split: true},
		{name: "length-far-past-buffer", bad: edit(setLength(1 << 30)), want: batch.ErrTruncated, split: true},
		{name: "length-below-minimum", bad: edit(setLength(batch.HeaderSize - batch.LengthPrefix - 1)), want: batch.ErrCorrupt, split: true},
		{name: "length-zero", bad: edit(setLength(0)), want: batch.ErrCorrupt, split: true},
		{name: "length-negative", bad: edit(setLength(0xffffffff)), want: batch.ErrCorrupt, split: true},
		{name: "trailing-bytes", bad: func(t *testing.T) ([]byte, int) {
			b := good(t)
			return append(b, 1, 2, 3, 4, 5), len(b)
		}, want: batch.ErrTruncated, split: true},
		{name: "header-only-past-buffer", bad: func(t *testing.T) ([]byte, int) {
			return good(t)[:batch.HeaderSize], 0
		}, want: batch.ErrTruncated, split: true},
		{name: "magic-0", bad: edit(func(b []byte) { b[16] = 0 }), want: batch.ErrUnsupportedMagic},
		{name: "magic-1", bad: edit(func(b []byte) { b[16] = 1 }), want: batch.ErrUnsupportedMagic},
		{name: "magic-3", bad: edit(func(b []byte) { b[16] = 3 }), want: batch.ErrUnsupportedMagic},
		{name: "legacy-v0-message", bad: legacy(0, 100), want: batch.ErrUnsupportedMagic},
		{name: "legacy-v1-message", bad: legacy(1, 100), want: batch.ErrUnsupportedMagic},
		{name: "legacy-v0-message-small", bad: legacy(0, 2), want: batch.ErrUnsupportedMagic, loose: true},
		{name: "legacy-v1-message-small", bad: legacy(1, 2), want: batch.ErrUnsupportedMagic, loose: true},
		{name: "negative-last-offset-delta", bad: edit(func(b []byte) {
			binary.BigEndian.PutUint32(b[23:], 0xffffffff)
			batch.SetCRC(b)
		}), want: batch.ErrCorrupt},
		{name: "unknown-codec", bad: edit(func(b []byte) {
			b[22] |= 0x07
			batch.SetCRC(b)
		}), want: batch.ErrCorrupt},
	}
}

// TestBadInputAppendRejected appends each kind of bad batch, alone and
// after a good one in the same call: the error wraps the batch package's
// sentinel and names the partition, the batch's index and its byte
// position in the buffer; nothing was written (log end, sizes and files
// unchanged, nothing served at the end, no epoch recorded); the caller's
// buffer is untouched; the same offset then takes a good append, and all
// survives a clean reopen.
func TestBadInputAppendRejected(t *testing.T) {
	for _, tc := range biAppendCases() {
		for _, after := range []bool{false, true} {
			name := tc.name + "/alone"
			if after {
				name = tc.name + "/after-a-good-batch"
			}
			biRun(t, name, func(t *testing.T) { biAppendRejected(t, tc, after) })
		}
	}
}

func biAppendRejected(t *testing.T, tc biAppendCase, after bool) {
	e := newBIEnv(t)
	e.open()
	first := e.append(e.batch(3, 20))
	leo, size, files := e.l.LogEndOffset(), e.l.Size(), e.files()

	var buf []byte
	index := 0
	if after {
		buf, index = e.batch(2, 20), 1
	}
	bad, at := tc.bad(t)
	pos := len(buf) + at
	buf = append(buf, bad...)
	orig := bytes.Clone(buf)
	_, err := e.l.Append(buf, AppendOptions{AssignOffsets: true, LeaderEpoch: 5})
	where := fmt.Sprintf("batch %d at byte %d:", index, pos)
	switch {
	case tc.split:
		where = fmt.Sprintf("batch at byte %d:", pos)
	case tc.loose:
		where = fmt.Sprintf("at byte %d:", pos)
	}
	biWantErr(t, "bad append", err, []error{tc.want}, biTP.String(), where)
	if !bytes.Equal(buf, orig) {
		t.Errorf("the rejected append changed the caller's buffer")
	}
	if got := e.l.Size(); got != size {
		t.Errorf("log size %d after the rejected append, was %d", got, size)
	}
	if got := e.files(); !maps.Equal(got, files) {
		t.Errorf("files %v after the rejected append, were %v", got, files)
	}
	if got := e.l.LatestEpoch(); got != 0 {
		t.Errorf("latest leader epoch %d after the rejected append of epoch 5, want 0", got)
	}
	e.checkServed("after the rejected append", [][]byte{first})

	res, err := e.l.Append(e.batch(2, 20), AppendOptions{AssignOffsets: true})
	if err != nil || res.FirstOffset != leo {
		t.Fatalf("good append after the rejected one: %+v, %v; want it at offset %d", res, err, leo)
	}
	next, _ := e.l.Read(leo, ReadOptions{MaxBytes: 1})
	e.close()
	e.open()
	e.checkServed("after a clean reopen", [][]byte{first, next})
	e.close()
}

// TestBadInputEmptyAppend: an empty buffer is an error, not a no-op append.
func TestBadInputEmptyAppend(t *testing.T) {
	biRun(t, "empty", func(t *testing.T) {
		e := newBIEnv(t)
		e.open()
		_, err := e.l.Append(nil, AppendOptions{AssignOffsets: true})
		biWantErr(t, "empty append", err, []error{batch.ErrCorrupt}, biTP.String())
		e.checkServed("after the empty append", nil)
		e.close()
	})
}

// biDamage is one kind of damage to the batch at pos of a .log file.
type biDamage struct {
	name   string
	apply  func(d []byte, pos int64)
	reason string // what the error or warning says of it
	want   error  // the batch package's sentinel
}

var biDamages = []biDamage{
	{"crc", func(d []byte, pos int64) { d[pos+batch.HeaderSize+3] ^= 0xff }, "crc", batch.ErrCorrupt},
	{"length-past-file-end", func(d []byte, pos int64) {
		binary.BigEndian.PutUint32(d[pos+8:], uint32(int64(len(d))-pos-batch.LengthPrefix+1+1000))
	}, "runs past the end", batch.ErrTruncated},
	{"magic-0", func(d []byte, pos int64) { d[pos+16] = 0 }, "magic 0", batch.ErrUnsupportedMagic},
	{"magic-1", func(d []byte, pos int64) { d[pos+16] = 1 }, "magic 1", batch.ErrUnsupportedMagic},
}

// TestBadInputActiveSegmentRecovered damages the first, a middle or the
// last batch of the active segment (past the recovery point) and crashes:
// recovery truncates exactly there (dropping the segment when nothing in it
// is valid), logs a warning naming the segment, the position and the
// reason, serves only the valid prefix, and takes appends from there that
// survive a clean reopen.
func TestBadInputActiveSegmentRecovered(t *testing.T) {
	for _, dmg := range biDamages {
		for _, which := range []string{"first", "middle", "last"} {
			biRun(t, dmg.name+"/"+which, func(t *testing.T) { biActiveSegmentRecovered(t, dmg, which) })
		}
	}
}

func biActiveSegmentRecovered(t *testing.T, dmg biDamage, which string) {
	e := newBIEnv(t)
	e.open()
	all := e.fill(2, 0)
	if err := e.l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := e.m.Checkpoint(); err != nil { // the recovery point lies in the active segment
		t.Fatal(err)
	}
	all = append(all, e.fill(2, 3)...)
	paths := e.segPaths()
	path := paths[len(paths)-1]
	bs, pos := e.batchesIn(path)
	k := map[string]int{"first": 0, "middle": len(bs) / 2, "last": len(bs) - 1}[which]
	kept := all[:len(all)-len(bs)+k]
	e.crash()
	corrPatchMem(t, e.mem, path, func(d []byte) []byte { dmg.apply(d, pos[k]); return d })

	e.open()
	e.wantLogged("found invalid data, truncating log", "segment="+path, fmt.Sprintf("position=%d ", pos[k]), dmg.reason)
	e.checkServed("after recovery", kept)
	size, err := e.mem.Stat(path)
	switch {
	case k > 0 && (err != nil || size != pos[k]):
		t.Fatalf("%s after recovery: size %d, %v; want it cut at %d", path, size, err, pos[k])
	case k == 0 && !errors.Is(err, fs.ErrNotExist):
		t.Fatalf("%s, with no valid batch, after recovery: size %d, %v; want it deleted", path, size, err)
	}
	kept = append(kept, e.append(e.batch(1, 10)))
	e.close()
	e.open()
	e.checkServed("after an append and a clean reopen", kept)
	e.close()
}

// TestBadInputOldSegmentNotServed damages a batch in the middle of the
// first segment after a clean shutdown, so the open does not scan it: reads
// below it serve the valid batches, a read of it fails with ErrCorrupt (and
// the batch package's sentinel) naming the path and position, reads past it
// serve only original batches or fail the same way, and appends go on.
func TestBadInputOldSegmentNotServed(t *testing.T) {
	for _, dmg := range biDamages {
		biRun(t, dmg.name, func(t *testing.T) { biOldSegmentNotServed(t, dmg) })
	}
}

func biOldSegmentNotServed(t *testing.T, dmg biDamage) {
	e := newBIEnv(t)
	e.open()
	all := e.fill(3, 1)
	orig := make(map[int64][]byte, len(all))
	for _, b := range all {
		orig[batch.BaseOffset(b)] = b
	}
	path := e.segPaths()[0]
	bs, pos := e.batchesIn(path)
	if len(bs) < 3 {
		t.Fatalf("%s holds %d batches, want at least 3", path, len(bs))
	}
	k := len(bs) / 2
	badFirst, badLast := batch.BaseOffset(bs[k]), batch.LastOffset(bs[k])
	segEnd := batch.LastOffset(bs[len(bs)-1])
	end := batch.LastOffset(all[len(all)-1]) + 1
	e.close()
	corrPatchMem(t, e.mem, path, func(d []byte) []byte { dmg.apply(d, pos[k]); return d })

	e.open()
	if got := e.l.LogEndOffset(); got != end {
		t.Fatalf("log end offset %d after a clean open, want %d", got, end)
	}
	for off := int64(0); off < end; off++ {
		data, err := e.l.Read(off, ReadOptions{MaxBytes: 1 << 20})
		what := fmt.Sprintf("read at %d (batch [%d, %d] at position %d of %s damaged)", off, badFirst, badLast, pos[k], path)
		switch {
		case off >= badFirst && off <= badLast:
			biWantErr(t, what, err, []error{ErrCorrupt, dmg.want}, path)
			if err != nil && !biHasPosition(err.Error(), pos[k]) {
				t.Errorf("%s: error %q does not give the position %d", what, err, pos[k])
			}
			if len(data) > 0 {
				t.Errorf("%s: %d bytes served with the error", what, len(data))
			}
			continue
		case err != nil && off > badLast && off <= segEnd:
			biWantErr(t, what, err, []error{ErrCorrupt}, path)
			continue
		case err != nil:
			t.Fatalf("%s: %v", what, err)
		}
		served, serr := batch.Split(data)
		if serr != nil || len(served) == 0 {
			t.Fatalf("%s: %d bytes served, %v", what, len(data), serr)
		}
		for _, b := range served {
			if !bytes.Equal(b, orig[batch.BaseOffset(b)]) {
				t.Fatalf("%s served a batch at %d that is not the one appended there", what, batch.BaseOffset(b))
			}
		}
	}
	if res, err := e.l.Append(e.batch(1, 10), AppendOptions{AssignOffsets: true}); err != nil || res.FirstOffset != end {
		t.Fatalf("append after the damage: %+v, %v; want it at %d", res, err, end)
	}
	e.close()
}

// TestBadInputIndexPastSegment points the last entry of a segment's offset
// index past the segment after a clean shutdown: every offset reads back,
// appends and reads go on, and an entry whose position lies past the
// segment is caught: the index is rebuilt with a warning naming it and
// written back, so the next open does not warn again. (An entry whose
// offset lies past the segment's range, at a true position, is never
// returned by a lookup below it, so it does no harm and is not required to
// be caught.)
func TestBadInputIndexPastSegment(t *testing.T) {
	setPos := func(pos func(size int64) uint32) func([]byte, int64) {
		return func(e []byte, size int64) { binary.BigEndian.PutUint32(e[4:], pos(size)) }
	}
	cases := []struct {
		name    string
		active  bool
		patch   func(entry []byte, segSize int64)
		rebuilt bool
	}{
		{"old-segment/position-past-end", false, setPos(func(size int64) uint32 { return uint32(size + 100) }), true},
		{"old-segment/position-at-end", false, setPos(func(size int64) uint32 { return uint32(size) }), true},
		{"old-segment/position-max", false, setPos(func(int64) uint32 { return 0xffffffff }), true},
		{"active-segment/position-past-end", true, setPos(func(size int64) uint32 { return uint32(size + 100) }), true},
		{"active-segment/position-max", true, setPos(func(int64) uint32 { return 0xffffffff }), true},
		{"old-segment/offset-past-range", false, func(e []byte, _ int64) { binary.BigEndian.PutUint32(e, 1<<24) }, false},
		{"active-segment/offset-past-range", true, func(e []byte, _ int64) { binary.BigEndian.PutUint32(e, 1<<24) }, false},
	}
	for _, tc := range cases {
		biRun(t, tc.name, func(t *testing.T) {
			e := newBIEnv(t)
			e.open()
			all := e.fill(3, 4)
			paths := e.segPaths()
			seg := 0
			if tc.active {
				seg = len(paths) - 1
			}
			logPath := paths[seg]
			idxPath := strings.TrimSuffix(logPath, logSuffix) + indexSuffix
			e.close()
			segSize, err := e.mem.Stat(logPath)
			if err != nil {
				t.Fatal(err)
			}
			corrPatchMem(t, e.mem, idxPath, func(d []byte) []byte {
				n := len(d) / indexEntrySize
				for n > 0 && !slices.ContainsFunc(d[(n-1)*indexEntrySize:n*indexEntrySize], func(b byte) bool { return b != 0 }) {
					n--
				}
				if n == 0 {
					t.Fatalf("%s has no entries", idxPath)
				}
				tc.patch(d[(n-1)*indexEntrySize:n*indexEntrySize], segSize)
				return d
			})

			e.open()
			e.checkServed("after the open", all)
			for e.l.SegmentCount() < len(paths)+1 {
				all = append(all, e.append(e.batch(2, 40)))
			}
			e.checkServed("after more appends", all)
			if !tc.rebuilt {
				e.close()
				return
			}
			e.wantLogged("rebuilding index", "segment="+logPath, idxPath)
			e.close()
			e.out.take()
			e.open()
			e.checkServed("after a clean reopen", all)
			if strings.Contains(e.out.String(), "rebuilding index") {
				t.Fatalf("the index was rebuilt again on the next open:\n%s", e.out.String())
			}
			e.close()
		})
	}
}

// TestBadInputMissingDirectory opens a log directory, or a partition
// directory, that cannot exist (its parent, or itself, is a regular file)
// or cannot be created: the error names the path and wraps the cause.
// (Faults injected into the same steps are in TestBadInputPermissionOpen.)
func TestBadInputMissingDirectory(t *testing.T) {
	writeFile := func(t *testing.T, path string) {
		if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		// setup prepares root and returns the log directory to open and,
		// if the manager opens, the partition directory whose log fails.
		setup func(t *testing.T, root string) (dir, part string)
		want  error
	}{
		{"parent-is-a-file", func(t *testing.T, root string) (string, string) {
			writeFile(t, filepath.Join(root, "file"))
			return filepath.Join(root, "file", "logs"), ""
		}, syscall.ENOTDIR},
		{"dir-is-a-file", func(t *testing.T, root string) (string, string) {
			writeFile(t, filepath.Join(root, "file"))
			return filepath.Join(root, "file"), ""
		}, syscall.ENOTDIR},
		{"parent-not-writable", func(t *testing.T, root string) (string, string) {
			if os.Geteuid() == 0 {
				t.Skip("root ignores directory permissions")
			}
			parent := filepath.Join(root, "ro")
			if err := os.Mkdir(parent, 0o555); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(parent, 0o755) })
			return filepath.Join(parent, "logs"), ""
		}, fs.ErrPermission},
		{"partition-path-is-a-file", func(t *testing.T, root string) (string, string) {
			writeFile(t, filepath.Join(root, biTP.String()))
			return root, filepath.Join(root, biTP.String())
		}, syscall.ENOTDIR},
	}
	for _, tc := range cases {
		biRun(t, "os/"+tc.name, func(t *testing.T) {
			dir, part := tc.setup(t, t.TempDir())
			m, err := OpenManager(ManagerConfig{Dir: dir, Logger: biLogger(t, nil), NoBackground: true})
			if part == "" {
				if err == nil {
					m.Close()
				}
				biWantErr(t, "open manager", err, []error{tc.want}, dir)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			_, err = m.OpenLog(biTP, smallConfig(), [16]byte{1})
			biWantErr(t, "open log", err, []error{tc.want}, part)
		})
	}
	biRun(t, "memfs/parent-is-a-file", func(t *testing.T) {
		mem := NewMemFS()
		f, err := mem.OpenFile("/file", os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		_, err = OpenManager(ManagerConfig{Dir: "/file/logs", FS: mem, Logger: biLogger(t, nil)})
		biWantErr(t, "open manager", err, []error{syscall.ENOTDIR}, "/file/logs")
	})
}

// biOpenFault is a fault injected while the manager or the log opens.
type biOpenFault struct {
	name    string
	prepare string // "new", "clean" (written, shut down cleanly) or "crashed"
	stage   string // the fault is on while "manager" or "log" opens
	match   func(op, path string) bool
	path    string // the error names it
}

// TestBadInputPermissionOpen injects a permission error into each step of
// opening the manager and the log, for a new log, one shut down cleanly and
// one that crashed: the open fails with fs.ErrPermission and the path; once
// the fault is cleared the open works and the log holds what it held (and
// its topic id).
func TestBadInputPermissionOpen(t *testing.T) {
	marker := filepath.Join(plDir, cleanShutdownFile)
	cases := []biOpenFault{
		{"mkdir-log-dir", "new", "manager", biOn("mkdir", plDir), plDir},
		{"list-log-dir", "clean", "manager", biOn("readdir", plDir), plDir},
		{"remove-clean-marker", "clean", "manager", biOn("remove", cleanShutdownFile), marker},
		{"sync-log-dir-after-marker", "clean", "manager", biOn("syncdir", plDir), plDir},
		{"mkdir-partition", "new", "log", biOn("mkdir", biPartDir), biPartDir},
		{"list-partition", "new", "log", biOn("readdir", biPartDir), biPartDir},
		{"list-partition", "clean", "log", biOn("readdir", biPartDir), biPartDir},
		{"write-partition-metadata", "new", "log", biOn("open", partitionMetadata+".tmp"), filepath.Join(biPartDir, partitionMetadata)},
		{"sync-partition-metadata", "new", "log", biOn("sync", partitionMetadata+".tmp"), filepath.Join(biPartDir, partitionMetadata)},
		{"sync-log-dir-for-partition", "new", "log", biOn("syncdir", plDir), biPartDir},
		{"create-first-segment", "new", "log", biOn("open", logSuffix), filepath.Join(biPartDir, segmentFileName(0, logSuffix))},
		{"create-first-index", "new", "log", biOn("open", indexSuffix), filepath.Join(biPartDir, segmentFileName(0, indexSuffix))},
		{"stat-segment", "clean", "log", biOn("stat", logSuffix), filepath.Join(biPartDir, segmentFileName(0, logSuffix))},
		{"read-segment", "clean", "log", biOn("read", logSuffix), biPartDir},
		{"read-segment-in-recovery", "crashed", "log", biOn("read", logSuffix), biPartDir},
		{"open-segment-in-recovery", "crashed", "log", biOn("open", logSuffix), biPartDir},
		{"open-second-segment-in-recovery", "crashed", "log", func(op, path string) bool {
			return op == "open" && strings.HasSuffix(path, logSuffix) && !strings.HasSuffix(path, segmentFileName(0, logSuffix))
		}, biPartDir},
		{"sync-segment-in-recovery", "crashed", "log", biOn("sync", logSuffix), biPartDir},
		{"sync-partition-in-recovery", "crashed", "log", biOn("syncdir", biPartDir), biPartDir},
		{"write-epochs-in-recovery", "crashed", "log", biOn("open", epochCheckpoint+".tmp"), filepath.Join(biPartDir, epochCheckpoint)},
	}
	for _, tc := range cases {
		biRun(t, tc.prepare+"/"+tc.name, func(t *testing.T) { biPermissionOpen(t, tc) })
	}
}

func biPermissionOpen(t *testing.T, tc biOpenFault) {
	e := newBIEnv(t)
	var all [][]byte
	if tc.prepare != "new" {
		e.open()
		all = e.fill(2, 2)
		if tc.prepare == "clean" {
			e.close()
		} else {
			e.crash()
		}
	}
	var err error
	if tc.stage == "manager" {
		e.fault.set(tc.match)
		var m *Manager
		if m, err = e.openManager(); err == nil {
			m.Abandon()
		}
	} else {
		m, merr := e.openManager()
		if merr != nil {
			t.Fatal(merr)
		}
		e.fault.set(tc.match)
		_, err = e.openLog(m)
		m.Abandon()
	}
	if e.fault.hitCount() == 0 {
		t.Fatalf("the fault was never hit (open: %v)", err)
	}
	biWantErr(t, "open with the fault", err, []error{fs.ErrPermission}, tc.path)
	e.fault.set(nil)
	e.open()
	e.checkServed("after the fault was cleared", all)
	if id, err := e.l.TopicID(); err != nil || id != [16]byte{1} {
		t.Errorf("topic id %x, %v after the fault was cleared; want %x", id, err, [16]byte{1})
	}
	all = append(all, e.append(e.batch(1, 10)))
	e.close()
	e.open()
	e.checkServed("after an append and a clean reopen", all)
	e.close()
}

// biAppendFault is a fault injected into one append.
type biAppendFault struct {
	name string
	// setup appends to e as needed and returns the append to fail, the
	// fault and the path the error names.
	setup func(e *biEnv) (buf []byte, match func(op, path string) bool, path string)
}

// biNearlyFull appends until the active segment (a new log's first) is too
// full for a batch of bigSize bytes but not for one of smallSize.
func biNearlyFull(e *biEnv, big, small []byte) {
	e.t.Helper()
	for e.l.Size()+int64(len(big)) <= 1024 {
		e.append(e.batch(2, 40))
	}
	if e.l.SegmentCount() != 1 || e.l.Size()+int64(len(small)) > 1024 {
		e.t.Fatalf("%d segments, %d bytes: cannot set up a roll", e.l.SegmentCount(), e.l.Size())
	}
}

// TestBadInputPermissionAppend fails one write, file creation or sync an
// append needs, in the active segment, after a roll within the append, in
// the roll itself, or in the leader-epoch checkpoint: the append fails with
// fs.ErrPermission, the partition and the path; nothing stays behind (log
// end, sizes and files as before, nothing served); once the fault is
// cleared a smaller append and the retried one land at the right offsets
// and survive a clean reopen.
func TestBadInputPermissionAppend(t *testing.T) {
	newSeg := func(e *biEnv, skip int64, suffix string) string {
		return filepath.Join(biPartDir, segmentFileName(e.l.LogEndOffset()+skip, suffix))
	}
	rolling := func(name, op, suffix string, skip int64) biAppendFault {
		return biAppendFault{name: name, setup: func(e *biEnv) ([]byte, func(string, string) bool, string) {
			big := e.batch(1, 500)
			biNearlyFull(e, big, e.batch(1, 10))
			var buf []byte
			if skip > 0 { // a batch that fits goes first, in the same call
				buf = e.batch(int(skip), 10)
			}
			path := newSeg(e, skip, suffix)
			return append(buf, big...), biOn(op, path), path
		}}
	}
	small := func(e *biEnv) []byte { return e.batch(1, 10) }
	cases := []biAppendFault{
		{name: "write-active-segment", setup: func(e *biEnv) ([]byte, func(string, string) bool, string) {
			e.fill(1, 2)
			path := e.segPaths()[0]
			return e.batch(3, 20), biOn("write", path), path
		}},
		{name: "write-active-segment-many-batches", setup: func(e *biEnv) ([]byte, func(string, string) bool, string) {
			e.fill(1, 1)
			path := e.segPaths()[0]
			return slices.Concat(e.batch(1, 20), e.batch(2, 20), e.batch(1, 20)), biOn("write", path), path
		}},
		rolling("write-after-a-roll-in-the-same-append", "write", logSuffix, 1),
		rolling("create-rolled-segment", "open", logSuffix, 0),
		rolling("create-rolled-index", "open", indexSuffix, 0),
		rolling("create-rolled-time-index", "open", timeIndexSuffix, 0),
		{name: "trim-sealed-index", setup: func(e *biEnv) ([]byte, func(string, string) bool, string) {
			big := e.batch(1, 500)
			biNearlyFull(e, big, e.batch(1, 10))
			path := filepath.Join(biPartDir, segmentFileName(0, indexSuffix))
			return big, biOn("open", path), path
		}},
		{name: "write-leader-epoch-checkpoint", setup: func(e *biEnv) ([]byte, func(string, string) bool, string) {
			e.fill(1, 1)
			return e.batch(1, 10), biOn("open", epochCheckpoint+".tmp"), filepath.Join(biPartDir, epochCheckpoint)
		}},
	}
	for _, tc := range cases {
		biRun(t, tc.name, func(t *testing.T) { biPermissionAppend(t, tc, nil) })
		if strings.Contains(tc.name, "roll") || strings.Contains(tc.name, "sealed") {
			biRun(t, tc.name+"/then-a-batch-that-fits", func(t *testing.T) { biPermissionAppend(t, tc, small) })
		}
	}
}

func biPermissionAppend(t *testing.T, tc biAppendFault, then func(e *biEnv) []byte) {
	e := newBIEnv(t)
	e.open()
	if _, err := e.l.Append(e.batch(1, 10), AppendOptions{AssignOffsets: true}); err != nil {
		t.Fatal(err)
	}
	buf, match, path := tc.setup(e)
	all := readAll(t, e.l, 1<<20)
	leo, size, files, segs := e.l.LogEndOffset(), e.l.Size(), e.files(), e.l.SegmentCount()
	epoch := int32(0)
	if strings.Contains(tc.name, "epoch") {
		epoch = 7
	}
	retry := bytes.Clone(buf)

	e.fault.set(match)
	_, err := e.l.Append(buf, AppendOptions{AssignOffsets: true, LeaderEpoch: epoch})
	if e.fault.hitCount() == 0 {
		t.Fatalf("the fault on %s was never hit (append: %v)", path, err)
	}
	e.fault.set(nil)
	biWantErr(t, "append with the fault", err, []error{fs.ErrPermission}, biTP.String(), path)
	if got := e.l.Size(); got != size {
		t.Errorf("log size %d after the failed append, was %d", got, size)
	}
	if got := e.l.SegmentCount(); got != segs {
		t.Errorf("%d segments after the failed append, were %d", got, segs)
	}
	if got := e.files(); !maps.Equal(got, files) {
		t.Errorf("files %v after the failed append, were %v", got, files)
	}
	if got := e.l.LatestEpoch(); got != 0 {
		t.Errorf("latest epoch %d after the failed append, want 0", got)
	}
	e.checkServed("after the failed append", all)
	if e.l.LogEndOffset() != leo {
		t.Fatalf("log end offset moved")
	}

	if then != nil {
		all = append(all, e.append(then(e)))
	}
	res, err := e.l.Append(retry, AppendOptions{AssignOffsets: true, LeaderEpoch: epoch})
	if err != nil {
		t.Fatalf("retried append: %v", err)
	}
	for off := res.FirstOffset; off <= res.LastOffset; {
		data, err := e.l.Read(off, ReadOptions{MaxBytes: 1})
		if err != nil || len(data) == 0 {
			t.Fatalf("read of the retried append at %d: %d bytes, %v", off, len(data), err)
		}
		all = append(all, data)
		off = batch.LastOffset(data) + 1
	}
	e.checkServed("after the retry", all)
	if err := e.l.WaitFlushed(e.l.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	e.close()
	e.open()
	e.checkServed("after a clean reopen", all)
	e.close()
}

// TestBadInputPermissionFlush fails the fsync of a segment or of the
// partition directory: Flush, WaitFlushed and OnFlushed report
// fs.ErrPermission with the path, and the flushed offset does not move.
// The log then stays failed (ErrLogFailed) even once the fault is cleared:
// after a failed fsync a successful one proves nothing ("fsyncgate"), so
// appends and flushes fail until the log is reopened, and reopening
// recovers it: what was reported flushed survives a power cut.
func TestBadInputPermissionFlush(t *testing.T) {
	cases := []struct {
		name  string
		match func(op, path string) bool
		path  string
	}{
		{"sync-segment", biOn("sync", logSuffix), biPartDir},
		{"sync-partition-dir", biOn("syncdir", biPartDir), biPartDir},
	}
	for _, tc := range cases {
		biRun(t, tc.name, func(t *testing.T) {
			e := newBIEnv(t)
			e.open()
			all := [][]byte{e.append(e.batch(1, 10))}
			if err := e.l.WaitFlushed(e.l.LogEndOffset()); err != nil {
				t.Fatal(err)
			}
			// Appends go on while the fsync round has not come; once it
			// fails, the log is failed and appends stop.
			release := holdSyncRounds(e.m)
			e.fault.set(tc.match)
			all = append(all, e.fill(2, 1)...) // a roll: the directory needs a sync
			release()
			leo := e.l.LogEndOffset()

			biWantErr(t, "wait flushed", e.l.WaitFlushed(leo), []error{fs.ErrPermission}, tc.path)
			flushed := e.l.FlushedOffset()
			if flushed >= leo {
				t.Fatalf("flushed offset %d with every sync failing since before offset %d", flushed, leo)
			}
			done := make(chan error, 1)
			e.l.OnFlushed(leo, func(err error) { done <- err })
			select {
			case err := <-done:
				biWantErr(t, "on flushed", err, []error{fs.ErrPermission}, tc.path)
			case <-time.After(5 * time.Second):
				t.Fatal("OnFlushed never called back")
			}
			biWantErr(t, "flush", e.l.Flush(), []error{fs.ErrPermission}, biTP.String(), tc.path)
			if got := e.l.FlushedOffset(); got != flushed {
				t.Fatalf("flushed offset %d after failed syncs, was %d", got, flushed)
			}

			e.mem.SetFaults(nil)
			biWantErr(t, "wait flushed after the fault was cleared", e.l.WaitFlushed(leo), []error{ErrLogFailed, fs.ErrPermission})
			if _, err := e.l.Append(e.batch(1, 10), AppendOptions{AssignOffsets: true}); !errors.Is(err, ErrLogFailed) {
				t.Fatalf("append to a failed log: %v, want ErrLogFailed", err)
			}
			if got := e.l.FlushedOffset(); got != flushed {
				t.Fatalf("flushed offset %d on a failed log, was %d", got, flushed)
			}
			// A restart: the log recovers, and then syncs again.
			e.m.Abandon()
			e.m, e.l = nil, nil
			e.open()
			e.checkServed("after reopening", all)
			if err := e.l.WaitFlushed(e.l.LogEndOffset()); err != nil {
				t.Fatalf("flush after reopening: %v", err)
			}
			e.mem.PowerCutDropAll()
			e.m.Abandon()
			e.m, e.l = nil, nil
			e.open()
			e.checkServed("after a power cut", all)
			e.close()
		})
	}
	biRun(t, "close-sync-index", func(t *testing.T) {
		e := newBIEnv(t)
		e.open()
		all := e.fill(2, 1)
		e.fault.set(biOn("sync", indexSuffix))
		err := e.m.Close()
		e.m, e.l = nil, nil
		biWantErr(t, "close", err, []error{fs.ErrPermission}, biTP.String(), indexSuffix)
		e.fault.set(nil)
		e.open()
		if e.m.CleanShutdown() {
			t.Errorf("a close that failed left a clean-shutdown marker")
		}
		e.checkServed("after a failed close", all)
		e.close()
	})
}

// TestBadInputFlushRacingFailedDirSync: the fsync goroutine's round syncs
// the partition directory after a roll and fails, while a Flush runs
// concurrently. The Flush must not report the new segment durable (and
// advance the flushed offset) before the directory holding its name has
// been synced: a power cut would lose data reported flushed.
func TestBadInputFlushRacingFailedDirSync(t *testing.T) {
	biRun(t, "race", func(t *testing.T) {
		e := newBIEnv(t)
		e.open()
		e.append(e.batch(1, 10)) // the epoch checkpoint is written now
		if err := e.l.WaitFlushed(e.l.LogEndOffset()); err != nil {
			t.Fatal(err)
		}
		var armed atomic.Bool
		var once sync.Once
		entered, release := make(chan struct{}), make(chan struct{})
		unblock := sync.OnceFunc(func() { close(release) })
		defer unblock() // before the cleanup's Abandon waits for the fsync goroutine
		e.mem.SetFaults(func(op, path string) error {
			if op != "syncdir" || path != biPartDir || !armed.Load() {
				return nil
			}
			once.Do(func() { close(entered); <-release })
			return fmt.Errorf("injected: %w", fs.ErrPermission)
		})
		armed.Store(true)
		e.fill(2, 0) // the roll asks the fsync goroutine for a round
		select {
		case <-entered:
		case <-time.After(5 * time.Second):
			t.Fatal("the fsync goroutine never synced the partition directory")
		}
		// A Flush that waits for the directory sync in flight is right too:
		// give it a moment, then cut the power with the sync still failing.
		flushDone := make(chan error, 1)
		go func() { flushDone <- e.l.Flush() }()
		var err error
		returned := true
		select {
		case err = <-flushDone:
		case <-time.After(200 * time.Millisecond):
			returned = false
		}
		flushed := e.l.FlushedOffset()
		e.mem.PowerCutDropAll()
		unblock()
		if !returned {
			<-flushDone
		}
		e.m.Abandon()
		e.m, e.l = nil, nil
		armed.Store(false)
		e.open()
		if end := e.l.LogEndOffset(); end < flushed {
			t.Fatalf("a Flush concurrent with a failing directory sync returned %v and set the flushed offset to %d; "+
				"after a power cut the log ends at %d", err, flushed, end)
		}
		e.close()
	})
}
