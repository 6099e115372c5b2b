package log

import (
	"errors"
	"testing"

	"github.com/weirmq/weir/log/batch"
)

// A follower behind its leader's log start empties its log and restarts
// it there, forgetting its leader epochs; the new start survives a crash
// and a clean restart, and replicated batches follow from it.
func TestTruncateFullyAndStartAt(t *testing.T) {
	for _, clean := range []bool{true, false} {
		h := newLogHarness(t, NewMemFS(), 1)
		for i := range 20 {
			b := makeBatch(t, i*3, 3, 1000, 50)
			if _, err := h.l.Append(b, AppendOptions{AssignOffsets: true, LeaderEpoch: int32(1 + i/10)}); err != nil {
				t.Fatal(err)
			}
		}
		if h.l.SegmentCount() < 2 {
			t.Fatalf("%d segments, want several", h.l.SegmentCount())
		}
		if err := h.l.TruncateFullyAndStartAt(100); err != nil {
			t.Fatal(err)
		}
		check := func(when string, end int64) {
			t.Helper()
			if h.l.LogStartOffset() != 100 || h.l.LogEndOffset() != end || h.l.FlushedOffset() > end {
				t.Fatalf("%s: start %d end %d flushed %d", when, h.l.LogStartOffset(), h.l.LogEndOffset(), h.l.FlushedOffset())
			}
		}
		check("after the cut", 100)
		if h.l.FlushedOffset() != 100 || len(h.l.Epochs()) != 0 || h.l.SegmentCount() != 1 {
			t.Fatalf("flushed %d epochs %v segments %d", h.l.FlushedOffset(), h.l.Epochs(), h.l.SegmentCount())
		}
		if _, err := h.l.Read(99, ReadOptions{MaxBytes: 1 << 20}); !errors.Is(err, ErrOffsetOutOfRange) {
			t.Fatalf("read below the new start: %v", err)
		}
		// A follower's batch of epoch 2 (below the epochs it forgot) at 100.
		b := makeBatch(t, 100, 4, 2000, 10)
		batch.SetBaseOffset(b, 100)
		batch.SetPartitionLeaderEpoch(b, 2)
		if _, err := h.l.Append(b, AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		if e := h.l.Epochs(); len(e) != 1 || e[0] != (EpochEntry{Epoch: 2, StartOffset: 100}) {
			t.Fatalf("epochs %v", e)
		}
		if err := h.l.Flush(); err != nil {
			t.Fatal(err)
		}
		h.reopen(clean)
		check("after reopening", 104)
		if got := readAll(t, h.l, 1<<20); len(got) != 1 || batch.BaseOffset(got[0]) != 100 {
			t.Fatalf("%d batches after reopening", len(got))
		}
		if err := h.m.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var l Log
	l.closed = true
	if err := l.TruncateFullyAndStartAt(5); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed log: %v", err)
	}
}
