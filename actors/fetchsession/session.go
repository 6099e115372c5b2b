package fetchsession

import (
	"container/list"
	"fmt"
	"math"
)

// PartitionKey names one topic partition.
type PartitionKey struct {
	Topic     string
	Partition int32
}

// FetchPartition is one partition of a FetchRequest: what to read and from
// where. In a full fetch the request lists every partition; in an
// incremental fetch only the added or changed ones.
type FetchPartition struct {
	Topic     string
	Partition int32
	// FetchOffset is the offset to read from.
	FetchOffset int64
	// LogStartOffset is the follower's log start offset; -1 for consumers.
	LogStartOffset int64
	// PartitionMaxBytes is the most bytes of records to return for this
	// partition.
	PartitionMaxBytes int32
	// CurrentLeaderEpoch is the fetcher's leader epoch (Fetch v9+); -1
	// when absent.
	CurrentLeaderEpoch int32
	// LastFetchedEpoch is the epoch of the last fetched batch (Fetch v12+);
	// -1 when absent.
	LastFetchedEpoch int32
}

// Key returns the partition's key.
func (p FetchPartition) Key() PartitionKey {
	return PartitionKey{Topic: p.Topic, Partition: p.Partition}
}

// PartitionResult is one partition's read result, produced by the
// partition actor and filtered by the session into the response.
type PartitionResult struct {
	Topic     string
	Partition int32
	// ErrorCode is the partition's Kafka error code, 0 for success.
	ErrorCode        int16
	HighWatermark    int64
	LastStableOffset int64
	LogStartOffset   int64
	// Records is the partition's record data; opaque to the session, which
	// only checks whether it is empty. Never nil in a response for an error
	// partition (docs/clients.md rule 8); the caller sets it.
	Records []byte
	// PreferredReadReplica is -1 when there is none.
	PreferredReadReplica int32
	// DivergingEpoch is set when the result carries a diverging epoch
	// (Fetch v12+).
	DivergingEpoch bool
}

// Key returns the partition's key.
func (r PartitionResult) Key() PartitionKey {
	return PartitionKey{Topic: r.Topic, Partition: r.Partition}
}

// cachedPartition is one partition of a session: the last request
// values and the values last sent in a response.
type cachedPartition struct {
	req FetchPartition
	// sentHW, sentLSO and sentLogStart are the last values sent; -1 forces
	// the partition into the next incremental response.
	sentHW       int64
	sentLSO      int64
	sentLogStart int64
}

// Session is one incremental fetch session (KIP-227): its id, the next
// epoch it expects and its ordered partitions. It is a plain struct with
// no I/O; its own session actor (or a Cache) steps it with Begin and
// Respond.
type Session struct {
	id         int32
	epoch      int32
	privileged bool
	createdMs  int64
	lastUsedMs int64
	order      *list.List // of *cachedPartition, response order
	index      map[PartitionKey]*list.Element
}

// NewSession returns the session a full fetch created at nowMs, with the
// fetch's partitions, expecting epoch 1.
func NewSession(id int32, privileged bool, nowMs int64, parts []FetchPartition) *Session {
	s := &Session{
		id:         id,
		epoch:      1,
		privileged: privileged,
		createdMs:  nowMs,
		lastUsedMs: nowMs,
		order:      list.New(),
		index:      make(map[PartitionKey]*list.Element, len(parts)),
	}
	s.update(parts, nil)
	return s
}

// ID returns the session id (non-zero).
func (s *Session) ID() int32 { return s.id }

// Epoch returns the epoch the next incremental request must carry.
func (s *Session) Epoch() int32 { return s.epoch }

// Privileged reports whether the session belongs to a follower (replica id
// >= 0); privileged sessions are evicted after consumers' sessions.
func (s *Session) Privileged() bool { return s.privileged }

// Len returns the number of partitions in the session.
func (s *Session) Len() int { return s.order.Len() }

// CreatedMs returns when the session was created.
func (s *Session) CreatedMs() int64 { return s.createdMs }

// LastUsedMs returns when the session last answered a request.
func (s *Session) LastUsedMs() int64 { return s.lastUsedMs }

// Partitions returns the session's partitions in response order, with the
// latest request values.
func (s *Session) Partitions() []FetchPartition {
	out := make([]FetchPartition, 0, s.order.Len())
	for e := s.order.Front(); e != nil; e = e.Next() {
		out = append(out, e.Value.(*cachedPartition).req)
	}
	return out
}

