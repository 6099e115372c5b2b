package logbench

import (
	"fmt"
	"time"
)

// SummaryPrefix opens the line Result.String formats.
const SummaryPrefix = "summary"

// Result holds the figures of one run.
type Result struct {
	// Batches, Records and Bytes count what was appended (Bytes: encoded
	// batches, headers included).
	Batches, Records, Bytes int64
	// Elapsed is the time from the writers' start to the last one's end.
	Elapsed time.Duration
	// SyncRounds is the number of group-commit fsync rounds during the run.
	SyncRounds uint64
	// P50, P99 and Max are append latencies: from the call to Append until
	// it returned or, under Fsync, until the append was durable.
	P50, P99, Max time.Duration
}

// summarize merges the writers' figures.
func summarize(stats []writerStats, elapsed time.Duration) Result {
	var h histogram
	r := Result{Elapsed: elapsed}
	for i := range stats {
		s := &stats[i]
		r.Batches += s.batches
		r.Records += s.records
		r.Bytes += s.bytes
		h.merge(&s.latency)
	}
	r.P50, r.P99, r.Max = h.quantile(0.50), h.quantile(0.99), h.max
	return r
}

// MiBPerSec is the append throughput in MiB (2^20 bytes) per second.
func (r Result) MiBPerSec() float64 {
	return float64(r.Bytes) / (1 << 20) / seconds(r.Elapsed)
}

// BatchesPerSec is the number of appends per second.
func (r Result) BatchesPerSec() float64 {
	return float64(r.Batches) / seconds(r.Elapsed)
}

// AppendsPerRound is the mean number of appends one fsync round made
// durable: the group-commit factor. It is 0 when there was no round.
func (r Result) AppendsPerRound() float64 {
	if r.SyncRounds == 0 {
		return 0
	}
	return float64(r.Batches) / float64(r.SyncRounds)
}

// seconds is d in seconds, never 0, so rates stay finite.
func seconds(d time.Duration) float64 {
	return max(d.Seconds(), 1e-9)
}

// String formats the one summary line `weir bench log` prints last:
// SummaryPrefix and then space-separated key=value pairs.
func (r Result) String() string {
	return fmt.Sprintf("%s batches=%d records=%d bytes=%d seconds=%.6f MiB/s=%.2f batches/s=%.1f fsync_rounds=%d appends/round=%.2f p50_ms=%.4f p99_ms=%.4f max_ms=%.4f",
		SummaryPrefix, r.Batches, r.Records, r.Bytes, r.Elapsed.Seconds(), r.MiBPerSec(), r.BatchesPerSec(),
		r.SyncRounds, r.AppendsPerRound(), ms(r.P50), ms(r.P99), ms(r.Max))
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
