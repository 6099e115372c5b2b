package membership

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// Config says how a node takes part in gossip.
type Config struct {
	// BindAddr is the gossip host:port (UDP and TCP); port 0 picks a free
	// one, and host "" or 0.0.0.0 binds every interface.
	BindAddr string
	// AdvertiseAddr is the gossip address others reach, IP:port; "" means
	// the bound address (memberlist picks a private IP of the host when
	// BindAddr's host is unspecified). Its port 0 means the bound port; a
	// non-zero port needs a non-zero BindAddr port.
	AdvertiseAddr string
	// Join lists seed gossip addresses. It may include this node's own
	// address and nodes not up yet: Start returns at once and a background
	// loop keeps trying to join (backoff from 100 ms to 2 s) until some
	// other member is known, and again whenever this node is alone (all
	// others gone), until Leave or Stop. The own address is recognised as
	// spelled in BindAddr or as Addr returns it; another spelling only
	// costs a useless join attempt now and then.
	Join []string
	// Profile is the memberlist timing profile (Fast in production,
	// Relaxed in tests).
	Profile Profile
	// Meta is what this node gossips about itself; Meta.Incarnation must
	// not be zero (NewIncarnation).
	Meta Meta
	// Logger gets this package's warnings and memberlist's log (at debug
	// level); nil discards both.
	Logger *slog.Logger
	// OnEvent receives membership changes in order, from one goroutine
	// that is not memberlist's; it must not block for long, and must not
	// call Stop (Stop waits for it). May be nil. Events about this node
	// itself are not delivered.
	OnEvent func(Event)
}

// Join loop backoff bounds.
const (
	joinBackoffMin = 100 * time.Millisecond
	joinBackoffMax = 2 * time.Second
)

// Members is this node's membership in the gossip cluster: a running
// memberlist, the table of the other members it reported, and the
// goroutines that deliver events and keep joining.
type Members struct {
	log           *slog.Logger
	ml            *memberlist.Memberlist
	name          string
	addr          string
	seeds         []string
	onEvent       func(Event)
	updateTimeout time.Duration
	origin        time.Time // nowMs counts from here (monotonic)

	// life orders SetMeta's and Leave's memberlist calls before Stop's
	// Shutdown: memberlist panics on a Leave after Shutdown.
	life sync.RWMutex

	mu      sync.Mutex
	meta    Meta
	encoded []byte // meta as gossiped, with the leaving mark once leaving
	leaving bool
	left    bool
	stopped bool
	tab     *table
	pending []Event

	wake   chan struct{} // cap 1: pending has events
	kick   chan struct{} // cap 1: a member failed or left
	stopCh chan struct{}
	wg     sync.WaitGroup
}

// Start starts gossiping on cfg.BindAddr and returns at once; joining the
// seeds happens in the background (Config.Join). Bind errors and invalid
// configs are returned with context.
func Start(cfg Config) (*Members, error) {
	if cfg.Profile.ProbeInterval <= 0 {
		return nil, fmt.Errorf("%w: no timing profile", ErrInvalidConfig)
	}
	if cfg.Meta.Incarnation == ([16]byte{}) {
		return nil, fmt.Errorf("%w: node %d's meta has no incarnation", ErrInvalidConfig, cfg.Meta.NodeID)
	}
	bindHost, bindPort, err := splitAddr(cfg.BindAddr)
	if err != nil {
		return nil, fmt.Errorf("%w: gossip bind address: %w", ErrInvalidConfig, err)
	}
	encoded, err := cfg.Meta.Encode()
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	name := nodeName(cfg.Meta)
	mc := cfg.Profile.Config(name, bindHost, bindPort, nil)
	mc.Logger = newMemberlistLogger(logger)
	if err := setAdvertise(mc, cfg.AdvertiseAddr, bindHost, bindPort); err != nil {
		return nil, err
	}
	m := &Members{
		log:           logger.With("gossip_name", name),
		name:          name,
		onEvent:       cfg.OnEvent,
		updateTimeout: max(2*time.Second, 20*cfg.Profile.GossipInterval),
		origin:        time.Now(),
		meta:          cfg.Meta,
		encoded:       encoded,
		tab:           newTable(name, mc.GossipToTheDeadTime.Milliseconds()),
		wake:          make(chan struct{}, 1),
		kick:          make(chan struct{}, 1),
		stopCh:        make(chan struct{}),
	}
	d := delegate{m}
	mc.Delegate, mc.Events = d, d
	ml, err := memberlist.Create(mc)
	if err != nil {
		return nil, fmt.Errorf("membership: start gossip on %s: %w", cfg.BindAddr, err)
	}
	m.ml = ml
	addr := ml.LocalNode().Address()
	m.mu.Lock() // the delegate, already running, reads it
	m.addr = addr
	m.mu.Unlock()
	for _, s := range cfg.Join {
		if s != addr && s != cfg.BindAddr && s != "" {
			m.seeds = append(m.seeds, s)
		}
	}
	if m.onEvent != nil {
		m.wg.Add(1)
		go m.deliver()
	}
	if len(m.seeds) > 0 {
		m.wg.Add(1)
		go m.joinLoop()
	}
	m.log.Info("membership: gossiping", "addr", m.addr, "profile", cfg.Profile.Name, "seeds", m.seeds)
	return m, nil
}

