package partition

import "sync/atomic"

// FollowerSession is a follower's incremental fetch session (KIP-227) as
// the leader's partition actors see it: the time of its last fetch,
// written by the fetch path (wire) on every fetch of the session and read
// by the actors of the partitions it holds. A follower whose position in a
// partition has not changed leaves the partition out of its incremental
// fetches; its position is then "the same as last time", and each fetch of
// the session is a fetch at that position. So a follower known to be at the
// leader's log end stays caught up (Kafka's lastCaughtUpTimeMs) as of the
// session's last fetch, without a message per partition per fetch; once
// the session stops fetching, its caught-up time stops too, and
// replica.lag.time.max.ms counts from there as it would in Kafka.
type FollowerSession struct {
	lastFetchMs atomic.Int64
}

// NewFollowerSession returns a session that has not fetched yet.
func NewFollowerSession() *FollowerSession { return &FollowerSession{} }

// Fetched records a fetch of the session at nowMs (the clock the
// partition actors use, in ms); earlier times are ignored.
func (s *FollowerSession) Fetched(nowMs int64) {
	for {
		old := s.lastFetchMs.Load()
		if nowMs <= old || s.lastFetchMs.CompareAndSwap(old, nowMs) {
			return
		}
	}
}

// LastFetchMs is the time of the session's last fetch, 0 before the first.
func (s *FollowerSession) LastFetchMs() int64 { return s.lastFetchMs.Load() }

// OnFollowerSessionFetched takes a fetch of the follower's session that
// holds this partition (FollowerSession) at atMs: a fetch at the
// follower's last reported position. A follower known to be at the
// leader's log end was caught up as of that fetch (the end only grows on
// a leader, so it was at the end then too); one behind it gets nothing
// from it (the fetch path reports those fetches themselves, with their
// offsets). The shell steps it for every session it holds before each
// other step, so a follower's caught-up time is current when an append or
// a tick reads it.
func (r *Replica) OnFollowerSessionFetched(replicaID int32, atMs int64) {
	if r.role != Leader || atMs <= 0 {
		return
	}
	f := r.followers[replicaID]
	if f == nil || !f.known || atMs <= f.lastFetchMs {
		return
	}
	leaderEnd := r.localEnd()
	if f.end < leaderEnd {
		return
	}
	f.caughtUpMs = max(f.caughtUpMs, atMs)
	f.lastFetchLeaderEnd, f.lastFetchMs = leaderEnd, atMs
}

// ReportFollowerLeftSession tells the leader that a follower's session no
// longer holds the partition (fire and forget; see FollowerLeftSession).
func (c *Client) ReportFollowerLeftSession(m *FollowerLeftSession) { c.send(m) }
