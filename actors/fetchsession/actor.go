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
	// Logger receives the actor's warnings; nil means slog.Default().
	Logger *slog.Logger
}

// cacheActor is the thin shell that owns the node's Cache: every session's
// NewContext and Respond run in its mailbox, in order (duty 1). It never
// waits: the reads and the long poll between BeginFetch and FinishFetch run
// in the requester's goroutine.
type cacheActor struct {
	cache    *Cache
	now      func() time.Time
	log      *slog.Logger
	sessions *atomic.Int64
	unknown  *atomic.Uint64
}

// Receive dispatches one message.
func (a *cacheActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting:
	case *BeginFetch:
		req := *m.Request
		req.NowMs = a.now().UnixMilli()
		c := a.cache.NewContext(&req)
		a.reply(ctx, &FetchBegun{ID: m.ID, Context: c})
	case *FinishFetch:
		resp, err := a.cache.Respond(m.Context, a.now().UnixMilli(), m.Results)
		a.reply(ctx, &FetchFinished{ID: m.ID, Response: resp, Err: err})
	case *CloseSessions:
		for _, id := range a.ids() {
			a.cache.Remove(id)
		}
	default:
		a.unknown.Add(1)
		a.log.Warn("fetch session actor: unknown message", "type", fmt.Sprintf("%T", m))
	}
	a.sessions.Store(int64(a.cache.Len()))
}

func (a *cacheActor) ids() []int32 {
	ids := make([]int32, 0, len(a.cache.sessions))
	for id := range a.cache.sessions {
		ids = append(ids, id)
	}
	return ids
}

func (a *cacheActor) reply(ctx actor.Context, msg any) {
	if ctx.Sender() != nil {
		ctx.Send(ctx.Sender(), msg)
	}
}

// Client is the facade of a cache actor. Its Send methods never block.
type Client struct {
	system   *actor.ActorSystem
	pid      *actor.PID
	sessions *atomic.Int64
	unknown  *atomic.Uint64
}

// Spawn validates cfg and starts the node's fetch session cache actor in
// system.
func Spawn(system *actor.ActorSystem, cfg ActorConfig) (*Client, error) {
	cache, err := NewCache(cfg.Cache, cfg.IDs)
	if err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c := &Client{system: system, sessions: &atomic.Int64{}, unknown: &atomic.Uint64{}}
	props := actor.PropsFromProducer(func() actor.Actor {
		return &cacheActor{cache: cache, now: cfg.Now, log: cfg.Logger, sessions: c.sessions, unknown: c.unknown}
	})
	c.pid = system.Root.Spawn(props)
	return c, nil
}

// SendBegin sends BeginFetch{id, req}; FetchBegun goes to replyTo.
// Requests sent in order from one goroutine are decided in that order.
func (c *Client) SendBegin(id uint64, req *Request, replyTo *actor.PID) {
	c.system.Root.RequestWithCustomSender(c.pid, &BeginFetch{ID: id, Request: req}, replyTo)
}

// SendFinish sends FinishFetch; FetchFinished goes to replyTo.
func (c *Client) SendFinish(id uint64, fctx *Context, results []PartitionResult, replyTo *actor.PID) {
	c.system.Root.RequestWithCustomSender(c.pid, &FinishFetch{ID: id, Context: fctx, Results: results}, replyTo)
}

// Sessions returns the number of live sessions after the last message.
func (c *Client) Sessions() int { return int(c.sessions.Load()) }

// UnknownMessages counts messages the actor did not understand.
func (c *Client) UnknownMessages() uint64 { return c.unknown.Load() }

// Stop closes every session and stops the actor, waiting for it.
func (c *Client) Stop() error {
	c.system.Root.Send(c.pid, &CloseSessions{})
	if err := c.system.Root.StopFuture(c.pid).Wait(); err != nil {
		return fmt.Errorf("fetchsession: stopping %s: %w", c.pid, err)
	}
	return nil
}