// splitAddr splits host:port; an empty host is every interface.
func splitAddr(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("port of %q: %w", addr, err)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	return host, int(port), nil
}

// setAdvertise sets memberlist's advertise address from Config.AdvertiseAddr.
func setAdvertise(mc *memberlist.Config, advertise, bindHost string, bindPort int) error {
	if advertise == "" {
		if ip := net.ParseIP(bindHost); ip != nil && ip.IsUnspecified() {
			mc.AdvertiseAddr = "" // memberlist picks a private address
		}
		return nil
	}
	host, port, err := splitAddr(advertise)
	if err != nil {
		return fmt.Errorf("%w: gossip advertise address: %w", ErrInvalidConfig, err)
	}
	if port != 0 && bindPort == 0 {
		return fmt.Errorf("%w: advertise port %d with bind port 0", ErrInvalidConfig, port)
	}
	if port == 0 {
		port = bindPort
	}
	mc.AdvertiseAddr, mc.AdvertisePort = host, port
	return nil
}

// Addr returns the gossip address others reach, host:port.
func (m *Members) Addr() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.addr
}

// Local returns this node as a member: Alive, Left after Leave, Dead
// after Stop without Leave.
func (m *Members) Local() Member {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := Alive
	switch {
	case m.left:
		st = Left
	case m.stopped:
		st = Dead
	}
	return Member{Name: m.name, Addr: m.addr, Meta: m.meta, State: st}
}

// Members returns every known member but this one, in any state, sorted
// by Meta.NodeID, then Name. A member declared dead (or left) stays, with
// that state, for memberlist's GossipToTheDeadTime (30 s) after it was
// declared; then both memberlist and this list forget it. If its process
// comes back within that time (a frozen process resumed, a partition
// healed) it is Joined again under the same name.
func (m *Members) Members() []Member {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tab.members(m.nowMs(), false)
}

// Alive returns the members Alive (or Suspect: memberlist still counts
// them), sorted as Members.
func (m *Members) Alive() []Member {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tab.members(m.nowMs(), true)
}

// DuplicateOf returns the live processes that gossip node id nodeID, this
// one included, when there are two or more of them (two processes started
// with one node id; refusing one is the quorum's job); nil otherwise.
func (m *Members) DuplicateOf(nodeID int32) []Member {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.claimingLocked(nodeID)
}

func (m *Members) claimingLocked(nodeID int32) []Member {
	c := m.tab.claiming(nodeID, m.nowMs())
	if m.meta.NodeID == nodeID && !m.left && !m.stopped {
		c = append([]Member{{Name: m.name, Addr: m.addr, Meta: m.meta, State: Alive}}, c...)
	}
	if len(c) < 2 {
		return nil
	}
	return c
}

