package log

import (
	"testing"
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
