package cluster

import (
	"sync"
	"time"
)

// gap is a time between two consecutive acknowledgements of one partition
// longer than the ack log's minimum.
type gap struct {
	partition int32
	from, to  time.Time
}

// ackLog keeps, per partition, when a producer's latest record was
// acknowledged and every gap between consecutive acknowledgements longer
// than minGap. It is safe for concurrent use.
type ackLog struct {
	minGap time.Duration

	mu      sync.Mutex
	last    []time.Time
	gaps    []gap
	acked   int64
	failed  int64
	dropped int64 // records the client refused to buffer
}

func newAckLog(partitions int, minGap time.Duration) *ackLog {
	return &ackLog{minGap: minGap, last: make([]time.Time, partitions)}
}

// ack records partition p's acknowledgement at.
func (l *ackLog) ack(p int32, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if int(p) >= len(l.last) || p < 0 {
		return
	}
	if prev := l.last[p]; !prev.IsZero() && at.Sub(prev) > l.minGap {
		l.gaps = append(l.gaps, gap{partition: p, from: prev, to: at})
	}
	if at.After(l.last[p]) {
		l.last[p] = at
	}
	l.acked++
}

// addGap records a gap a child producer measured itself.
func (l *ackLog) addGap(g gap) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gaps = append(l.gaps, g)
}

// setLast records the latest acknowledgement a child producer reported
// for p.
func (l *ackLog) setLast(p int32, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if int(p) < len(l.last) && p >= 0 && at.After(l.last[p]) {
		l.last[p] = at
	}
}

// count adds to the acknowledged, failed and dropped totals.
func (l *ackLog) count(acked, failed, dropped int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acked += acked
	l.failed += failed
	l.dropped += dropped
}

// totals returns the acknowledged, failed and dropped records so far.
func (l *ackLog) totals() (acked, failed, dropped int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.acked, l.failed, l.dropped
}

// ackedAllSince reports whether every partition had an acknowledgement
// after t.
func (l *ackLog) ackedAllSince(t time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, at := range l.last {
		if !at.After(t) {
			return false
		}
	}
	return true
}

// stall is the outcome of one failover for one producer.
type stall struct {
	// longest is the longest gap between consecutive acknowledgements of
	// any partition that overlaps the failover's window; for a stuck
	// partition, the time from its last acknowledgement to the window's
	// end.
	longest time.Duration
	// longestFrom is when the longest gap began.
	longestFrom time.Time
	// stalled counts the partitions with a gap of at least floor.
	stalled int
	// stuck lists partitions with no acknowledgement after the window's
	// start.
	stuck []int32
}

// stallIn summarises the gaps overlapping [from, to]: partitions whose
// gaps are at least floor count as stalled.
func (l *ackLog) stallIn(from, to time.Time, floor time.Duration) stall {
	l.mu.Lock()
	defer l.mu.Unlock()
	var s stall
	longest := map[int32]gap{}
	for _, g := range l.gaps {
		if g.to.After(from) && g.from.Before(to) {
			if cur, ok := longest[g.partition]; !ok || g.to.Sub(g.from) > cur.to.Sub(cur.from) {
				longest[g.partition] = g
			}
		}
	}
	for p, at := range l.last {
		if !at.After(from) {
			s.stuck = append(s.stuck, int32(p))
			if cur, ok := longest[int32(p)]; !ok || to.Sub(at) > cur.to.Sub(cur.from) {
				longest[int32(p)] = gap{partition: int32(p), from: at, to: to}
			}
		}
	}
	for _, g := range longest {
		d := g.to.Sub(g.from)
		if d > s.longest {
			s.longest, s.longestFrom = d, g.from
		}
		if d >= floor {
			s.stalled++
		}
	}
	return s
}