// SetMeta changes this node's meta (for instance its broker epoch after
// registration) and gossips it, waiting until memberlist has sent the
// update to its peers (a few gossip intervals; at most 2 s or 20 gossip
// intervals). The node id and incarnation, which make the node's name,
// cannot change. On a timeout the new meta is in effect anyway and
// reaches the others by push/pull at the latest; the error says so.
func (m *Members) SetMeta(meta Meta) error {
	m.life.RLock()
	defer m.life.RUnlock()
	m.mu.Lock()
	switch {
	case m.stopped:
		m.mu.Unlock()
		return ErrStopped
	case m.leaving:
		m.mu.Unlock()
		return ErrLeft
	case meta.NodeID != m.meta.NodeID || meta.Incarnation != m.meta.Incarnation:
		m.mu.Unlock()
		return fmt.Errorf("%w: SetMeta cannot change the node id (%d) or the incarnation", ErrInvalidConfig, m.meta.NodeID)
	}
	b, err := meta.Encode()
	if err != nil {
		m.mu.Unlock()
		return err
	}
	m.meta, m.encoded = meta, b
	m.mu.Unlock()
	if err := m.ml.UpdateNode(m.updateTimeout); err != nil {
		return fmt.Errorf("membership: gossip node %d's new meta: %w", meta.NodeID, err)
	}
	return nil
}

// Leave announces a graceful departure (the SIGTERM path) and waits up to
// timeout for it to spread: first the leaving mark in this node's meta,
// then memberlist's leave message, so others report the node Departed
// rather than Failed. The node stays up (serving gossip, not joining)
// until Stop. A second Leave does nothing.
func (m *Members) Leave(timeout time.Duration) error {
	m.life.RLock()
	defer m.life.RUnlock()
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		return ErrStopped
	}
	if m.leaving {
		m.mu.Unlock()
		return nil
	}
	m.leaving = true
	b, err := encodeMeta(m.meta, true)
	if err == nil {
		m.encoded = b
	}
	m.mu.Unlock()
	deadline := time.Now().Add(timeout)
	var errs []error
	if err != nil {
		errs = append(errs, err) // cannot happen: Encode reserved the room
	} else if err := m.ml.UpdateNode(max(timeout/2, time.Millisecond)); err != nil {
		errs = append(errs, fmt.Errorf("membership: gossip the leaving mark: %w", err))
	}
	if err := m.ml.Leave(max(time.Until(deadline), time.Millisecond)); err != nil {
		errs = append(errs, fmt.Errorf("membership: leave: %w", err))
	}
	m.mu.Lock()
	m.left = true
	m.mu.Unlock()
	m.log.Info("membership: left", "error", errors.Join(errs...))
	return errors.Join(errs...)
}

// Stop shuts memberlist down without leaving: to the others it looks like
// a crash (Failed), unless Leave came first. Events not yet delivered are
// dropped; OnEvent is not called once Stop has returned. Stop waits for a
// join attempt in flight (a dial to an unreachable seed takes up to the
// profile's TCPTimeout). Idempotent.
func (m *Members) Stop() error {
	m.life.Lock()
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		m.life.Unlock()
		return nil
	}
	m.stopped = true
	m.pending = nil
	m.mu.Unlock()
	close(m.stopCh)
	err := m.ml.Shutdown()
	m.life.Unlock()
	m.wg.Wait()
	if err != nil {
		return fmt.Errorf("membership: stop gossip: %w", err)
	}
	return nil
}

// nowMs is the table's clock: monotonic milliseconds since Start.
func (m *Members) nowMs() int64 { return time.Since(m.origin).Milliseconds() }

// enqueueLocked queues ev for OnEvent; m.mu is held.
func (m *Members) enqueueLocked(ev Event) {
	if m.onEvent == nil {
		return
	}
	m.pending = append(m.pending, ev)
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// deliver hands queued events to OnEvent, in order, until Stop.
func (m *Members) deliver() {
	defer m.wg.Done()
	for {
		select {
		case <-m.stopCh:
			return
		case <-m.wake:
		}
		for {
			m.mu.Lock()
			if m.stopped {
				m.mu.Unlock()
				return
			}
			if len(m.pending) == 0 {
				m.pending = nil
				m.mu.Unlock()
				break
			}
			ev := m.pending[0]
			m.pending[0] = Event{}
			m.pending = m.pending[1:]
			m.mu.Unlock()
			m.onEvent(ev)
		}
	}
}
