package log

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/weirmq/weir/log/batch"
)

// modelBatch is what the test expects one stored batch to be.
type modelBatch struct {
	base, last int64
	epoch      int32
	ts         []int64 // record timestamps
	bytes      int
}

// model is the expected state of a log.
type model struct {
	batches  []modelBatch
	hist     []EpochEntry // epoch starts, including data since deleted
	logStart int64
	leo      int64
}

func (m *model) epochs() []EpochEntry {
	out := append([]EpochEntry(nil), m.hist...)
	// The log start offset cuts the first entry, as Kafka's cache does.
	for len(out) > 1 && out[1].StartOffset <= m.logStart {
		out = out[1:]
	}
	if len(out) > 0 && out[0].StartOffset < m.logStart {
		out[0].StartOffset = m.logStart
	}
	return out
}

// offsetForTimestamp is the brute-force ListOffsets answer.
func (m *model) offsetForTimestamp(ts int64) (int64, bool) {
	for _, b := range m.batches {
		for i, t := range b.ts {
			off := b.base + int64(i)
			if off >= m.logStart && t >= ts {
				return off, true
			}
		}
	}
	return -1, false
}

// logHarness appends random batches to a log and its model.
type logHarness struct {
	t     *testing.T
	rng   *rand.Rand
	fsys  FS
	dir   string
	clock *testClock
	cfg   Config
	m     *Manager
	l     *Log
	mod   model
	epoch int32
	tp    TopicPartition
}

func newLogHarness(t *testing.T, fsys FS, seed int64) *logHarness {
	h := &logHarness{t: t, rng: rand.New(rand.NewSource(seed)), fsys: fsys, dir: "/data", clock: &testClock{ms: 1_700_000_000_000},
		cfg: smallConfig(), tp: TopicPartition{"orders", 3}}
	if _, ok := fsys.(OSFS); ok {
		h.dir = t.TempDir()
	}
	h.open()
	return h
}

func (h *logHarness) open() {
	h.t.Helper()
	h.m = openTestManager(h.t, h.fsys, h.dir, h.clock)
	l, err := h.m.OpenLog(h.tp, h.cfg, [16]byte{9, 9})
	if err != nil {
		h.t.Fatalf("open log: %v", err)
	}
	h.l = l
}

// reopen closes cleanly, or abandons the manager (a crash where the page
// cache survives), and opens again.
func (h *logHarness) reopen(clean bool) {
	h.t.Helper()
	if clean {
		if err := h.m.Close(); err != nil {
			h.t.Fatalf("close: %v", err)
		}
	} else {
		h.m.Abandon()
	}
	h.open()
	if h.m.CleanShutdown() != clean {
		h.t.Fatalf("clean shutdown %v, want %v", h.m.CleanShutdown(), clean)
	}
}

// appendRandom appends n random batches, sometimes several in one call.
func (h *logHarness) appendRandom(n int) {
	h.t.Helper()
	for n > 0 {
		k := min(n, 1+h.rng.Intn(3))
		var buf []byte
		var planned []modelBatch
		next := h.mod.leo
		for range k {
			recs := 1 + h.rng.Intn(8)
			h.clock.ms += int64(h.rng.Intn(20))
			ts := h.clock.ms
			if h.rng.Intn(10) == 0 {
				ts -= 500 // out-of-order timestamps happen
			}
			b := makeBatch(h.t, int(next), recs, ts, h.rng.Intn(300))
			mb := modelBatch{base: next, last: next + int64(recs) - 1, epoch: h.epoch, bytes: len(b)}
			for i := range recs {
				mb.ts = append(mb.ts, ts+int64(i))
			}
			planned = append(planned, mb)
			buf = append(buf, b...)
			next += int64(recs)
		}
		res, err := h.l.Append(buf, AppendOptions{AssignOffsets: true, LeaderEpoch: h.epoch})
		if err != nil {
			h.t.Fatalf("append: %v", err)
		}
		if res.FirstOffset != h.mod.leo || res.LastOffset != next-1 {
			h.t.Fatalf("append offsets [%d, %d], want [%d, %d]", res.FirstOffset, res.LastOffset, h.mod.leo, next-1)
		}
		h.mod.batches = append(h.mod.batches, planned...)
		if n := len(h.mod.hist); n == 0 || h.epoch > h.mod.hist[n-1].Epoch {
			h.mod.hist = append(h.mod.hist, EpochEntry{h.epoch, planned[0].base})
		}
		h.mod.leo = next
		n -= k
		if h.rng.Intn(15) == 0 {
			h.epoch += int32(1 + h.rng.Intn(2))
		}
	}
}

