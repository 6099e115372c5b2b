package perf

import (
	"maps"
	"slices"
	"time"
)

// denseMillis is how many one-millisecond buckets a Histogram keeps in a
// slice; rarer, longer latencies are counted in a map.
const denseMillis = 4096

// Histogram counts latencies by whole milliseconds, the resolution Kafka's
// perf tools print, so its percentiles are exact at that resolution while
// memory stays bounded by the number of distinct milliseconds seen. The
// mean and maximum are kept exactly. The zero value is empty and ready; it
// is not safe for concurrent use.
type Histogram struct {
	dense  []int64         // dense[ms] counts latencies in [ms, ms+1) milliseconds
	sparse map[int64]int64 // counts of latencies of denseMillis ms and more
	count  int64
	sum    time.Duration
	max    time.Duration
}

// Record adds one latency; a negative one counts as 0.
func (h *Histogram) Record(d time.Duration) {
	d = max(d, 0)
	ms := int64(d / time.Millisecond)
	if ms < denseMillis {
		if h.dense == nil {
			h.dense = make([]int64, denseMillis)
		}
		h.dense[ms]++
	} else {
		if h.sparse == nil {
			h.sparse = make(map[int64]int64)
		}
		h.sparse[ms]++
	}
	h.count++
	h.sum += d
	h.max = max(h.max, d)
}

// Merge adds the latencies counted by o to h.
func (h *Histogram) Merge(o *Histogram) {
	for ms, c := range o.dense {
		if c > 0 {
			if h.dense == nil {
				h.dense = make([]int64, denseMillis)
			}
			h.dense[ms] += c
		}
	}
	for ms, c := range o.sparse {
		if h.sparse == nil {
			h.sparse = make(map[int64]int64)
		}
		h.sparse[ms] += c
	}
	h.count += o.count
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// Count returns the number of latencies recorded.
func (h *Histogram) Count() int64 { return h.count }

// Mean returns the average latency, 0 when none was recorded.
func (h *Histogram) Mean() time.Duration {
	if h.count == 0 {
		return 0
	}
	return h.sum / time.Duration(h.count)
}

// Max returns the largest latency recorded.
func (h *Histogram) Max() time.Duration { return h.max }

// Percentile returns, in whole milliseconds, the latency Kafka's producer
// perf tool reports for the fraction p (0.5 for the 50th): the one at
// index floor(p*count) of the recorded latencies in ascending order. It
// returns 0 when none was recorded.
func (h *Histogram) Percentile(p float64) int64 {
	if h.count == 0 {
		return 0
	}
	index := min(max(int64(p*float64(h.count)), 0), h.count-1)
	seen := int64(0)
	for ms, c := range h.dense {
		if seen += c; seen > index {
			return int64(ms)
		}
	}
	keys := make([]int64, 0, len(h.sparse))
	for ms := range h.sparse {
		keys = append(keys, ms)
	}
	slices.Sort(keys)
	for _, ms := range keys {
		if seen += h.sparse[ms]; seen > index {
			return ms
		}
	}
	return int64(h.max / time.Millisecond) // unreachable while counts add up
}

// produceStats accumulates the outcomes of a producer run: the whole run's
// latencies and bytes, and the current progress window, as Kafka's tool
// does. Time is an input, each call passing the clock's reading. It is not
// safe for concurrent use.
type produceStats struct {
	start    time.Time
	interval time.Duration // 0: no progress windows

	latency  Histogram
	records  int64
	bytes    int64
	failed   int64
	firstErr error

	window window
}

// window is one progress window's tallies.
type window struct {
	start      time.Time
	records    int64
	bytes      int64
	latencySum time.Duration
	latencyMax time.Duration
}

// newProduceStats returns the stats of a run started at start that reports
// progress every interval (0: never).
func newProduceStats(start time.Time, interval time.Duration) *produceStats {
	return &produceStats{start: start, interval: interval, window: window{start: start}}
}

// acked records one record of size bytes that the broker acknowledged at
// now, latency after it was sent. When the progress window is at least the
// interval old it returns the window's summary and true, and starts a new
// window at now.
func (s *produceStats) acked(latency time.Duration, size int, now time.Time) (WindowSummary, bool) {
	s.latency.Record(latency)
	s.records++
	s.bytes += int64(size)
	w := &s.window
	w.records++
	w.bytes += int64(size)
	w.latencySum += latency
	w.latencyMax = max(w.latencyMax, latency)
	if s.interval <= 0 || now.Sub(w.start) < s.interval {
		return WindowSummary{}, false
	}
	sum := WindowSummary{
		Records:    w.records,
		Bytes:      w.bytes,
		Elapsed:    now.Sub(w.start),
		AvgLatency: w.latencySum / time.Duration(w.records),
		MaxLatency: w.latencyMax,
	}
	*w = window{start: now}
	return sum, true
}

// failedRecord records a record the producer could not deliver.
func (s *produceStats) failedRecord(err error) {
	s.failed++
	if s.firstErr == nil {
		s.firstErr = err
	}
}

// result returns the run's result as of end.
func (s *produceStats) result(end time.Time) ProducerResult {
	latency := s.latency
	latency.dense = slices.Clone(latency.dense)
	latency.sparse = maps.Clone(latency.sparse)
	return ProducerResult{
		Records:    s.records,
		Bytes:      s.bytes,
		Elapsed:    end.Sub(s.start),
		Latency:    &latency,
		Failed:     s.failed,
		FirstError: s.firstErr,
	}
}
