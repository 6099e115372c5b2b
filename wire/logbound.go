package wire

import (
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Bounds on what one log line may hold: a request can name a hundred
// thousand topics, and a client can send bad input in a tight loop.

// logListMax is how many items of a list a log line shows.
const logListMax = 10

// boundedList returns items as a log value: at most logListMax of them,
// then "... and K more" when there are more.
func boundedList(items []string) slog.Value {
	if len(items) <= logListMax {
		return slog.AnyValue(items)
	}
	out := make([]string, logListMax+1)
	copy(out, items[:logListMax])
	out[logListMax] = fmt.Sprintf("... and %d more", len(items)-logListMax)
	return slog.AnyValue(out)
}

// LogThrottle limits a warning that can repeat without bound (one per bad
// connection, say): the first occurrence is logged, then at most one line
// per interval, which carries how many were suppressed since the last one
// logged. A burst's last suppressed occurrences are reported by the next
// line, whenever that is. Time is an input, so it is tested without a
// clock. The zero value allows one line per defaultLogThrottleInterval.
type LogThrottle struct {
	interval time.Duration

	mu         sync.Mutex
	logged     bool
	lastLogged time.Time
	suppressed int64
}

// defaultLogThrottleInterval is the zero LogThrottle's interval.
const defaultLogThrottleInterval = 10 * time.Second

// NewLogThrottle returns a throttle allowing one line per interval.
func NewLogThrottle(interval time.Duration) *LogThrottle {
	return &LogThrottle{interval: interval}
}

// Note records an occurrence at now and reports whether to log it and, if
// so, how many occurrences were suppressed since the last logged one.
func (t *LogThrottle) Note(now time.Time) (log bool, suppressed int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	interval := t.interval
	if interval <= 0 {
		interval = defaultLogThrottleInterval
	}
	if t.logged && now.Sub(t.lastLogged) < interval {
		t.suppressed++
		return false, 0
	}
	suppressed, t.suppressed = t.suppressed, 0
	t.logged, t.lastLogged = true, now
	return true, suppressed
}
