package replicafetcher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/partition"
)

// errStopped fails a Fetch whose fetcher stopped.
var errStopped = errors.New("replicafetcher: fetcher stopped")

// Fetcher is the facade of one replica fetcher actor: it fetches, from
// its leader node, every partition this node follows from it. Its methods
// never block on the actor, except Stop.
type Fetcher struct {
	system *actor.ActorSystem
	pid    *actor.PID
	shared *shared
	// err is the config error that kept the actor from starting.
	err error
}

// shared is what the actor and the facade share: the published positions
// and the followed partitions, which a restarted actor follows again.
type shared struct {
	positions atomic.Pointer[[]Position]

	mu       sync.Mutex
	followed map[PartitionRef]Followed
}

// Spawn starts a fetcher actor in system. A Config that cannot work (no
// Dial, a leader equal to NodeID, negative settings) is logged; the
// Fetcher then does nothing and Stop returns the error.
func Spawn(system *actor.ActorSystem, cfg Config) *Fetcher {
	cfg = cfg.withDefaults()
	f := &Fetcher{system: system, shared: &shared{followed: map[PartitionRef]Followed{}}}
	if err := cfg.validate(); err != nil {
		cfg.Logger.Error("replicafetcher: not started", "err", err)
		f.err = err
		return f
	}
	sh := f.shared
	f.pid = system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor {
		return &fetcherActor{cfg: cfg, shared: sh,
			log: cfg.Logger.With("node", cfg.NodeID, "leader", cfg.Leader)}
	}))
	return f
}

// Follow adds or updates partitions (see the Follow message). Send it
// after the follower replicas got their BecomeFollower, so that the
// fetcher's first message to each finds it following at that epoch.
func (f *Fetcher) Follow(p []Followed) {
	if f.pid != nil {
		f.system.Root.Send(f.pid, &Follow{Partitions: slices.Clone(p)})
	}
}

// Unfollow removes partitions (see the Unfollow message).
func (f *Fetcher) Unfollow(p []PartitionRef) {
	if f.pid != nil {
		f.system.Root.Send(f.pid, &Unfollow{Partitions: slices.Clone(p)})
	}
}

// Stop stops the actor, cancels the Fetch in flight, closes the
// connection and waits for all of it. Never call it from an actor's
// Receive.
func (f *Fetcher) Stop() error {
	if f.pid == nil {
		return f.err
	}
	if err := f.system.Root.StopFuture(f.pid).Wait(); err != nil {
		return fmt.Errorf("replicafetcher: stopping %s: %w", f.pid, err)
	}
	return nil
}

// PID is the actor's PID (follower replicas answer it).
func (f *Fetcher) PID() *actor.PID { return f.pid }

// Positions returns the followed partitions' positions as last
// published, by topic id and partition: after each step that settles a
// round of answers, not after every answer.
func (f *Fetcher) Positions() []Position {
	if p := f.shared.positions.Load(); p != nil {
		return slices.Clone(*p)
	}
	return nil
}

// fetcherActor is the thin shell around State: it reads the follower
// replicas' statuses for Follow, sends the commands, runs each Fetch on a
// goroutine of its own (never in the mailbox) that reports back with
// fetchDone, and arms one timer for the State's next wake-up.
type fetcherActor struct {
	cfg    Config
	shared *shared
	log    *slog.Logger
	st     *State
	system *actor.ActorSystem
	self   *actor.PID
	// ctx ends the Fetch in flight when the actor stops.
	ctx    context.Context
	cancel context.CancelFunc
	conn   *connHolder
	wg     sync.WaitGroup
	// timer sends wake at timerAt (ms; 0: not armed).
	timer   *time.Timer
	timerAt int64
	// failing is set from a failed Fetch to the next success, so that a
	// leader that is down is logged once, not once per backoff.
	failing bool
	// inflight ends the Fetch in flight (its id) when it is abandoned;
	// abandoned holds the ids whose outcome is to be dropped.
	inflightID     uint64
	inflightCancel context.CancelFunc
	abandoned      map[uint64]bool
}

