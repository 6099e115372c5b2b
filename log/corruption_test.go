package log

import (
	"os"
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
