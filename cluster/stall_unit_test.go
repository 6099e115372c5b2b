package cluster

import (
	"fmt"
	"syscall"
	"testing"
)

// TestWriteStallBackoff checks the retry pacing: the first failure begins
// the stall and is retried after one tick, each later one waits twice as
// long up to stallMaxTicks, and recovery reports the failed attempts.
func TestWriteStallBackoff(t *testing.T) {
	var s writeStall
	if s.tick() {
		t.Fatal("retry due without a stall")
	}
	if !s.failed() {
		t.Fatal("first failure did not begin a stall")
	}
	var waits []int
	for range 8 {
		n := 1
		for !s.tick() {
			n++
		}
		waits = append(waits, n)
		if s.failed() {
			t.Fatal("a later failure began a new stall")
		}
	}
	if got := fmt.Sprint(waits); got != "[1 2 4 8 16 32 32 32]" {
		t.Fatalf("waits %s", got)
	}
	if n := s.recovered(); n != 9 || s.stalled {
		t.Fatalf("recovered: %d attempts, stalled %v", n, s.stalled)
	}
	if got := stallCause(fmt.Errorf("append: write /x: %w", syscall.ENOSPC)); got != "no space left on device" {
		t.Fatalf("cause %q", got)
	}
}
