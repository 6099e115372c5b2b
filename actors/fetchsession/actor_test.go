package fetchsession

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// actorEnv is a cache actor in a real actor system, with a clock the test
// moves.
type actorEnv struct {
	t      *testing.T
	system *actor.ActorSystem
	c      *Client
	nowMs  atomic.Int64
	nextID uint64
}

func startCacheActor(t *testing.T, cfg Config, ids ...int32) *actorEnv {
	t.Helper()
	e := &actorEnv{t: t, system: actor.NewActorSystem()}
	c, err := Spawn(e.system, ActorConfig{Cache: cfg, IDs: seqIDs(ids...),
		Now: func() time.Time { return time.UnixMilli(e.nowMs.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	e.c = c
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
		if n := c.SessionActors(); n != 0 {
			t.Errorf("%d session actors left after Stop", n)
		}
		e.system.Shutdown()
	})
	return e
}

// await waits for the answer sent to a future's PID.
func (e *actorEnv) await(send func(replyTo *actor.PID)) any {
	e.t.Helper()
	f := actor.NewFuture(e.system, 5*time.Second)
	send(f.PID())
	m, err := f.Result()
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

func (e *actorEnv) begin(req Request) *Context {
	e.t.Helper()
	e.nextID++
	id := e.nextID
	m, ok := e.await(func(to *actor.PID) { e.c.SendBegin(id, &req, to) }).(*FetchBegun)
	if !ok || m.ID != id {
		e.t.Fatalf("begin: %+v", m)
	}
	return m.Context
}

func (e *actorEnv) finish(fctx *Context, results []PartitionResult) *FetchFinished {
	e.t.Helper()
	e.nextID++
	id := e.nextID
	m, ok := e.await(func(to *actor.PID) { e.c.SendFinish(id, fctx, results, to) }).(*FetchFinished)
	if !ok || m.ID != id {
		e.t.Fatalf("finish: %+v", m)
	}
	return m
}

// fetch runs one whole request with every read at high watermark hw.
func (e *actorEnv) fetch(req Request, hw int64) (*Context, Response) {
	e.t.Helper()
	fctx := e.begin(req)
	m := e.finish(fctx, fullResults(fctx, hw))
	if m.Err != nil {
		e.t.Fatal(m.Err)
	}
	return fctx, m.Response
}

// waitActors waits until n session actors are alive.
func (e *actorEnv) waitActors(n int) {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for e.c.SessionActors() != n {
		if time.Now().After(deadline) {
			e.t.Fatalf("%d session actors, want %d", e.c.SessionActors(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestActorOneActorPerSession(t *testing.T) {
	e := startCacheActor(t, Config{MaxSlots: 2, MinEvictionMs: 1000}, 11, 12, 13, 14)
	parts := []FetchPartition{fp("a", 0, 0), fp("a", 1, 0)}
	_, r1 := e.fetch(Request{SessionID: 0, SessionEpoch: 0, ReplicaID: -1, Partitions: parts}, 5)
	_, r2 := e.fetch(Request{SessionID: 0, SessionEpoch: 0, ReplicaID: -1, Partitions: parts[:1]}, 5)
	if r1.SessionID != 11 || r2.SessionID != 12 || len(r1.Partitions) != 2 {
		t.Fatalf("sessions %d %d, partitions %d", r1.SessionID, r2.SessionID, len(r1.Partitions))
	}
	if e.c.Sessions() != 2 || e.c.SessionActors() != 2 {
		t.Fatalf("%d sessions, %d session actors", e.c.Sessions(), e.c.SessionActors())
	}

	// Session 11's actor serves its incremental fetches: nothing changed,
	// then a new high watermark on both partitions.
	fctx, resp := e.fetch(Request{SessionID: 11, SessionEpoch: 1, ReplicaID: -1, NowMs: 0}, 5)
	if fctx.Kind != KindIncremental || len(fctx.Reads) != 2 || resp.SessionID != 11 || len(resp.Partitions) != 0 {
		t.Fatalf("incremental: %+v %+v", fctx, resp)
	}
	if _, resp = e.fetch(Request{SessionID: 11, SessionEpoch: 2, ReplicaID: -1}, 6); len(resp.Partitions) != 2 {
		t.Fatalf("changed high watermark: %+v", resp)
	}
	if c := e.begin(Request{SessionID: 11, SessionEpoch: 2, ReplicaID: -1}); c.Kind != KindError || c.ErrorCode != ErrCodeInvalidFetchSessionEpoch {
		t.Fatalf("replayed epoch: %+v", c)
	}
	if c := e.begin(Request{SessionID: 99, SessionEpoch: 1, ReplicaID: -1}); c.Kind != KindError || c.ErrorCode != ErrCodeFetchSessionIDNotFound {
		t.Fatalf("unknown session: %+v", c)
	}
	m := e.finish(&Context{Kind: KindError, ErrorCode: ErrCodeFetchSessionIDNotFound}, nil)
	if m.Response.ErrorCode != ErrCodeFetchSessionIDNotFound || len(m.Response.Partitions) != 0 {
		t.Fatalf("error response %+v", m.Response)
	}

	// Closing session 12 stops its actor.
	if _, resp = e.fetch(Request{SessionID: 12, SessionEpoch: -1, ReplicaID: -1, Partitions: parts[:1]}, 6); resp.SessionID != 0 {
		t.Fatalf("close: %+v", resp)
	}
	e.waitActors(1)

	// Both slots taken and 11 idle past min.incremental.fetch.session.
	// eviction.ms: a new session evicts it and stops its actor.
	e.fetch(Request{SessionID: 0, SessionEpoch: 0, ReplicaID: -1, Partitions: parts}, 6) // takes the free slot (13)
	e.waitActors(2)
	e.nowMs.Store(5000)
	_, r3 := e.fetch(Request{SessionID: 0, SessionEpoch: 0, ReplicaID: -1, Partitions: parts}, 6)
	if r3.SessionID != 14 || e.c.Sessions() != 2 {
		t.Fatalf("new session %d, %d sessions", r3.SessionID, e.c.Sessions())
	}
	e.waitActors(2)
	if c := e.begin(Request{SessionID: 11, SessionEpoch: 3, ReplicaID: -1}); c.ErrorCode != ErrCodeFetchSessionIDNotFound {
		t.Fatalf("evicted session 11: %+v", c)
	}
	if c := e.begin(Request{SessionID: 13, SessionEpoch: 1, ReplicaID: -1}); c.Kind != KindIncremental {
		t.Fatalf("session 13: %+v", c)
	}
}

func TestActorSessionClosedWhileParked(t *testing.T) {
	// Ids: 5, then 5 again after it is closed.
	e := startCacheActor(t, DefaultConfig(), 5, 5)
	_, r := e.fetch(Request{SessionID: 0, SessionEpoch: 0, ReplicaID: -1, Partitions: []FetchPartition{fp("a", 0, 0)}}, 1)
	if r.SessionID != 5 {
		t.Fatalf("session %d", r.SessionID)
	}
	// An incremental fetch begins (and would park on the partitions) ...
	parked := e.begin(Request{SessionID: 5, SessionEpoch: 1, ReplicaID: -1})
	// ... while another request closes the session and opens a new one
	// with the same id and other partitions.
	e.fetch(Request{SessionID: 5, SessionEpoch: -1, ReplicaID: -1}, 1)
	e.waitActors(0)
	_, r = e.fetch(Request{SessionID: 0, SessionEpoch: 0, ReplicaID: -1, Partitions: []FetchPartition{fp("b", 0, 0)}}, 1)
	if r.SessionID != 5 {
		t.Fatalf("new session %d", r.SessionID)
	}
	// The parked fetch is answered for the old session, with everything it
	// read; the new session is not touched.
	m := e.finish(parked, fullResults(parked, 1))
	if m.Err != nil || m.Response.SessionID != 5 || keys(m.Response.Partitions) != "a-0" {
		t.Fatalf("parked answer %+v, %v", m.Response, m.Err)
	}
	fctx, _ := e.fetch(Request{SessionID: 5, SessionEpoch: 1, ReplicaID: -1}, 1)
	if fctx.Kind != KindIncremental || readKeys(fctx.Reads) != "b-0" {
		t.Fatalf("new session after the stale answer: %+v", fctx)
	}
}
