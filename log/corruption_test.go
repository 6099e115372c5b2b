package log

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/weirmq/weir/log/batch"
)

// A segment below the recovery point is not rescanned on open (as in
// Kafka), so damage to it after a clean shutdown must be caught when it is
// read: Read returns an error, never a batch that fails its CRC.
func TestCorruptionOldSegmentNeverServed(t *testing.T) {
	mem := NewMemFS()
	clock := &testClock{ms: 1_700_000_000_000}
	m, l := plOpen(t, mem, clock)
	for i := 0; l.SegmentCount() < 3; i++ {
		if _, err := l.Append(makeBatch(t, i, 1, clock.ms, 100), AppendOptions{AssignOffsets: true}); err != nil {
			t.Fatal(err)
		}
	}
	path := l.segs[0].logPath
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := mem.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := []byte{0}
	if _, err := f.ReadAt(b, 100); err != nil { // inside the first batch's records
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, 100); err != nil {
		t.Fatal(err)
	}
	f.Close()

	m, l = plOpen(t, mem, clock)
	defer m.Close()
	data, err := l.Read(0, ReadOptions{MaxBytes: 1})
	if err != nil {
		t.Logf("read at 0: %v", err)
		return
	}
	bs, _ := batch.Split(data)
	for _, b := range bs {
		if _, err := batch.Validate(b); err != nil {
			t.Fatalf("read at 0 served the batch [%d, %d] of %s, which fails validation: %v", batch.BaseOffset(b), batch.LastOffset(b), path, err)
		}
	}
}

// corrPatchMem applies fn to the bytes of a MemFS file.
func corrPatchMem(t *testing.T, mem *MemFS, path string, fn func([]byte) []byte) {
	t.Helper()
	data, err := readFile(mem, path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := mem.OpenFile(path, os.O_RDWR|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(fn(data), 0); err != nil {
		t.Fatal(err)
	}
}

// After a clean shutdown the open trusts the indexes but must not take the
// log end offset from a batch header that fails its CRC: here a flipped bit
// in the last batch's last offset delta. Else the next append lands past a
// hole, and the next crash recovery, which does check, drops it although it
// was fsynced.
func TestCorruptionCleanOpenChecksTail(t *testing.T) {
	mem := NewMemFS()
	clock := &testClock{ms: 1_700_000_000_000}
	m, l := plOpen(t, mem, clock)
	var last int64
	for i := range 3 {
		b := makeBatch(t, 2*i, 2, clock.ms, 10)
		last = l.active().size
		if _, err := l.Append(b, AppendOptions{AssignOffsets: true}); err != nil {
			t.Fatal(err)
		}
	}
	path := l.active().logPath
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	corrPatchMem(t, mem, path, func(d []byte) []byte { d[last+23] ^= 0x10; return d }) // last offset delta

	m, l = plOpen(t, mem, clock)
	end := l.LogEndOffset()
	res, err := l.Append(makeBatch(t, 100, 1, clock.ms, 10), AppendOptions{AssignOffsets: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WaitFlushed(res.LastOffset + 1); err != nil {
		t.Fatal(err)
	}
	mem.Crash()
	m.Abandon()
	m, l = plOpen(t, mem, clock)
	defer m.Close()
	if end > 6 || l.LogEndOffset() <= res.LastOffset {
		t.Fatalf("a clean open of a log of 6 records whose last batch fails its CRC set the log end offset to %d; "+
			"an append there was fsynced at %d, yet after a crash the log ends at %d", end, res.FirstOffset, l.LogEndOffset())
	}
}

// A leader-epoch-checkpoint that cannot be parsed is ignored on open; the
// cache must then be rebuilt from the batches, also after a clean shutdown
// (when nothing is rescanned), or OffsetForLeaderEpoch answers wrongly.
func TestCorruptionEpochCheckpointGarbage(t *testing.T) {
	mem := NewMemFS()
	clock := &testClock{ms: 1_700_000_000_000}
	m, l := plOpen(t, mem, clock)
	if _, err := l.Append(makeBatch(t, 0, 1, clock.ms, 10), AppendOptions{AssignOffsets: true, LeaderEpoch: 3}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(l.Dir(), epochCheckpoint)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	corrPatchMem(t, mem, path, func([]byte) []byte { return []byte("garbage\n") })

	m, l = plOpen(t, mem, clock)
	defer m.Close()
	want := fmt.Sprint([]EpochEntry{{Epoch: 3, StartOffset: 0}})
	e, off := l.EndOffsetForEpoch(3)
	if got := fmt.Sprint(l.Epochs()); got != want || e != 3 || off != 1 {
		t.Fatalf("after a clean shutdown and a garbled %s: epochs %s, EndOffsetForEpoch(3) = (%d, %d); want %s and (3, 1)", path, got, e, off, want)
	}
}
