package logbench

import (
	"math/bits"
	"time"
)

// subBuckets is the number of buckets per power of two: a recorded value is
// known to within 1/subBuckets (about 6%) of itself.
const (
	subBits    = 4
	subBuckets = 1 << subBits
	// numBuckets covers every non-negative int64.
	numBuckets = (64-subBits-1)*subBuckets + 2*subBuckets
)

// histogram counts latencies in log-linear buckets, so a long run keeps a
// fixed amount of memory. It is not safe for concurrent use: each writer
// keeps its own and they are merged at the end.
type histogram struct {
	counts [numBuckets]uint64
	total  uint64
	max    time.Duration
}

// bucketOf returns the bucket of v >= 0: values below 2*subBuckets have one
// bucket each; above, each power of two is split into subBuckets.
func bucketOf(v uint64) int {
	if v < 2*subBuckets {
		return int(v)
	}
	shift := bits.Len64(v) - subBits - 1
	return shift*subBuckets + int(v>>shift)
}

// bucketHigh is the largest value that falls in bucket i.
func bucketHigh(i int) uint64 {
	if i < 2*subBuckets {
		return uint64(i)
	}
	shift := i/subBuckets - 1
	sub := uint64(i - shift*subBuckets)
	return (sub+1)<<shift - 1
}

// add records one latency.
func (h *histogram) add(d time.Duration) {
	h.counts[bucketOf(uint64(max(d, 0)))]++
	h.total++
	h.max = max(h.max, d)
}

// merge adds the counts of o to h.
func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
	h.max = max(h.max, o.max)
}

// quantile returns the latency at or below which a fraction q of the
// recorded ones fall (the upper end of its bucket, capped at the maximum),
// or 0 when nothing was recorded.
func (h *histogram) quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := uint64(q*float64(h.total) + 0.5)
	rank = min(max(rank, 1), h.total)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return time.Duration(min(bucketHigh(i), uint64(h.max)))
		}
	}
	return h.max
}
