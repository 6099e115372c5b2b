package replicafetcher

import (
	"cmp"
	"math"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// fetchSession is the follower's side of its incremental fetch session
// with the leader (KIP-227), a plain struct stepped by State: the session
// id and the epoch of the next request, and the partitions the leader's
// session holds with the positions last sent for them. Without a session
// (id 0) a Fetch is full and asks for one (epoch 0); with one, a Fetch
// carries only the partitions that are new to the session or whose
// position or leader epoch changed, forgets the ones no longer fetched,
// and leaves out the rest, whose positions the leader keeps. A response
// that names no session, a session error (FETCH_SESSION_ID_NOT_FOUND,
// INVALID_FETCH_SESSION_EPOCH) or a failed Fetch drops the session: the
// next Fetch is full again.
type fetchSession struct {
	id    int32
	epoch int32
	parts map[PartitionRef]sessionPart
	// replaces is a session dropped while the leader may still hold it
	// (abandon): the next full Fetch names it, which closes it there.
	replaces int32
}

// sessionPart is one partition as the leader's session holds it.
type sessionPart struct {
	topic            string
	fetchOffset      int64
	lastFetchedEpoch int32
	leaderEpoch      int32
}

// sessionBuild is what one Fetch asks of the session.
type sessionBuild struct {
	id, epoch int32
	full      bool
	// include are the partitions the request carries; forgotten are the
	// ones it removes from the session.
	include   map[PartitionRef]bool
	forgotten []forgottenPart
	// next is the session's partitions once the request succeeded.
	next map[PartitionRef]sessionPart
}

// forgottenPart is a partition the request forgets.
type forgottenPart struct {
	ref   PartitionRef
	topic string
}

// readyPart is a partition the next Fetch fetches, at its position.
type readyPart struct {
	ref PartitionRef
	sessionPart
}

// build decides the next Fetch for the ready partitions: a full one
// without a session, else an incremental one.
func (s *fetchSession) build(ready []readyPart) *sessionBuild {
	b := &sessionBuild{id: s.id, epoch: s.epoch, full: s.id == 0,
		include: make(map[PartitionRef]bool, len(ready)), next: make(map[PartitionRef]sessionPart, len(ready))}
	if b.full {
		// InitialEpoch: a full fetch asking for a session, closing the
		// one it replaces.
		b.id, b.epoch = s.replaces, 0
	}
	for _, r := range ready {
		b.next[r.ref] = r.sessionPart
		if old, ok := s.parts[r.ref]; b.full || !ok || old != r.sessionPart {
			b.include[r.ref] = true
		}
	}
	if !b.full {
		for ref, p := range s.parts {
			if _, ok := b.next[ref]; !ok {
				b.forgotten = append(b.forgotten, forgottenPart{ref: ref, topic: p.topic})
			}
		}
		slices.SortFunc(b.forgotten, func(x, y forgottenPart) int {
			return cmp.Or(cmp.Compare(x.topic, y.topic), cmp.Compare(x.ref.Partition, y.ref.Partition))
		})
	}
	return b
}

// onResponse takes the answer to the Fetch b built: its top-level error
// code and session id.
func (s *fetchSession) onResponse(b *sessionBuild, errorCode int16, sessionID int32) {
	switch {
	case errorCode != 0, sessionID == 0, !b.full && sessionID != b.id:
		s.reset()
	case b.full:
		s.id, s.epoch, s.parts, s.replaces = sessionID, 1, b.next, 0
	default:
		s.parts = b.next
		s.epoch = nextEpoch(s.epoch)
	}
}

// reset drops the session: the next Fetch is full.
func (s *fetchSession) reset() {
	s.id, s.epoch, s.parts = 0, 0, nil
}

// abandon drops the session of a Fetch given up on in flight: the next
// Fetch is full and closes the session on the leader.
func (s *fetchSession) abandon() {
	if s.id != 0 {
		s.replaces = s.id
	}
	s.reset()
}

// nextEpoch is the epoch after e (MaxInt32 wraps to 1, as in Kafka).
func nextEpoch(e int32) int32 {
	if e == math.MaxInt32 {
		return 1
	}
	return e + 1
}

// sessionError reports whether code is a fetch session error, which a
// full Fetch sent at once recovers from.
func sessionError(code int16) bool {
	return code == kerr.FetchSessionIDNotFound.Code || code == kerr.InvalidFetchSessionEpoch.Code
}