// check compares every observable of the log with the model.
func (h *logHarness) check(what string) {
	h.t.Helper()
	l, mod := h.l, &h.mod
	if got := l.LogEndOffset(); got != mod.leo {
		h.t.Fatalf("%s: log end offset %d, want %d", what, got, mod.leo)
	}
	if got := l.LogStartOffset(); got != mod.logStart {
		h.t.Fatalf("%s: log start offset %d, want %d", what, got, mod.logStart)
	}
	// Every offset reads back the batch that holds it, whole and valid.
	for _, mb := range mod.batches {
		for off := max(mb.base, mod.logStart); off <= mb.last; off++ {
			data, err := l.Read(off, ReadOptions{MaxBytes: 1 + h.rng.Intn(3000)})
			if err != nil {
				h.t.Fatalf("%s: read %d: %v", what, off, err)
			}
			bs, err := batch.Split(data)
			if err != nil || len(bs) == 0 {
				h.t.Fatalf("%s: read %d: %d bytes, split: %v", what, off, len(data), err)
			}
			b := bs[0]
			if _, err := batch.Validate(b); err != nil {
				h.t.Fatalf("%s: read %d: %v", what, off, err)
			}
			if batch.BaseOffset(b) != mb.base || batch.LastOffset(b) != mb.last || batch.PartitionLeaderEpoch(b) != mb.epoch {
				h.t.Fatalf("%s: read %d: batch [%d, %d] epoch %d, want [%d, %d] epoch %d", what, off,
					batch.BaseOffset(b), batch.LastOffset(b), batch.PartitionLeaderEpoch(b), mb.base, mb.last, mb.epoch)
			}
			recs, err := batch.Records(b, 1<<20)
			if err != nil || string(recs[0].Key) != fmt.Sprintf("k%d", mb.base) {
				h.t.Fatalf("%s: read %d: records %v, first key %q", what, off, err, recs[0].Key)
			}
		}
	}
	if got := readAll(h.t, l, 1+h.rng.Intn(8000)); len(got) != countFrom(mod) {
		h.t.Fatalf("%s: sequential read got %d batches, want %d", what, len(got), countFrom(mod))
	}
	if data, err := l.Read(mod.leo, ReadOptions{MaxBytes: 100}); err != nil || len(data) != 0 {
		h.t.Fatalf("%s: read at log end: %d bytes, %v", what, len(data), err)
	}
	if _, err := l.Read(mod.leo+1, ReadOptions{MaxBytes: 100}); !errors.Is(err, ErrOffsetOutOfRange) {
		h.t.Fatalf("%s: read past log end: %v", what, err)
	}
	if mod.logStart > 0 {
		if _, err := l.Read(mod.logStart-1, ReadOptions{MaxBytes: 100}); !errors.Is(err, ErrOffsetOutOfRange) {
			h.t.Fatalf("%s: read below log start: %v", what, err)
		}
	}
	h.checkTimestamps(what)
	h.checkEpochs(what)
}

func countFrom(mod *model) int {
	n := 0
	for _, b := range mod.batches {
		if b.last >= mod.logStart {
			n++
		}
	}
	return n
}

func (h *logHarness) checkTimestamps(what string) {
	h.t.Helper()
	l, mod := h.l, &h.mod
	if off, _, ok, err := l.OffsetForTimestamp(EarliestTimestamp); err != nil || !ok || off != mod.logStart {
		h.t.Fatalf("%s: earliest = %d %v %v", what, off, ok, err)
	}
	if off, _, ok, err := l.OffsetForTimestamp(LatestTimestamp); err != nil || !ok || off != mod.leo {
		h.t.Fatalf("%s: latest = %d %v %v", what, off, ok, err)
	}
	lo, hi := h.clock.ms-3000, h.clock.ms+50
	for range 60 {
		ts := lo + h.rng.Int63n(hi-lo)
		want, wantOK := mod.offsetForTimestamp(ts)
		got, _, ok, err := l.OffsetForTimestamp(ts)
		if err != nil || ok != wantOK || got != want {
			for _, b := range mod.batches {
				if b.last >= want-10 && b.base <= got+10 {
					h.t.Logf("model batch [%d, %d] ts %v", b.base, b.last, b.ts)
				}
			}
			for _, seg := range l.segs {
				if seg.base <= want && l.nextOffsetAfter(seg) > want-20 {
					h.t.Logf("segment %d maxTs %d time index:", seg.base, seg.maxTs)
					for i := 0; i < seg.timeIndex.entries(); i++ {
						a, b := seg.timeIndex.timeAt(i)
						h.t.Logf("  time %d offset %d", a, b)
					}
				}
			}
			h.t.Fatalf("%s: offset for timestamp %d = %d %v %v, want %d %v", what, ts, got, ok, err, want, wantOK)
		}
	}
	// Max timestamp: the first record holding the largest timestamp.
	var maxTs, maxOff int64 = -1, -1
	for _, b := range mod.batches {
		for i, t := range b.ts {
			if t > maxTs {
				maxTs, maxOff = t, b.base+int64(i)
			}
		}
	}
	if got, ts, ok, err := l.OffsetForTimestamp(MaxTimestamp); err != nil || (maxOff >= mod.logStart && (!ok || got != maxOff || ts != maxTs)) {
		h.t.Fatalf("%s: max timestamp = %d@%d %v %v, want %d@%d", what, got, ts, ok, err, maxOff, maxTs)
	}
}

