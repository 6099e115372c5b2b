package log

import (
	"errors"
	"testing"
)

// TestReopenLogAfterFailedFsync fails one fsync: the log is failed for good
// (ErrLogFailed) and refuses appends; ReopenLog reads it back from disk cut
// to what was durable before the failure, and the reopened log takes
// appends again. A power cut afterwards keeps everything the reopened log
// reported durable.
func TestReopenLogAfterFailedFsync(t *testing.T) {
	e := newBIEnv(t)
	e.open()
	kept := e.fill(2, 1)
	if err := e.l.Flush(); err != nil {
		t.Fatal(err)
	}
	durable := e.l.LogEndOffset()
	e.append(e.batch(2, 40))
	e.fault.set(func(op, _ string) bool { return op == "sync" })
	if err := e.l.Flush(); err == nil {
		t.Fatal("flush with a failing fsync succeeded")
	}
	if !errors.Is(e.l.Err(), ErrLogFailed) {
		t.Fatalf("Err after a failed fsync: %v", e.l.Err())
	}
	if _, err := e.l.Append(e.batch(1, 10), AppendOptions{AssignOffsets: true}); !errors.Is(err, ErrLogFailed) {
		t.Fatalf("append to a failed log: %v", err)
	}
	if _, err := e.m.ReopenLog(e.l); err == nil {
		t.Fatal("reopen while fsync still fails succeeded")
	}
	e.fault.set(nil)
	old := e.l
	l, err := e.m.ReopenLog(old)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if l.Err() != nil || l.LogEndOffset() != durable {
		t.Fatalf("reopened log: err %v, end %d, want end %d", l.Err(), l.LogEndOffset(), durable)
	}
	if again, err := e.m.ReopenLog(old); err != nil || again != l {
		t.Fatalf("second reopen: %v, same log %v", err, again == l)
	}
	e.l = l
	more := e.append(e.batch(2, 40))
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	e.mem.PowerCutDropAll()
	e.m.Abandon()
	e.m, e.l = nil, nil
	e.open()
	got := readAll(t, e.l, 1<<20)
	want := append(kept, more)
	if len(got) != len(want) {
		t.Fatalf("after power cut: %d batches, want %d", len(got), len(want))
	}
}
