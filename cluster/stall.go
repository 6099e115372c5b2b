package cluster

import (
	"errors"
	"syscall"
)

// Backoff of the metadata actor's retries of a failed metadata write, in
// node ticks: the first retry after stallFirstTicks, each later one after
// twice the wait before, at most stallMaxTicks.
const (
	stallFirstTicks = 1
	stallMaxTicks   = 32
)

// writeStall is the metadata actor's state while its quorum cannot write:
// when to retry, and how many attempts failed. It does no I/O and reads no
// clock: waits are counted in ticks.
type writeStall struct {
	stalled  bool
	attempts int // failed attempts since the stall began
	wait     int // ticks between the last failure and the next retry
	left     int // ticks until the next retry
}

// failed records a failed attempt and reports whether it began a stall.
func (s *writeStall) failed() (began bool) {
	began = !s.stalled
	s.stalled = true
	s.attempts++
	switch {
	case began:
		s.wait = stallFirstTicks
	default:
		s.wait = min(2*s.wait, stallMaxTicks)
	}
	s.left = s.wait
	return began
}

// tick counts one tick and reports whether a retry is due.
func (s *writeStall) tick() bool {
	if !s.stalled {
		return false
	}
	s.left--
	return s.left <= 0
}

// recovered ends a stall and returns how many attempts had failed (0 when
// there was none).
func (s *writeStall) recovered() int {
	n := s.attempts
	*s = writeStall{}
	return n
}

// stallCause names an I/O error without the paths and offsets around it,
// for clients and the node's status.
func stallCause(err error) string {
	if errno, ok := errors.AsType[syscall.Errno](err); ok {
		return errno.Error()
	}
	return "I/O error"
}
