// Package dist summarises a sample of durations the way the measurement
// packages under bench report them: count, min, median, p99 and max, with
// nearest-rank percentiles (so p99 of 20 samples is the largest one; no
// interpolation invents a value that was never observed).
package dist

import (
	"fmt"
	"slices"
	"time"
)

// Summary is the distribution of one sample.
type Summary struct {
	N      int
	Min    time.Duration
	Median time.Duration
	P99    time.Duration
	Max    time.Duration
}

// Of summarises d (which it does not modify). An empty sample gives a zero
// Summary with N == 0.
func Of(d []time.Duration) Summary {
	if len(d) == 0 {
		return Summary{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return Summary{
		N:      len(s),
		Min:    s[0],
		Median: Percentile(s, 50),
		P99:    Percentile(s, 99),
		Max:    s[len(s)-1],
	}
}

// Percentile returns the nearest-rank p-th percentile of sorted, a sample
// sorted in increasing order; it panics on an empty sample.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(float64(len(sorted))*p/100 + 0.9999999)
	rank = max(1, min(len(sorted), rank))
	return sorted[rank-1]
}

// String is "n=20 min=301ms median=352ms p99=420ms max=420ms", durations
// rounded to what the measurement can resolve (0.1 ms below 10 ms, 1 ms
// above).
func (s Summary) String() string {
	if s.N == 0 {
		return "n=0"
	}
	return fmt.Sprintf("n=%d min=%s median=%s p99=%s max=%s",
		s.N, Round(s.Min), Round(s.Median), Round(s.P99), Round(s.Max))
}

// Row is the summary as Markdown table cells: "| n | min | median | p99 | max |".
func (s Summary) Row() string {
	return fmt.Sprintf("| %d | %s | %s | %s | %s |", s.N, Round(s.Min), Round(s.Median), Round(s.P99), Round(s.Max))
}

// Round rounds d to 1 µs below 1 ms, 0.1 ms below 10 ms and 1 ms above.
func Round(d time.Duration) time.Duration {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond)
	case d < 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	default:
		return d.Round(time.Millisecond)
	}
}
