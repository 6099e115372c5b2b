package partition

import "sync"

// StatusWatch is one waiter's wake-up signal shared by many partitions: a
// replica fetch long-polling a thousand partitions registers one
// StatusWatch with each (Client.AddStatusWatch) instead of parking a
// WatchHighWatermark in every actor, so that a poll costs no message to,
// and no tick of, the partitions it waits on. After each status change
// that a watch condition may depend on (high watermark, log start, log
// end or flushed offset, leader epoch, role) the actor signals every
// StatusWatch registered with it; the waiter then reads the statuses it
// cares about (Client.Status) and decides for itself. Signals coalesce:
// C holds at most one.
type StatusWatch struct {
	ch chan struct{}
}

// NewStatusWatch returns a watch with no signal pending.
func NewStatusWatch() *StatusWatch { return &StatusWatch{ch: make(chan struct{}, 1)} }

// C receives a value after a status change of any partition the watch is
// registered with.
func (w *StatusWatch) C() <-chan struct{} { return w.ch }

// signal records a change without blocking.
func (w *StatusWatch) signal() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// statusWatchers are the StatusWatches registered with one partition.
type statusWatchers struct {
	mu sync.Mutex
	m  map[*StatusWatch]struct{}
}

func (s *statusWatchers) add(w *StatusWatch) {
	s.mu.Lock()
	if s.m == nil {
		s.m = map[*StatusWatch]struct{}{}
	}
	s.m[w] = struct{}{}
	s.mu.Unlock()
}

func (s *statusWatchers) remove(w *StatusWatch) {
	s.mu.Lock()
	delete(s.m, w)
	s.mu.Unlock()
}

// signal wakes every registered watch; the actor calls it after it
// published a status (publish), so a waiter that registers and then reads
// the status either sees the change or is signalled for it.
func (s *statusWatchers) signal() {
	s.mu.Lock()
	for w := range s.m {
		w.signal()
	}
	s.mu.Unlock()
}

// AddStatusWatch registers w with the partition: it is signalled after
// every later status change a watch depends on. Read Status after
// registering, so no change falls between the read and the registration.
// Remove it with RemoveStatusWatch.
func (c *Client) AddStatusWatch(w *StatusWatch) { c.board.watchers.add(w) }

// RemoveStatusWatch unregisters w.
func (c *Client) RemoveStatusWatch(w *StatusWatch) { c.board.watchers.remove(w) }

// watchedChange reports whether o differs from s in what a watch
// condition reads (parkedWatch.fired, ReplicaWatchFired).
func (s *Status) watchedChange(o *Status) bool {
	return s.HighWatermark != o.HighWatermark || s.LogStartOffset != o.LogStartOffset ||
		s.LogEndOffset != o.LogEndOffset || s.FlushedOffset != o.FlushedOffset || s.replicaEnd != o.replicaEnd ||
		s.LeaderEpoch != o.LeaderEpoch || s.Role != o.Role
}

// ReplicaWatchFired reports whether a follower's long poll at fetchOffset,
// begun when the replica was at was, should end for the replica now at
// s: as a WatchHighWatermark with LogEnd and Above = fetchOffset fires,
// when the log end a follower may read (the flushed offset under group
// commit) or the high watermark or log start passed fetchOffset, or the
// leader epoch or role changed.
func (s *Status) ReplicaWatchFired(was *Status, fetchOffset int64) bool {
	return s.replicaEnd > fetchOffset || s.HighWatermark > fetchOffset || s.LogStartOffset > fetchOffset ||
		s.LeaderEpoch != was.LeaderEpoch || s.Role != was.Role
}

// ReplicaEnd is how far a follower may read: the log end offset, or the
// flushed offset under group commit.
func (s *Status) ReplicaEnd() int64 { return s.replicaEnd }
