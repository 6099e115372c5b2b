package fetchsession

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// ActorConfig is what the cache actor is built from.
type ActorConfig struct {
	// Cache sizes the session cache.
	Cache Config
	// IDs supplies session ids; nil draws random ones.
	IDs IDSource
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives the actors' warnings; nil means slog.Default().
	Logger *slog.Logger
}

// stats are the counters the actors publish for the Client.
type stats struct {
	sessions atomic.Int64  // live sessions (slots taken)
	actors   atomic.Int64  // live session actors
	unknown  atomic.Uint64 // messages not understood
}

// child is one session actor of the cache actor: its PID and its
// incarnation, which tells a stale FinishFetch (for a session closed and
// its id drawn again) from a current one.
type child struct {
	pid *actor.PID
	gen uint64
}

// cacheActor owns the node's Slots (duty 1): it routes every request's
// (session id, epoch), allocates ids, evicts, and spawns, feeds and stops
// one session actor per session. It never waits: the reads and the long
// poll between BeginFetch and FinishFetch run in the requester's
// goroutine, and a session's own work runs in its actor.
type cacheActor struct {
	cfg      ActorConfig
	slots    *Slots
	children map[int32]child
	gen      uint64
	stats    *stats
}

// Receive dispatches one message.
func (a *cacheActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting:
	case *actor.Terminated:
		a.stats.actors.Add(-1)
	case *BeginFetch:
		a.onBegin(ctx, m)
	case *FinishFetch:
		a.onFinish(ctx, m)
	case *sessionUsed:
		if c, ok := a.children[m.id]; ok && c.gen == m.gen {
			a.slots.Used(m.id, m.size, m.nowMs)
		}
	case *CloseSessions:
		for _, id := range a.slots.IDs() {
			a.slots.Remove(id)
			a.stopChild(ctx, id)
		}
	default:
		a.stats.unknown.Add(1)
		a.cfg.Logger.Warn("fetch session cache actor: unknown message", "type", fmt.Sprintf("%T", m))
	}
	a.stats.sessions.Store(int64(a.slots.Len()))
}

// onBegin routes a request: answered here unless it is incremental in a
// live session, which its session actor answers.
func (a *cacheActor) onBegin(ctx actor.Context, m *BeginFetch) {
	req := *m.Request
	req.NowMs = a.cfg.Now().UnixMilli()
	fctx, closed := a.slots.Route(&req)
	if closed != 0 {
		a.stopChild(ctx, closed)
	}
	if fctx.Kind == KindIncremental {
		if c, ok := a.children[fctx.sessionID]; ok {
			ctx.RequestWithCustomSender(c.pid, &BeginFetch{ID: m.ID, Request: &req}, ctx.Sender())
			return
		}
		fctx = &Context{Kind: KindError, ErrorCode: ErrCodeFetchSessionIDNotFound}
	}
	reply(ctx, &FetchBegun{ID: m.ID, Context: fctx})
}

// onFinish answers a sessionless or error context here, creates the
// session of a full fetch (its actor answers), and hands an incremental
// one to its session actor, or answers for a session closed meanwhile.
func (a *cacheActor) onFinish(ctx actor.Context, m *FinishFetch) {
	fctx := m.Context
	switch fctx.Kind {
	case KindError:
		reply(ctx, &FetchFinished{ID: m.ID, Response: Response{ErrorCode: fctx.ErrorCode}})
	case KindSessionless:
		a.respondHere(ctx, m, RespondSessionless)
	case KindFull:
		nowMs := a.cfg.Now().UnixMilli()
		id, evicted, ok := a.slots.Create(fctx.privileged, len(fctx.Reads), nowMs)
		if evicted != 0 {
			a.stopChild(ctx, evicted)
		}
		if !ok {
			a.respondHere(ctx, m, RespondSessionless)
			return
		}
		pid := a.spawnChild(ctx, NewSession(id, fctx.privileged, nowMs, fctx.Reads))
		ctx.Forward(pid)
	case KindIncremental:
		c, ok := a.children[fctx.sessionID]
		if !ok || c.gen != fctx.gen {
			a.respondHere(ctx, m, respondOrphan)
			return
		}
		ctx.Forward(c.pid)
	}
}

// respondHere answers m with respond's response.
func (a *cacheActor) respondHere(ctx actor.Context, m *FinishFetch, respond func(*Context, []PartitionResult) (Response, error)) {
	resp, err := respond(m.Context, m.Results)
	reply(ctx, &FetchFinished{ID: m.ID, Response: resp, Err: err})
}