// Receive dispatches one message.
func (a *fetcherActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.start(ctx)
	case *actor.Stopping, *actor.Restarting:
		a.shutdown()
	case *Follow:
		a.onFollow(m)
	case *Unfollow:
		a.shared.mu.Lock()
		for _, ref := range m.Partitions {
			delete(a.shared.followed, ref)
		}
		a.shared.mu.Unlock()
		a.perform(a.st.Unfollow(m.Partitions, nowMs()))
	case *partition.ReplicaPosition:
		a.perform(a.st.OnPosition(m, nowMs()))
	case *fetchDone:
		a.onFetchDone(m)
	case *wake:
		a.timerAt = 0
		a.perform(a.st.OnTick(nowMs()))
	}
}

// start begins an incarnation; after a restart it follows again what the
// previous one followed.
func (a *fetcherActor) start(ctx actor.Context) {
	a.system, a.self = ctx.ActorSystem(), ctx.Self()
	a.st = NewState(a.cfg)
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.conn = &connHolder{dial: a.cfg.Dial, leader: a.cfg.Leader}
	a.shared.mu.Lock()
	again := make([]Followed, 0, len(a.shared.followed))
	for _, f := range a.shared.followed {
		again = append(again, f)
	}
	a.shared.mu.Unlock()
	if len(again) > 0 {
		a.onFollow(&Follow{Partitions: again})
	}
	a.publish()
}

// shutdown ends the Fetch in flight and closes the connection.
func (a *fetcherActor) shutdown() {
	if a.cancel == nil {
		return
	}
	a.cancel()
	if a.timer != nil {
		a.timer.Stop()
		a.timer, a.timerAt = nil, 0
	}
	a.wg.Wait() // prompt: the Fetch and the dial honour ctx
	a.conn.close()
}

// onFollow reads each replica's status and steps the Follow.
func (a *fetcherActor) onFollow(m *Follow) {
	items := make([]FollowItem, 0, len(m.Partitions))
	a.shared.mu.Lock()
	for _, f := range m.Partitions {
		if f.Replica == nil {
			a.log.Warn("replicafetcher: follow without a replica ignored", "topic", f.Topic, "partition", f.Partition)
			continue
		}
		if old, ok := a.shared.followed[f.Ref()]; !ok || f.LeaderEpoch >= old.LeaderEpoch {
			a.shared.followed[f.Ref()] = f
		}
		items = append(items, FollowItem{Followed: f, Status: f.Replica.Status()})
	}
	a.shared.mu.Unlock()
	a.perform(a.st.Follow(items, nowMs()))
}

// onFetchDone steps a Fetch's outcome.
func (a *fetcherActor) onFetchDone(m *fetchDone) {
	if a.inflightID == m.id {
		a.inflightID, a.inflightCancel = 0, nil
	}
	if a.abandoned[m.id] {
		delete(a.abandoned, m.id)
		return
	}
	now := nowMs()
	if m.err != nil {
		if !a.failing {
			a.log.Warn("replicafetcher: fetch failed; retrying after the backoff", "backoff_ms", a.cfg.BackoffMs, "err", m.err)
		} else {
			a.log.Debug("replicafetcher: fetch failed again", "err", m.err)
		}
		a.failing = true
		a.perform(a.st.OnFetchError(m.id, m.err, now))
		return
	}
	if a.failing {
		a.log.Info("replicafetcher: fetching again")
		a.failing = false
	}
	a.perform(a.st.OnFetchResponse(m.id, m.resp, now))
}

// perform carries out one step's Output.
func (a *fetcherActor) perform(out Output) {
	for _, c := range out.Commands {
		c.Send(a.self)
	}
	if out.Abandon != 0 {
		a.abandon(out.Abandon)
	}
	if out.Fetch != nil {
		a.startFetch(out.Fetch)
	}
	a.arm(out.WakeAtMs)
	if a.st.Settled() {
		a.publish()
	}
}

// abandon ends the Fetch with id in flight: its context first (so that
// its goroutine takes the closed connection for the end it asked for, not
// a stale connection to retry), then its connection, which the next
// Fetch does not share; its outcome is dropped when it comes.
func (a *fetcherActor) abandon(id uint64) {
	if a.inflightID != id || a.inflightCancel == nil {
		return
	}
	if a.abandoned == nil {
		a.abandoned = map[uint64]bool{}
	}
	a.abandoned[id] = true
	a.inflightCancel()
	a.inflightID, a.inflightCancel = 0, nil
	a.conn.reset()
}

