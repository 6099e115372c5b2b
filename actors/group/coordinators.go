package group

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// stopWait bounds Coordinators.Stop's wait for its actors.
const stopWait = 10 * time.Second

// Coordinators is a node's group coordinators: one per __consumer_offsets
// partition this node leads. The node loads and unloads them as the
// metadata image moves leadership (Load, Unload, from the goroutine that
// applies the image; neither blocks), ticks them from its ticker (Tick)
// and stops them on shutdown (Stop). The wire layer finds them with Get
// and All. Safe for concurrent use.
type Coordinators struct {
	system *actor.ActorSystem
	cfg    ShellConfig

	loaders sync.WaitGroup

	mu      sync.RWMutex
	m       map[int32]*Coordinator
	leaving []*Coordinator // unloaded, perhaps not stopped yet
	stopped bool
}

// Coordinator is the coordinator of one __consumer_offsets partition,
// as its callers see it: send it Routes and ListGroups.
type Coordinator struct {
	system      *actor.ActorSystem
	pid         *actor.PID
	partition   int32
	leaderEpoch int32
	p           Partition
	done        chan struct{}
}

// NewCoordinators returns a node's empty set of coordinators.
func NewCoordinators(system *actor.ActorSystem, cfg ShellConfig) (*Coordinators, error) {
	if system == nil {
		return nil, fmt.Errorf("%w: no actor system", ErrInvalidConfig)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Coordinators{system: system, cfg: cfg, m: map[int32]*Coordinator{}}, nil
}

// Load starts the coordinator of partition, led here at leaderEpoch by
// the replica p: it answers COORDINATOR_LOAD_IN_PROGRESS until it has read
// the partition, then serves its groups. A coordinator already running for
// the partition at the same epoch and replica is kept; one at another is
// unloaded first. Load returns at once.
func (c *Coordinators) Load(partition int32, p Partition, leaderEpoch int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	if old := c.m[partition]; old != nil {
		if old.leaderEpoch == leaderEpoch && old.p == p {
			return
		}
		c.unloadLocked(old)
	}
	co := &Coordinator{system: c.system, partition: partition, leaderEpoch: leaderEpoch, p: p, done: make(chan struct{})}
	mg := &manager{
		cfg: &c.cfg, partition: partition, epoch: leaderEpoch, p: p, loaders: &c.loaders, done: co.done,
		log: c.cfg.Logger.With("consumer_offsets_partition", partition), groups: map[string]*groupRef{},
	}
	co.pid = c.system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return mg }))
	c.m[partition] = co
}

// TopicsDeleted tells every coordinator's groups that topics were
// deleted: their committed offsets are removed, with tombstones. It
// returns at once.
func (c *Coordinators) TopicsDeleted(topics []string) {
	if len(topics) == 0 {
		return
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, co := range c.m {
		c.system.Root.Send(co.pid, &TopicsDeleted{Topics: slices.Clone(topics)})
	}
}

// Unload unloads the coordinator of partition, if there is one: its
// waiting requests get NOT_COORDINATOR, and so does every request after.
// It returns at once.
func (c *Coordinators) Unload(partition int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if co := c.m[partition]; co != nil {
		c.unloadLocked(co)
	}
}

// unloadLocked unloads co; c.mu is held.
func (c *Coordinators) unloadLocked(co *Coordinator) {
	delete(c.m, co.partition)
	c.system.Root.Send(co.pid, &unloadCoordinator{})
	live := c.leaving[:0]
	for _, l := range c.leaving {
		select {
		case <-l.done:
		default:
			live = append(live, l)
		}
	}
	c.leaving = append(live, co)
}

// Get returns the coordinator of partition, or nil when this node does
// not lead it.
func (c *Coordinators) Get(partition int32) *Coordinator {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[partition]
}

// All returns every coordinator, in no order.
func (c *Coordinators) All() []*Coordinator {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*Coordinator, 0, len(c.m))
	for _, co := range c.m {
		out = append(out, co)
	}
	return out
}

// Tick sends the clock's reading to every coordinator; each passes it to
// the groups with a deadline due (sessions, rebalances, offset expiry).
func (c *Coordinators) Tick() {
	now := c.cfg.Now().UnixMilli()
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, co := range c.m {
		c.system.Root.Send(co.pid, &Tick{NowMs: now})
	}
}

// Stop unloads every coordinator and waits (a bounded time) until their
// actors and loaders have stopped. Later Loads are ignored.
func (c *Coordinators) Stop() error {
	c.mu.Lock()
	c.stopped = true
	for _, co := range c.m {
		c.unloadLocked(co)
	}
	wait := c.leaving
	c.leaving = nil
	c.mu.Unlock()
	deadline := time.After(stopWait)
	for _, co := range wait {
		select {
		case <-co.done:
		case <-deadline:
			return fmt.Errorf("group: coordinator of partition %d did not stop within %v", co.partition, stopWait)
		}
	}
	c.loaders.Wait()
	return nil
}

// Partition returns the __consumer_offsets partition the coordinator
// serves.
func (co *Coordinator) Partition() int32 { return co.partition }

// LeaderEpoch returns the leader epoch it was loaded at.
func (co *Coordinator) LeaderEpoch() int32 { return co.leaderEpoch }

// Send sends m without blocking; the RouteResult goes to replyTo (or a
// *actor.DeadLetterResponse if the coordinator has stopped). Routes sent
// in order from one goroutine are stepped in that order.
func (co *Coordinator) Send(m *Route, replyTo *actor.PID) {
	co.system.Root.RequestWithCustomSender(co.pid, m, replyTo)
}

// SendListGroups sends m; the GroupsListed goes to replyTo.
func (co *Coordinator) SendListGroups(m *ListGroups, replyTo *actor.PID) {
	co.system.Root.RequestWithCustomSender(co.pid, m, replyTo)
}

// PID returns the coordinator actor's PID. Watch it to learn that the
// coordinator stopped: the *actor.DeadLetterResponse that answers a
// request it never got names no target.
func (co *Coordinator) PID() *actor.PID { return co.pid }