// spawnChild starts the actor of a new session.
func (a *cacheActor) spawnChild(ctx actor.Context, s *Session) *actor.PID {
	a.gen++
	gen, parent, cfg := a.gen, ctx.Self(), a.cfg
	stats := a.stats
	pid := ctx.Spawn(actor.PropsFromProducer(func() actor.Actor {
		return &sessionActor{s: s, gen: gen, parent: parent, now: cfg.Now, log: cfg.Logger, stats: stats}
	}))
	a.children[s.ID()] = child{pid: pid, gen: gen}
	a.stats.actors.Add(1)
	return pid
}

// stopChild stops session id's actor after the messages already in its
// mailbox (a request it began is still answered).
func (a *cacheActor) stopChild(ctx actor.Context, id int32) {
	if c, ok := a.children[id]; ok {
		delete(a.children, id)
		ctx.Poison(c.pid)
	}
}

// sessionActor is one fetch session's actor: it owns the Session and
// steps it with the incremental requests (BeginFetch) and the responses
// (FinishFetch) the cache actor hands it, answering the requester
// directly, and reports its size and last use back to the cache actor.
type sessionActor struct {
	s      *Session
	gen    uint64
	parent *actor.PID
	now    func() time.Time
	log    *slog.Logger
	stats  *stats
}

// Receive dispatches one message.
func (a *sessionActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting:
	case *BeginFetch:
		fctx := a.s.Begin(m.Request)
		fctx.gen = a.gen
		reply(ctx, &FetchBegun{ID: m.ID, Context: fctx})
		if fctx.Kind == KindIncremental {
			a.used(ctx, m.Request.NowMs)
		}
	case *FinishFetch:
		nowMs := a.now().UnixMilli()
		resp, err := a.s.Respond(m.Context, nowMs, m.Results)
		reply(ctx, &FetchFinished{ID: m.ID, Response: resp, Err: err})
		a.used(ctx, nowMs)
	default:
		a.stats.unknown.Add(1)
		a.log.Warn("fetch session actor: unknown message", "session", a.s.ID(), "type", fmt.Sprintf("%T", m))
	}
}

// used tells the cache actor the session's size and last use (eviction
// reads them).
func (a *sessionActor) used(ctx actor.Context, nowMs int64) {
	ctx.Send(a.parent, &sessionUsed{id: a.s.ID(), gen: a.gen, size: a.s.Len(), nowMs: nowMs})
}

// reply answers the message's sender, if it has one.
func reply(ctx actor.Context, msg any) {
	if ctx.Sender() != nil {
		ctx.Send(ctx.Sender(), msg)
	}
}

// Client is the facade of a cache actor. Its Send methods never block.
type Client struct {
	system *actor.ActorSystem
	pid    *actor.PID
	stats  *stats
}

// Spawn validates cfg and starts the node's fetch session cache actor in
// system; session actors are its children.
func Spawn(system *actor.ActorSystem, cfg ActorConfig) (*Client, error) {
	slots, err := NewSlots(cfg.Cache, cfg.IDs)
	if err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c := &Client{system: system, stats: &stats{}}
	props := actor.PropsFromProducer(func() actor.Actor {
		return &cacheActor{cfg: cfg, slots: slots, children: map[int32]child{}, stats: c.stats}
	})
	c.pid = system.Root.Spawn(props)
	return c, nil
}

// SendBegin sends BeginFetch{id, req}; FetchBegun goes to replyTo (from
// the cache actor, or from the session's actor for an incremental fetch).
// Requests sent in order from one goroutine are decided in that order.
func (c *Client) SendBegin(id uint64, req *Request, replyTo *actor.PID) {
	c.system.Root.RequestWithCustomSender(c.pid, &BeginFetch{ID: id, Request: req}, replyTo)
}

// SendFinish sends FinishFetch; FetchFinished goes to replyTo.
func (c *Client) SendFinish(id uint64, fctx *Context, results []PartitionResult, replyTo *actor.PID) {
	c.system.Root.RequestWithCustomSender(c.pid, &FinishFetch{ID: id, Context: fctx, Results: results}, replyTo)
}

// Sessions returns the number of live sessions after the cache actor's
// last message.
func (c *Client) Sessions() int { return int(c.stats.sessions.Load()) }

// SessionActors returns the number of session actors alive (a closed or
// evicted session's actor stops after the messages it already holds).
func (c *Client) SessionActors() int { return int(c.stats.actors.Load()) }

// UnknownMessages counts messages the actors did not understand.
func (c *Client) UnknownMessages() uint64 { return c.stats.unknown.Load() }

// Stop closes every session and stops the actors, waiting for them.
func (c *Client) Stop() error {
	c.system.Root.Send(c.pid, &CloseSessions{})
	if err := c.system.Root.StopFuture(c.pid).Wait(); err != nil {
		return fmt.Errorf("fetchsession: stopping %s: %w", c.pid, err)
	}
	return nil
}
