package wire

import "time"

// logEvery keeps a repeated log line to one per interval: allow says
// whether to log now and how many occurrences since the last line were
// not logged. It does no I/O and reads no clock; its caller serializes
// it.
type logEvery struct {
	interval time.Duration
	last     time.Time
	skipped  uint64
}

// allow records one occurrence at now.
func (l *logEvery) allow(now time.Time) (bool, uint64) {
	if !l.last.IsZero() && now.Sub(l.last) < l.interval {
		l.skipped++
		return false, 0
	}
	skipped := l.skipped
	l.last, l.skipped = now, 0
	return true, skipped
}