// update applies an incremental request: it adds new partitions at the
// end (their sent values at -1, so they are sent next), replaces the
// request values of known ones (keeping what was last sent), then removes
// the forgotten ones, in Kafka's order (a partition both added and
// forgotten ends up removed).
func (s *Session) update(added []FetchPartition, forgotten []PartitionKey) {
	for _, p := range added {
		if e, ok := s.index[p.Key()]; ok {
			e.Value.(*cachedPartition).req = p
			continue
		}
		cp := &cachedPartition{req: p, sentHW: -1, sentLSO: -1, sentLogStart: -1}
		s.index[p.Key()] = s.order.PushBack(cp)
	}
	for _, k := range forgotten {
		if e, ok := s.index[k]; ok {
			s.order.Remove(e)
			delete(s.index, k)
		}
	}
}

// Begin takes an incremental request for this session (one Slots.Route
// sent here): an epoch other than the expected one gets
// INVALID_FETCH_SESSION_EPOCH (71) and changes nothing; otherwise the
// added and forgotten partitions are applied, the expected epoch advances
// (MaxInt32 wraps to 1) and the context lists every partition to read.
func (s *Session) Begin(req *Request) *Context {
	if s.epoch != req.SessionEpoch {
		return &Context{Kind: KindError, ErrorCode: ErrCodeInvalidFetchSessionEpoch}
	}
	s.update(req.Partitions, req.Forgotten)
	s.advance()
	s.lastUsedMs = max(s.lastUsedMs, req.NowMs)
	return &Context{Kind: KindIncremental, Reads: s.Partitions(), sessionID: s.id}
}

// Respond builds the response to ctx from the reads' results (one per
// ctx.Reads entry, any order): every partition for the full fetch that
// created the session (ctx.Kind KindFull), else only those that changed.
// nowMs is the injected clock's reading.
func (s *Session) Respond(ctx *Context, nowMs int64, results []PartitionResult) (Response, error) {
	byKey := make(map[PartitionKey]*PartitionResult, len(results))
	for i := range results {
		byKey[results[i].Key()] = &results[i]
	}
	s.lastUsedMs = max(s.lastUsedMs, nowMs)
	parts, err := s.respond(byKey, ctx.Kind != KindIncremental)
	if err != nil {
		return Response{}, fmt.Errorf("fetchsession: respond in session %d: %w", s.id, err)
	}
	return Response{SessionID: s.id, Partitions: parts}, nil
}

// advance moves the expected epoch on by one, wrapping from MaxInt32 to 1
// (0 and -1 are the full-fetch epochs).
func (s *Session) advance() {
	s.epoch = nextEpoch(s.epoch)
}

func nextEpoch(e int32) int32 {
	if e == math.MaxInt32 {
		return 1
	}
	return e + 1
}

// record remembers what a response sent for cp and reports whether an
// incremental response must include the partition: it has records, its
// high watermark, last stable offset or log start offset changed, it has
// an error (then the cached high watermark becomes -1 so the partition is
// re-sent once the error clears), a preferred read replica or a diverging
// epoch.
func (cp *cachedPartition) record(r *PartitionResult) bool {
	must := len(r.Records) > 0 || r.PreferredReadReplica >= 0 || r.DivergingEpoch
	if cp.sentHW != r.HighWatermark {
		must = true
		cp.sentHW = r.HighWatermark
	}
	if cp.sentLSO != r.LastStableOffset {
		must = true
		cp.sentLSO = r.LastStableOffset
	}
	if cp.sentLogStart != r.LogStartOffset {
		must = true
		cp.sentLogStart = r.LogStartOffset
	}
	if r.ErrorCode != 0 {
		must = true
		cp.sentHW = -1
	}
	return must
}

// respond records results for every session partition and returns the
// response's partitions in session order: all of them when full, else
// only those record says must be sent. In an incremental response the
// partitions that returned records move to the end of the order, so the
// next response serves the others first (fairness under max bytes).
func (s *Session) respond(results map[PartitionKey]*PartitionResult, full bool) ([]PartitionResult, error) {
	out := make([]PartitionResult, 0, s.order.Len())
	var moved []*list.Element
	for e := s.order.Front(); e != nil; e = e.Next() {
		cp := e.Value.(*cachedPartition)
		r, ok := results[cp.req.Key()]
		if !ok {
			return nil, missing(cp.req.Key())
		}
		if cp.record(r) || full {
			out = append(out, *r)
		}
		if !full && len(r.Records) > 0 {
			moved = append(moved, e)
		}
	}
	for _, e := range moved {
		s.order.MoveToBack(e)
	}
	return out, nil
}
