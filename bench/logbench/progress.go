package logbench

import (
	"fmt"
	"sync/atomic"
	"time"
)

// ProgressPrefix opens the progress lines a run writes every
// Config.ReportInterval.
const ProgressPrefix = "progress"

// Progress is one progress line: the appends since the previous line (the
// window) and the run's totals so far.
type Progress struct {
	// Elapsed is the time since the writers started.
	Elapsed time.Duration
	// Window is the time since the previous line.
	Window time.Duration
	// Batches, Records and Bytes count the window's appends.
	Batches, Records, Bytes int64
	// TotalBatches counts the appends since the start.
	TotalBatches int64
	// Max is the window's longest append latency.
	Max time.Duration
}

// AppendTo appends the line's text, without a line ending: ProgressPrefix
// and then space-separated key=value pairs in the manner of the summary,
// e.g. "progress seconds=5.0 batches=1200 records=19200 bytes=20275200
// MiB/s=3.87 batches/s=240.0 max_ms=12.3456 total_batches=1200".
func (p Progress) AppendTo(b []byte) []byte {
	secs := seconds(p.Window)
	return fmt.Appendf(b, "%s seconds=%.1f batches=%d records=%d bytes=%d MiB/s=%.2f batches/s=%.1f max_ms=%.4f total_batches=%d",
		ProgressPrefix, p.Elapsed.Seconds(), p.Batches, p.Records, p.Bytes,
		float64(p.Bytes)/(1<<20)/secs, float64(p.Batches)/secs, ms(p.Max), p.TotalBatches)
}

// liveCounts is what the writers appended so far, updated by each writer
// after each append and read by the progress reporter.
type liveCounts struct {
	batches, records, bytes atomic.Int64
	// maxNanos is the longest append latency since the last progress line.
	maxNanos atomic.Int64

	// last holds the totals and time of the previous line; only the
	// reporter's goroutine uses it.
	last struct {
		elapsed                 time.Duration
		batches, records, bytes int64
	}
}

// add counts one append of records records and bytes bytes that took d.
func (c *liveCounts) add(records, bytes int64, d time.Duration) {
	c.batches.Add(1)
	c.records.Add(records)
	c.bytes.Add(bytes)
	for cur := c.maxNanos.Load(); int64(d) > cur; cur = c.maxNanos.Load() {
		if c.maxNanos.CompareAndSwap(cur, int64(d)) {
			break
		}
	}
}

// progress returns the line at elapsed since the start and begins the next
// window.
func (c *liveCounts) progress(elapsed time.Duration) Progress {
	batches, records, bytes := c.batches.Load(), c.records.Load(), c.bytes.Load()
	p := Progress{
		Elapsed:      elapsed,
		Window:       elapsed - c.last.elapsed,
		Batches:      batches - c.last.batches,
		Records:      records - c.last.records,
		Bytes:        bytes - c.last.bytes,
		TotalBatches: batches,
		Max:          time.Duration(c.maxNanos.Swap(0)),
	}
	c.last.elapsed, c.last.batches, c.last.records, c.last.bytes = elapsed, batches, records, bytes
	return p
}
