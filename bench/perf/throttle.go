package perf

import (
	"context"
	"time"
)

// minSleep is the shortest pause a Throttle asks for: a sender less than
// this far ahead of its schedule keeps going, and catches up on the
// schedule at its next pause, so pacing costs at most about one timer per
// millisecond whatever the rate.
const minSleep = time.Millisecond

// Throttle paces a sender to a target rate. It keeps no state of its own:
// each decision is made from the number of records sent so far and the
// time since the start, so timer slack and slow sends never accumulate
// into drift. The zero value never delays.
type Throttle struct {
	// perSecond is the target in records per second; <= 0 means unlimited.
	perSecond float64
}

// NewThrottle returns a throttle for perSecond records per second; a
// value <= 0 means no limit.
func NewThrottle(perSecond float64) Throttle { return Throttle{perSecond: perSecond} }

// Delay returns how long a sender that has sent records so far, elapsed
// after its start, must wait before sending the next one: the time until
// sent/perSecond seconds after the start, or 0 when that is less than a
// millisecond away (or already past, or there is no limit).
func (t Throttle) Delay(sent int64, elapsed time.Duration) time.Duration {
	if t.perSecond <= 0 {
		return 0
	}
	due := time.Duration(float64(sent) / t.perSecond * float64(time.Second))
	if wait := due - elapsed; wait >= minSleep {
		return wait
	}
	return 0
}

// sleep waits for d or until ctx is done, returning ctx's error then.
func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
