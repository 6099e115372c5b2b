package fetchsession

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Kafka error codes this package answers with.
const (
	// ErrCodeFetchSessionIDNotFound is FETCH_SESSION_ID_NOT_FOUND.
	ErrCodeFetchSessionIDNotFound int16 = 70
	// ErrCodeInvalidFetchSessionEpoch is INVALID_FETCH_SESSION_EPOCH.
	ErrCodeInvalidFetchSessionEpoch int16 = 71
)

// The request epochs with a special meaning.
const (
	// InitialEpoch (0) asks for a full fetch that creates a session.
	InitialEpoch int32 = 0
	// FinalEpoch (-1) asks for a sessionless full fetch (and closes the
	// named session, if any).
	FinalEpoch int32 = -1
)

// ErrMissingResult is returned by Respond when the caller did not supply a
// result for a partition it was asked to read.
var ErrMissingResult = errors.New("fetchsession: missing partition result")

// maxIDAttempts bounds the draws from the IDSource for one new session.
const maxIDAttempts = 64

func missing(k PartitionKey) error {
	return fmt.Errorf("%w: %s-%d", ErrMissingResult, k.Topic, k.Partition)
}

// IDSource returns candidate session ids. The cache skips 0 and ids in
// use, so a source need not avoid them.
type IDSource func() int32

// RandomIDs returns an IDSource of uniformly random positive int32s from
// r. Pass rand.New(rand.NewPCG(seed, seed)) for determinism in tests, or
// nil for the runtime's randomly seeded generator.
func RandomIDs(r *rand.Rand) IDSource {
	if r == nil {
		return func() int32 { return rand.Int32N(math.MaxInt32) + 1 }
	}
	return func() int32 { return r.Int32N(math.MaxInt32) + 1 }
}

// Kind says how a Fetch request is served.
type Kind int

const (
	// KindSessionless is a full fetch without a session: (0, -1), (X, -1),
	// or a full fetch that got no session slot.
	KindSessionless Kind = iota
	// KindFull is a full fetch that asks for a new session: (0, 0) or
	// (X, 0).
	KindFull
	// KindIncremental is a fetch in an existing session: (X, N>0).
	KindIncremental
	// KindError is a session error (70 or 71): no reads, no partitions.
	KindError
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindSessionless:
		return "sessionless"
	case KindFull:
		return "full"
	case KindIncremental:
		return "incremental"
	case KindError:
		return "error"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Request is the session part of one FetchRequest.
type Request struct {
	// SessionID and SessionEpoch are the request's fields (v7+; older
	// versions: 0 and -1).
	SessionID    int32
	SessionEpoch int32
	// ReplicaID is the fetcher's replica id: >= 0 for a follower, whose
	// session is privileged; -1 for consumers.
	ReplicaID int32
	// Partitions are the request's partitions: all of them in a full
	// fetch, the added or changed ones in an incremental fetch.
	Partitions []FetchPartition
	// Forgotten are the partitions an incremental fetch removes
	// (ForgottenTopics); ignored in a full fetch.
	Forgotten []PartitionKey
	// NowMs is the injected clock's reading when the request arrived.
	NowMs int64
}

// Context is what NewContext decided for a request: the caller reads
// Reads, then passes the context and the results to Respond.
type Context struct {
	Kind Kind
	// ErrorCode is the top-level error for KindError, else 0.
	ErrorCode int16
	// Reads are the partitions to read, in response order.
	Reads []FetchPartition

	privileged bool
	session    *Session // KindIncremental
}

// Response is the session part of the FetchResponse.
type Response struct {
	// ErrorCode is the top-level error code.
	ErrorCode int16
	// SessionID is the response's session id: the new or existing
	// session's, or 0 (sessionless, no slot, or an error).
	SessionID int32
	// Partitions are the partitions to send, in order.
	Partitions []PartitionResult
}

// Cache is the broker's fetch session cache: Kafka's rules for a Fetch
// request's (session id, epoch), a bounded number of sessions, and
// eviction. It is a plain struct with no I/O and no clock reads; it is not
// safe for concurrent use (one actor owns it).
//
// Eviction, when a new session needs a slot and the cache is full:
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
// only when the cache is full.
type Cache struct {
	cfg      Config
	ids      IDSource
	sessions map[int32]*Session
}

// NewCache returns an empty cache. ids supplies session ids; see
// RandomIDs.
func NewCache(cfg Config, ids IDSource) (*Cache, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("fetchsession: new cache: %w", err)
	}
	if ids == nil {
		ids = RandomIDs(nil)
	}
	return &Cache{cfg: cfg, ids: ids, sessions: make(map[int32]*Session)}, nil
}

// Len returns the number of live sessions.
func (c *Cache) Len() int { return len(c.sessions) }

// Session returns the live session with id.
func (c *Cache) Session(id int32) (*Session, bool) {
	s, ok := c.sessions[id]
	return s, ok
}

// Remove closes the session with id, reporting whether it existed.
func (c *Cache) Remove(id int32) bool {
	_, ok := c.sessions[id]
	delete(c.sessions, id)
	return ok
}

