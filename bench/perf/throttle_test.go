package perf

import (
	"testing"
	"time"
)

func TestThrottleDelay(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		rate    float64
		sent    int64
		elapsed time.Duration
		want    time.Duration
	}{
		{-1, 1000000, 0, 0},        // unlimited
		{0, 5, 0, 0},               // zero value: unlimited
		{1000, 0, 0, 0},            // the first record is due at once
		{1000, 10, 0, 10 * ms},     // 10 sent at 1000/s: the 11th is due at 10ms
		{1000, 10, 4 * ms, 6 * ms}, // part of the way there
		{1000, 10, 9*ms + 1, 0},    // less than minSleep ahead: keep going
		{1000, 10, 9 * ms, ms},     // exactly minSleep ahead
		{1000, 10, time.Hour, 0},   // behind schedule: no pause
		{0.5, 1, 0, 2 * time.Second},
		{5000, 5000, 500 * ms, 500 * ms},
	}
	for _, c := range cases {
		if got := NewThrottle(c.rate).Delay(c.sent, c.elapsed); got != c.want {
			t.Errorf("rate %v, %d sent after %v: delay %v, want %v", c.rate, c.sent, c.elapsed, got, c.want)
		}
	}
}

// TestThrottlePacesWithoutBusyLoop drives a sender on a simulated clock:
// each send costs a little time, each pause lasts what Delay asked plus
// some timer slack. The sender never runs more than minSleep ahead of the
// schedule, keeps to the rate overall, and pauses at most about once per
// millisecond of schedule whatever the rate.
func TestThrottlePacesWithoutBusyLoop(t *testing.T) {
	for _, rate := range []float64{100, 5000, 1e6} {
		const sends = 20000
		th := NewThrottle(rate)
		var now time.Duration
		pauses := 0
		for sent := int64(0); sent < sends; sent++ {
			if d := th.Delay(sent, now); d > 0 {
				pauses++
				now += d + 50*time.Microsecond // timer slack
			}
			if due := time.Duration(float64(sent) / rate * float64(time.Second)); due-now >= minSleep {
				t.Fatalf("rate %v: record %d sent at %v, %v ahead of schedule", rate, sent, now, due-now)
			}
			now += 200 * time.Nanosecond // the send itself
		}
		schedule := time.Duration(float64(sends-1) / rate * float64(time.Second))
		if now < schedule-minSleep || now > schedule+schedule/10+2*minSleep {
			t.Errorf("rate %v: %d records took %v, schedule %v", rate, sends, now, schedule)
		}
		if maxPauses := int(schedule/minSleep) + 1; pauses > maxPauses {
			t.Errorf("rate %v: %d pauses, more than one per millisecond of schedule (%d)", rate, pauses, maxPauses)
		}
	}
}