func (h *logHarness) checkEpochs(what string) {
	h.t.Helper()
	want := h.mod.epochs()
	got := h.l.Epochs()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		h.t.Fatalf("%s: epochs %v, want %v", what, got, want)
	}
	if len(want) == 0 {
		return
	}
	last := want[len(want)-1].Epoch
	for e := int32(-1); e <= last+2; e++ {
		wantE, wantOff := int32(-1), int64(-1)
		switch {
		case e < 0:
		case e == last:
			wantE, wantOff = e, h.mod.leo
		case e > last:
		default:
			// The start of the first epoch above e, with the largest epoch <= e.
			for i, en := range want {
				if en.Epoch > e {
					wantOff = en.StartOffset
					wantE = e
					if i > 0 {
						wantE = want[i-1].Epoch
					}
					break
				}
			}
		}
		gotE, gotOff := h.l.EndOffsetForEpoch(e)
		if gotE != wantE || gotOff != wantOff {
			h.t.Fatalf("%s: end offset for epoch %d = (%d, %d), want (%d, %d); epochs %v", what, e, gotE, gotOff, wantE, wantOff, want)
		}
	}
}

// truncate cuts the log and the model at offset.
func (h *logHarness) truncate(offset int64) {
	h.t.Helper()
	end, err := h.l.TruncateTo(offset)
	if err != nil {
		h.t.Fatalf("truncate to %d: %v", offset, err)
	}
	keep := h.mod.batches[:0]
	wantEnd := h.mod.leo
	if offset < h.mod.leo {
		wantEnd = offset
		for _, b := range h.mod.batches {
			if b.last < offset {
				keep = append(keep, b)
			} else if b.base < offset {
				wantEnd = b.base // a straddling batch goes whole
			}
		}
		h.mod.batches = keep
		h.mod.leo = wantEnd
		for n := len(h.mod.hist); n > 0 && h.mod.hist[n-1].StartOffset >= wantEnd; n-- {
			h.mod.hist = h.mod.hist[:n-1]
		}
	}
	if end != wantEnd {
		h.t.Fatalf("truncate to %d: end %d, want %d", offset, end, wantEnd)
	}
}

func (h *logHarness) deleteRecords(offset int64) {
	h.t.Helper()
	start, err := h.l.DeleteRecordsBefore(offset)
	if err != nil {
		h.t.Fatalf("delete records before %d: %v", offset, err)
	}
	h.mod.logStart = max(h.mod.logStart, offset)
	if start != h.mod.logStart {
		h.t.Fatalf("delete records before %d: start %d, want %d", offset, start, h.mod.logStart)
	}
	h.dropBelowStart()
}

func (h *logHarness) dropBelowStart() {
	keep := h.mod.batches[:0]
	for _, b := range h.mod.batches {
		if b.last >= h.mod.logStart {
			keep = append(keep, b)
		}
	}
	h.mod.batches = keep
}

func TestLogAppendReadReopen(t *testing.T) {
	for _, fsName := range []string{"os", "mem"} {
		t.Run(fsName, func(t *testing.T) {
			var fsys FS = OSFS{}
			if fsName == "mem" {
				fsys = NewMemFS()
			}
			h := newLogHarness(t, fsys, 1)
			h.check("empty")
			h.appendRandom(300)
			if h.l.SegmentCount() < 5 {
				t.Fatalf("only %d segments: the test wants rolls", h.l.SegmentCount())
			}
			h.check("appended")
			h.reopen(true)
			h.check("after clean reopen")
			h.appendRandom(100)
			h.check("appended after clean reopen")
			h.reopen(false)
			h.check("after crash reopen")
			h.appendRandom(50)
			h.reopen(false)
			h.reopen(true)
			h.check("after crash then clean reopen")
		})
	}
}