// NewContext applies Kafka's rules for req's (SessionID, SessionEpoch):
//
//   - (0, -1): sessionless full fetch.
//   - (X, -1): close X, sessionless full fetch.
//   - (0, 0) and (X, 0): close X if X != 0, then a full fetch that creates
//     a session in Respond if a slot is free or can be freed.
//   - (0, <-1): sessionless full fetch: session errors go only to
//     requests with a session id != 0 or an epoch >= 0 (kafka-wire.md
//     rule 6).
//   - otherwise incremental: an unknown id gets FETCH_SESSION_ID_NOT_FOUND
//     (70), an epoch other than the session's expected one
//     INVALID_FETCH_SESSION_EPOCH (71); on success the partitions and
//     forgotten topics are applied and the expected epoch advances
//     (MaxInt32 wraps to 1).
func (c *Cache) NewContext(req *Request) *Context {
	switch {
	case req.SessionEpoch == FinalEpoch || (req.SessionID == 0 && req.SessionEpoch < 0):
		if req.SessionID != 0 {
			c.Remove(req.SessionID)
		}
		return &Context{Kind: KindSessionless, Reads: req.Partitions}
	case req.SessionEpoch == InitialEpoch:
		if req.SessionID != 0 {
			c.Remove(req.SessionID)
		}
		return &Context{Kind: KindFull, Reads: req.Partitions, privileged: req.ReplicaID >= 0}
	}
	s, ok := c.sessions[req.SessionID]
	if !ok {
		return &Context{Kind: KindError, ErrorCode: ErrCodeFetchSessionIDNotFound}
	}
	if s.epoch != req.SessionEpoch {
		return &Context{Kind: KindError, ErrorCode: ErrCodeInvalidFetchSessionEpoch}
	}
	s.update(req.Partitions, req.Forgotten)
	s.advance()
	s.lastUsedMs = max(s.lastUsedMs, req.NowMs)
	return &Context{Kind: KindIncremental, Reads: s.Partitions(), session: s}
}

// Respond builds the response from the reads' results (one per
// ctx.Reads entry, any order): for KindFull it first tries to create the
// session with ctx.Reads. Full and sessionless responses carry every
// partition in request order; incremental ones only the partitions that
// changed (see Session). nowMs is the injected clock's reading. If an
// incremental request's session was closed or evicted while the request
// was parked, the response still carries its id and partitions; the
// client's next request then gets FETCH_SESSION_ID_NOT_FOUND and starts a
// new session.
func (c *Cache) Respond(ctx *Context, nowMs int64, results []PartitionResult) (Response, error) {
	if ctx.Kind == KindError {
		return Response{ErrorCode: ctx.ErrorCode}, nil
	}
	byKey := make(map[PartitionKey]*PartitionResult, len(results))
	for i := range results {
		byKey[results[i].Key()] = &results[i]
	}
	s := ctx.session
	full := ctx.Kind != KindIncremental
	if ctx.Kind == KindFull {
		s = c.create(ctx.privileged, nowMs, ctx.Reads)
	}
	if s == nil {
		return sessionless(ctx.Reads, byKey)
	}
	s.lastUsedMs = max(s.lastUsedMs, nowMs)
	parts, err := s.respond(byKey, full)
	if err != nil {
		return Response{}, fmt.Errorf("fetchsession: respond in session %d: %w", s.id, err)
	}
	return Response{SessionID: s.id, Partitions: parts}, nil
}

func sessionless(reads []FetchPartition, byKey map[PartitionKey]*PartitionResult) (Response, error) {
	parts := make([]PartitionResult, 0, len(reads))
	for _, p := range reads {
		r, ok := byKey[p.Key()]
		if !ok {
			return Response{}, fmt.Errorf("fetchsession: respond without session: %w", missing(p.Key()))
		}
		parts = append(parts, *r)
	}
	return Response{Partitions: parts}, nil
}

// create adds a session for parts if a slot is free or can be freed, and
// returns nil otherwise.
func (c *Cache) create(privileged bool, nowMs int64, parts []FetchPartition) *Session {
	if c.cfg.MaxSlots == 0 {
		return nil
	}
	if len(c.sessions) >= c.cfg.MaxSlots && !c.evict(privileged, len(parts), nowMs) {
		return nil
	}
	id, ok := c.newID()
	if !ok {
		return nil
	}
	s := newSession(id, privileged, nowMs, parts)
	c.sessions[id] = s
	return s
}

// newID draws a non-zero id not in use.
func (c *Cache) newID() (int32, bool) {
	for range maxIDAttempts {
		id := c.ids()
		if _, used := c.sessions[id]; id != 0 && !used {
			return id, true
		}
	}
	return 0, false
}

// evict frees one slot for a newcomer per the policy on Cache, reporting
// whether it did.
func (c *Cache) evict(privileged bool, size int, nowMs int64) bool {
	var lru, victim *Session
	for _, s := range c.sessions {
		if lru == nil || usedBefore(s, lru) {
			lru = s
		}
		eligible := nowMs-s.createdMs > c.cfg.MinEvictionMs || (privileged && !s.privileged)
		if eligible && (victim == nil || lessValuable(s, victim)) {
			victim = s
		}
	}
	if lru != nil && nowMs-lru.lastUsedMs > c.cfg.MinEvictionMs {
		delete(c.sessions, lru.id)
		return true
	}
	if victim == nil || !beats(privileged, size, victim) {
		return false
	}
	delete(c.sessions, victim.id)
	return true
}

// usedBefore orders sessions by last use, then id, for determinism.
func usedBefore(a, b *Session) bool {
	if a.lastUsedMs != b.lastUsedMs {
		return a.lastUsedMs < b.lastUsedMs
	}
	return a.id < b.id
}

// lessValuable orders sessions for eviction: consumer before follower,
// fewer partitions first, then least recently used.
func lessValuable(a, b *Session) bool {
	if a.privileged != b.privileged {
		return !a.privileged
	}
	if a.Len() != b.Len() {
		return a.Len() < b.Len()
	}
	return usedBefore(a, b)
}

// beats reports whether a newcomer is strictly more valuable than s.
func beats(privileged bool, size int, s *Session) bool {
	if privileged != s.privileged {
		return privileged
	}
	return size > s.Len()
}
