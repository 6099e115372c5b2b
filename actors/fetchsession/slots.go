package fetchsession

import (
	"fmt"
	"slices"
)

// slot is what the cache knows of one live session: enough to route its
// requests and to choose an eviction victim, none of its partitions.
type slot struct {
	id         int32
	privileged bool
	createdMs  int64
	lastUsedMs int64
	size       int // partitions in the session, as last reported
}

// Slots is the bounded table of live session ids: it routes a request's
// (session id, epoch), allocates ids and evicts. It holds no session's
// partitions (each Session does, in its own actor), only each session's
// privilege, age, last use and size, which the session reports with Used.
// It is a plain struct with no I/O and no clock reads; not safe for
// concurrent use.
//
// Eviction, when a new session needs a slot and the table is full:
//  1. If the least recently used session has been idle longer than
//     MinEvictionMs, it is evicted.
//  2. Otherwise the least valuable eligible session is found. Eligible are
//     sessions older than MinEvictionMs since creation (a minimum age, so
//     new sessions do not thrash each other), and, for a privileged
//     newcomer (a follower), every consumer session whatever its age.
//     Value orders consumer before follower sessions, then fewer
//     partitions before more, then least recently used first. It is
//     evicted only if the newcomer is strictly more valuable: a follower
//     beats a consumer; otherwise more partitions win.
//  3. Otherwise no session is created and the full fetch is answered
//     with session id 0, which clients accept (kgo and Java carry on
//     with full fetches).
//
// This keeps Kafka's preferences (stale first, then small, non-privileged
// sessions) without its sorted indexes: the scan is O(sessions) and runs
// only when the table is full.
type Slots struct {
	cfg Config
	ids IDSource
	m   map[int32]*slot
}

// NewSlots returns an empty table. ids supplies session ids; nil draws
// random ones (see RandomIDs).
func NewSlots(cfg Config, ids IDSource) (*Slots, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("fetchsession: new session table: %w", err)
	}
	if ids == nil {
		ids = RandomIDs(nil)
	}
	return &Slots{cfg: cfg, ids: ids, m: make(map[int32]*slot)}, nil
}

// Len returns the number of live sessions.
func (t *Slots) Len() int { return len(t.m) }

// Has reports whether session id is live.
func (t *Slots) Has(id int32) bool {
	_, ok := t.m[id]
	return ok
}

// IDs returns the live session ids, ascending.
func (t *Slots) IDs() []int32 {
	ids := make([]int32, 0, len(t.m))
	for id := range t.m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Remove frees session id's slot, reporting whether it was live.
func (t *Slots) Remove(id int32) bool {
	_, ok := t.m[id]
	delete(t.m, id)
	return ok
}

// Used records that session id answered a request at nowMs and now holds
// size partitions. Unknown ids (evicted meanwhile) are ignored.
func (t *Slots) Used(id int32, size int, nowMs int64) {
	if s, ok := t.m[id]; ok {
		s.size = size
		s.lastUsedMs = max(s.lastUsedMs, nowMs)
	}
}

// Route applies Kafka's rules for req's (SessionID, SessionEpoch) as far
// as they need no session state, and returns the context and the id of
// the session the request closed (0 if none):
//
//   - (0, -1), (0, < -1): KindSessionless (session errors go only to
//     requests with a session id != 0 or an epoch >= 0,
//     docs/clients.md rule 6).
//   - (X, -1): close X, KindSessionless.
//   - (0, 0) and (X, 0): close X if X != 0, then KindFull: a session is
//     created by Create when the response is built, if a slot can be had.
//   - otherwise: an unknown X is KindError FETCH_SESSION_ID_NOT_FOUND
//     (70); a live X is KindIncremental with SessionID X and no Reads yet:
//     the session itself checks the epoch (Session.Begin).
func (t *Slots) Route(req *Request) (*Context, int32) {
	var closed int32
	switch {
	case req.SessionEpoch == FinalEpoch || (req.SessionID == 0 && req.SessionEpoch < 0):
		if req.SessionID != 0 && t.Remove(req.SessionID) {
			closed = req.SessionID
		}
		return &Context{Kind: KindSessionless, Reads: req.Partitions}, closed
	case req.SessionEpoch == InitialEpoch:
		if req.SessionID != 0 && t.Remove(req.SessionID) {
			closed = req.SessionID
		}
		return &Context{Kind: KindFull, Reads: req.Partitions, privileged: req.ReplicaID >= 0}, closed
	}
	if !t.Has(req.SessionID) {
		return &Context{Kind: KindError, ErrorCode: ErrCodeFetchSessionIDNotFound}, 0
	}
	return &Context{Kind: KindIncremental, sessionID: req.SessionID}, 0
}

// Create takes a slot for a new session of size partitions, evicting one
// session if the policy above allows. It returns the new id and the
// evicted one (0 if none); ok is false when no slot could be had (or
// MaxSlots is 0, or the IDSource gave no usable id).
func (t *Slots) Create(privileged bool, size int, nowMs int64) (id, evicted int32, ok bool) {
	if t.cfg.MaxSlots == 0 {
		return 0, 0, false
	}
	if len(t.m) >= t.cfg.MaxSlots {
		if evicted = t.evict(privileged, size, nowMs); evicted == 0 {
			return 0, 0, false
		}
	}
	id, ok = t.newID()
	if !ok {
		return 0, evicted, false
	}
	t.m[id] = &slot{id: id, privileged: privileged, createdMs: nowMs, lastUsedMs: nowMs, size: size}
	return id, evicted, true
}

// newID draws a non-zero id not in use.
func (t *Slots) newID() (int32, bool) {
	for range maxIDAttempts {
		id := t.ids()
		if _, used := t.m[id]; id != 0 && !used {
			return id, true
		}
	}
	return 0, false
}

// evict frees one slot for a newcomer per the policy on Slots and returns
// the evicted id, 0 if none.
func (t *Slots) evict(privileged bool, size int, nowMs int64) int32 {
	var lru, victim *slot
	for _, s := range t.m {
		if lru == nil || usedBefore(s, lru) {
			lru = s
		}
		eligible := nowMs-s.createdMs > t.cfg.MinEvictionMs || (privileged && !s.privileged)
		if eligible && (victim == nil || lessValuable(s, victim)) {
			victim = s
		}
	}
	if lru != nil && nowMs-lru.lastUsedMs > t.cfg.MinEvictionMs {
		delete(t.m, lru.id)
		return lru.id
	}
	if victim == nil || !beats(privileged, size, victim) {
		return 0
	}
	delete(t.m, victim.id)
	return victim.id
}

// usedBefore orders sessions by last use, then id, for determinism.
func usedBefore(a, b *slot) bool {
	if a.lastUsedMs != b.lastUsedMs {
		return a.lastUsedMs < b.lastUsedMs
	}
	return a.id < b.id
}

// lessValuable orders sessions for eviction: consumer before follower,
// fewer partitions first, then least recently used.
func lessValuable(a, b *slot) bool {
	if a.privileged != b.privileged {
		return !a.privileged
	}
	if a.size != b.size {
		return a.size < b.size
	}
	return usedBefore(a, b)
}

// beats reports whether a newcomer is strictly more valuable than s.
func beats(privileged bool, size int, s *slot) bool {
	if privileged != s.privileged {
		return privileged
	}
	return size > s.size
}