func TestLogTruncate(t *testing.T) {
	h := newLogHarness(t, OSFS{}, 2)
	for round := range 12 {
		h.appendRandom(80)
		// Cut at a random offset: mid-batch, on a boundary, or in an older segment.
		cut := h.mod.leo - 1 - h.rng.Int63n(min(h.mod.leo, 150))
		h.truncate(cut)
		h.check(fmt.Sprintf("round %d: truncated to %d", round, cut))
		if h.rng.Intn(2) == 0 {
			h.reopen(h.rng.Intn(2) == 0)
			h.check(fmt.Sprintf("round %d: reopened", round))
		}
		h.epoch++ // a new leader appends after the follower truncated
	}
	h.truncate(h.mod.leo + 10) // past the end: nothing changes
	h.check("truncate past end")
	h.truncate(0)
	h.check("truncated to zero")
	h.appendRandom(20)
	h.check("appended after full truncation")
}

func TestLogDeleteRecords(t *testing.T) {
	h := newLogHarness(t, OSFS{}, 3)
	h.appendRandom(200)
	segs := h.l.SegmentCount()
	for round := range 6 {
		target := h.mod.logStart + h.rng.Int63n(h.mod.leo-h.mod.logStart)/3
		h.deleteRecords(target)
		h.check(fmt.Sprintf("round %d: deleted before %d", round, target))
		h.reopen(round%2 == 0)
		h.check(fmt.Sprintf("round %d: reopened", round))
		h.appendRandom(30)
	}
	if h.l.SegmentCount() >= segs+6 {
		t.Fatalf("segments below the log start were not deleted: %d, started with %d", h.l.SegmentCount(), segs)
	}
	h.deleteRecords(h.mod.logStart - 1) // never moves back
	h.deleteRecords(h.mod.leo)          // everything
	h.check("deleted everything")
	if _, err := h.l.DeleteRecordsBefore(h.mod.leo + 1); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("delete past end: %v", err)
	}
	h.appendRandom(10)
	h.reopen(false)
	h.check("appended after deleting everything")
}

func TestLogRetention(t *testing.T) {
	t.Run("time", func(t *testing.T) {
		h := newLogHarness(t, OSFS{}, 4)
		h.cfg.RetentionMs = 10_000
		if err := h.l.SetConfig(h.cfg); err != nil {
			t.Fatal(err)
		}
		h.appendRandom(150)
		old := h.mod.leo
		h.clock.ms += 60_000
		h.appendRandom(150)
		if freed := h.m.RunRetention(); freed == 0 {
			t.Fatal("retention.ms deleted nothing")
		}
		// Whole segments only: the start is a segment base at or below the
		// first young record, and every old segment is gone.
		start := h.l.LogStartOffset()
		if start > old || start < old-200 {
			t.Fatalf("log start %d after retention, old data ended at %d", start, old)
		}
		h.mod.logStart = start
		h.dropBelowStart()
		h.check("after time retention")
		h.reopen(false)
		h.check("after time retention and crash")
	})
	t.Run("bytes", func(t *testing.T) {
		h := newLogHarness(t, OSFS{}, 5)
		h.cfg.RetentionBytes = 3 * h.cfg.SegmentBytes
		if err := h.l.SetConfig(h.cfg); err != nil {
			t.Fatal(err)
		}
		h.appendRandom(400)
		h.m.RunRetention()
		if size := h.l.Size(); size > h.cfg.RetentionBytes+h.cfg.SegmentBytes || size < h.cfg.RetentionBytes-h.cfg.SegmentBytes {
			t.Fatalf("size %d after retention.bytes %d", size, h.cfg.RetentionBytes)
		}
		h.mod.logStart = h.l.LogStartOffset()
		h.dropBelowStart()
		h.check("after size retention")
		h.reopen(true)
		h.check("after size retention and reopen")
	})
	t.Run("compact only keeps everything", func(t *testing.T) {
		h := newLogHarness(t, OSFS{}, 6)
		h.cfg.RetentionMs, h.cfg.RetentionBytes = 1, 1
		h.cfg.CleanupDelete, h.cfg.CleanupCompact = false, true
		if err := h.l.SetConfig(h.cfg); err != nil {
			t.Fatal(err)
		}
		h.appendRandom(100)
		h.clock.ms += 1_000_000
		if freed := h.m.RunRetention(); freed != 0 {
			t.Fatalf("retention deleted %d bytes of a compact-only log", freed)
		}
		h.check("compact-only retention")
	})
	t.Run("never the active segment", func(t *testing.T) {
		h := newLogHarness(t, OSFS{}, 7)
		h.cfg.RetentionMs = 1
		if err := h.l.SetConfig(h.cfg); err != nil {
			t.Fatal(err)
		}
		h.appendRandom(100)
		h.clock.ms += 1_000_000
		h.m.RunRetention()
		if h.l.SegmentCount() != 1 || h.l.LogEndOffset() != h.mod.leo {
			t.Fatalf("%d segments, end %d after expiring everything", h.l.SegmentCount(), h.l.LogEndOffset())
		}
		h.mod.logStart = h.l.LogStartOffset()
		h.dropBelowStart()
		h.check("expired all but the active segment")
	})
}