// startFetch sends the Fetch on its own goroutine, which reports back.
func (a *fetcherActor) startFetch(fr *FetchRequest) {
	ctx, cancel := context.WithTimeout(a.ctx, a.cfg.RequestTimeout)
	a.inflightID, a.inflightCancel = fr.ID, cancel
	system, self, conn := a.system, a.self, a.conn
	a.wg.Go(func() {
		defer cancel()
		resp, err := conn.fetch(ctx, fr.Request)
		system.Root.Send(self, &fetchDone{id: fr.ID, resp: resp, err: err})
	})
}

// arm sets the timer to send wake at atMs (0: disarm).
func (a *fetcherActor) arm(atMs int64) {
	if atMs == a.timerAt {
		return
	}
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
	a.timerAt = atMs
	if atMs == 0 {
		return
	}
	d := time.Duration(atMs-nowMs()+1) * time.Millisecond
	system, self := a.system, a.self
	a.timer = time.AfterFunc(max(d, 0), func() { system.Root.Send(self, &wake{}) })
}

// publish swaps in the current positions.
func (a *fetcherActor) publish() {
	ps := a.st.Positions()
	a.shared.positions.Store(&ps)
}

// nowMs is the wall clock in milliseconds.
func nowMs() int64 { return time.Now().UnixMilli() }

// connHolder is the connection to the leader, dialed on first use and
// again after a failure. Only one Fetch uses it at a time; close may come
// from the actor meanwhile.
type connHolder struct {
	dial   Dialer
	leader int32

	mu     sync.Mutex
	conn   Conn
	closed bool
}

// fetch sends req and returns its response; any failure closes the
// connection, so the next fetch dials again. A connection kept from an
// earlier fetch may have been closed by the other side meanwhile (the
// leader's process restarted while this fetcher had nothing to fetch from
// it): a failure on it is retried at once on a new connection, once,
// rather than after the fetcher's backoff (a Fetch only reads).
func (h *connHolder) fetch(ctx context.Context, req *kmsg.FetchRequest) (*kmsg.FetchResponse, error) {
	c, fresh, err := h.get(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := c.Request(ctx, req)
	if err != nil && !fresh && ctx.Err() == nil {
		h.drop(c)
		if c, _, err = h.get(ctx); err != nil {
			return nil, err
		}
		resp, err = c.Request(ctx, req)
	}
	if err != nil {
		h.drop(c)
		return nil, fmt.Errorf("replicafetcher: fetch from leader %d: %w", h.leader, err)
	}
	fr, ok := resp.(*kmsg.FetchResponse)
	if !ok {
		h.drop(c)
		return nil, fmt.Errorf("replicafetcher: fetch from leader %d answered with %T", h.leader, resp)
	}
	return fr, nil
}

// get returns the connection, dialing it if there is none; fresh is set
// when it was dialed for this call.
func (h *connHolder) get(ctx context.Context) (c Conn, fresh bool, err error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, false, errStopped
	}
	if c := h.conn; c != nil {
		h.mu.Unlock()
		return c, false, nil
	}
	h.mu.Unlock()
	c, err = h.dial(ctx, h.leader)
	if err == nil && c == nil {
		err = errors.New("the dialer returned no connection")
	}
	if err != nil {
		return nil, false, fmt.Errorf("replicafetcher: dialing leader %d: %w", h.leader, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		_ = c.Close()
		return nil, false, errStopped
	}
	if err := ctx.Err(); err != nil {
		// Abandoned while dialing: the next fetch dials its own.
		_ = c.Close()
		return nil, false, fmt.Errorf("replicafetcher: dialing leader %d: %w", h.leader, err)
	}
	h.conn = c
	return c, true, nil
}

// drop closes c and forgets it.
func (h *connHolder) drop(c Conn) {
	h.mu.Lock()
	if h.conn == c {
		h.conn = nil
	}
	h.mu.Unlock()
	_ = c.Close()
}

// reset closes the connection; the next fetch dials again.
func (h *connHolder) reset() {
	h.mu.Lock()
	c := h.conn
	h.conn = nil
	h.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// close closes the connection for good.
func (h *connHolder) close() {
	h.mu.Lock()
	c := h.conn
	h.conn, h.closed = nil, true
	h.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}
