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

// Context is what was decided for a request (Cache.NewContext, or the
// cache and session actors): the caller reads Reads, then passes the
// context and the results back to be answered (Cache.Respond, or
// FinishFetch).
type Context struct {
	Kind Kind
	// ErrorCode is the top-level error for KindError, else 0.
	ErrorCode int16
	// Reads are the partitions to read, in response order.
	Reads []FetchPartition

	privileged bool   // KindFull: a follower's
	sessionID  int32  // KindIncremental
	gen        uint64 // KindIncremental: the session actor's incarnation
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

// Cache is the whole session cache in one plain struct, for a single
// owner: the Slots table plus every Session, stepped together. The fetch
// session actors split the same steps between the cache actor (Slots) and
// one actor per Session; Cache is the deterministic model that the
// scenario tests replay, and what an embedder without actors may use. It
// does no I/O, reads no clock and is not safe for concurrent use.
type Cache struct {
	slots    *Slots
	sessions map[int32]*Session
}

// NewCache returns an empty cache. ids supplies session ids; see
// RandomIDs.
func NewCache(cfg Config, ids IDSource) (*Cache, error) {
	slots, err := NewSlots(cfg, ids)
	if err != nil {
		return nil, fmt.Errorf("fetchsession: new cache: %w", err)
	}
	return &Cache{slots: slots, sessions: make(map[int32]*Session)}, nil
}

// Len returns the number of live sessions.
func (c *Cache) Len() int { return c.slots.Len() }

// Session returns the live session with id.
func (c *Cache) Session(id int32) (*Session, bool) {
	s, ok := c.sessions[id]
	return s, ok
}

// Remove closes the session with id, reporting whether it existed.
func (c *Cache) Remove(id int32) bool {
	delete(c.sessions, id)
	return c.slots.Remove(id)
}

// NewContext applies Kafka's rules for req's (SessionID, SessionEpoch)
// (Slots.Route, then Session.Begin for an incremental request):
//
//   - (0, -1): sessionless full fetch.
//   - (X, -1): close X, sessionless full fetch.
//   - (0, 0) and (X, 0): close X if X != 0, then a full fetch that creates
//     a session in Respond if a slot is free or can be freed.
//   - (0, <-1): sessionless full fetch: session errors go only to
//     requests with a session id != 0 or an epoch >= 0
//     (docs/clients.md rule 6).
//   - otherwise incremental: an unknown id gets FETCH_SESSION_ID_NOT_FOUND
//     (70), an epoch other than the session's expected one
//     INVALID_FETCH_SESSION_EPOCH (71); on success the partitions and
//     forgotten topics are applied and the expected epoch advances
//     (MaxInt32 wraps to 1).
func (c *Cache) NewContext(req *Request) *Context {
	ctx, closed := c.slots.Route(req)
	if closed != 0 {
		delete(c.sessions, closed)
	}
	if ctx.Kind != KindIncremental {
		return ctx
	}
	s := c.sessions[ctx.sessionID]
	ctx = s.Begin(req)
	if ctx.Kind == KindIncremental {
		c.slots.Used(s.id, s.Len(), req.NowMs)
	}
	return ctx
}

// Respond builds the response from the reads' results (one per
// ctx.Reads entry, any order): for KindFull it first tries to create the
// session with ctx.Reads. Full and sessionless responses carry every
// partition in request order; incremental ones only the partitions that
// changed (see Session). nowMs is the injected clock's reading. If an
// incremental request's session was closed or evicted while the request
// was parked, the response carries its id and every partition read; the
// client's next request then gets FETCH_SESSION_ID_NOT_FOUND and starts a
// new session.
func (c *Cache) Respond(ctx *Context, nowMs int64, results []PartitionResult) (Response, error) {
	switch ctx.Kind {
	case KindError:
		return Response{ErrorCode: ctx.ErrorCode}, nil
	case KindSessionless:
		return RespondSessionless(ctx, results)
	case KindFull:
		id, evicted, ok := c.slots.Create(ctx.privileged, len(ctx.Reads), nowMs)
		delete(c.sessions, evicted)
		if !ok {
			return RespondSessionless(ctx, results)
		}
		c.sessions[id] = NewSession(id, ctx.privileged, nowMs, ctx.Reads)
		return c.sessions[id].Respond(ctx, nowMs, results)
	}
	s, ok := c.sessions[ctx.sessionID]
	if !ok {
		return respondOrphan(ctx, results)
	}
	resp, err := s.Respond(ctx, nowMs, results)
	c.slots.Used(s.id, s.Len(), nowMs)
	return resp, err
}

// RespondSessionless answers a context without a session (a sessionless
// fetch, or a full fetch that got no slot): every read partition, in
// order, with session id 0.
func RespondSessionless(ctx *Context, results []PartitionResult) (Response, error) {
	parts, err := inReadOrder(ctx.Reads, results)
	if err != nil {
		return Response{}, fmt.Errorf("fetchsession: respond without session: %w", err)
	}
	return Response{Partitions: parts}, nil
}

// respondOrphan answers an incremental context whose session is gone:
// its id and every partition read.
func respondOrphan(ctx *Context, results []PartitionResult) (Response, error) {
	parts, err := inReadOrder(ctx.Reads, results)
	if err != nil {
		return Response{}, fmt.Errorf("fetchsession: respond in closed session %d: %w", ctx.sessionID, err)
	}
	return Response{SessionID: ctx.sessionID, Partitions: parts}, nil
}

// inReadOrder returns one result per read, in the reads' order.
func inReadOrder(reads []FetchPartition, results []PartitionResult) ([]PartitionResult, error) {
	byKey := make(map[PartitionKey]*PartitionResult, len(results))
	for i := range results {
		byKey[results[i].Key()] = &results[i]
	}
	parts := make([]PartitionResult, 0, len(reads))
	for _, p := range reads {
		r, ok := byKey[p.Key()]
		if !ok {
			return nil, missing(p.Key())
		}
		parts = append(parts, *r)
	}
	return parts, nil
}
