package membership

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testProfile is the profile of the scenario tests: the relaxed one, so a
// loaded machine running -race never sees a live node declared dead. The
// tests wait on events, never on times.
var testProfile = Relaxed

// waitTimeout bounds every wait of a scenario: generous, since tests
// assert order and correctness, never timing.
const waitTimeout = 60 * time.Second

// recorder is a node's OnEvent: it keeps the events and wakes waiters.
type recorder struct {
	self atomic.Pointer[Members]
	busy atomic.Bool

	mu      sync.Mutex
	events  []Event
	changed chan struct{}
	overlap int // OnEvent calls that overlapped another
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) onEvent(ev Event) {
	if !r.busy.CompareAndSwap(false, true) {
		r.mu.Lock()
		r.overlap++
		r.mu.Unlock()
	}
	defer r.busy.Store(false)
	// Were OnEvent called from memberlist's delegate (with memberlist's
	// or this package's locks held), these would deadlock.
	if m := r.self.Load(); m != nil {
		_ = m.Members()
		_ = m.DuplicateOf(ev.Member.Meta.NodeID)
	}
	r.mu.Lock()
	r.events = append(r.events, ev)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// about returns the kinds of the events about member name, in order.
func (r *recorder) about(name string) []EventKind {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ks []EventKind
	for _, e := range r.events {
		if e.Member.Name == name {
			ks = append(ks, e.Kind)
		}
	}
	return ks
}

// waitFor waits until cond holds over the events so far and returns the
// first event for which it does; cond gets each event in turn.
func (r *recorder) waitFor(t *testing.T, what string, cond func(Event) bool) Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	for {
		r.mu.Lock()
		for _, e := range r.events {
			if cond(e) {
				r.mu.Unlock()
				return e
			}
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("no event %s within %s; events: %v", what, waitTimeout, r.events)
		}
	}
}

// waitEvent waits for an event of kind k about member name.
func (r *recorder) waitEvent(t *testing.T, k EventKind, name string) Event {
	t.Helper()
	return r.waitFor(t, fmt.Sprintf("%v about %s", k, name), func(e Event) bool {
		return e.Kind == k && e.Member.Name == name
	})
}

// testLog is a test's log: every node writes to it, and it is printed
// when the test fails. It outlives the test harmlessly (memberlist's
// timers may log after Stop).
type testLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *testLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func newTestLog(t *testing.T) *testLog {
	l := &testLog{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log:\n%s", l.String())
		}
	})
	return l
}

// embedded is Members under another name, so that a node embedding it
// keeps the Members method.
type embedded = Members

// node is a started Members with its recorder.
type node struct {
	*embedded
	rec *recorder
}

// startNode starts a node with meta on bind, joining join. It is
// stopped when the test ends.
func startNode(t *testing.T, log *testLog, meta Meta, bind string, join []string) (*node, error) {
	t.Helper()
	rec := newRecorder()
	m, err := Start(Config{
		BindAddr: bind,
		Join:     join,
		Profile:  testProfile,
		Meta:     meta,
		Logger:   slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})).With("node", meta.NodeID),
		OnEvent:  rec.onEvent,
	})
	if err != nil {
		return nil, err
	}
	rec.self.Store(m)
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if rec.overlap > 0 {
			t.Errorf("node %s: %d OnEvent calls overlapped", m.name, rec.overlap)
		}
	})
	return &node{m, rec}, nil
}

func mustStart(t *testing.T, log *testLog, meta Meta, bind string, join []string) *node {
	t.Helper()
	n, err := startNode(t, log, meta, bind, join)
	if err != nil {
		t.Fatalf("Start node %d on %s: %v", meta.NodeID, bind, err)
	}
	return n
}

// freeAddr returns a loopback address whose port was free for both TCP
// and UDP a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		u, err := net.ListenPacket("udp", addr)
		l.Close()
		if err == nil {
			u.Close()
			return addr
		}
	}
	t.Fatal("no free port")
	return ""
}

// startCluster starts n nodes (ids 1..n) whose seed lists hold every
// node's address, their own included, in reverse order: node n first,
// when no other is up. A port taken between freeAddr and Start makes it
// start over with fresh ports. It waits until every node has seen every
// other join.
func startCluster(t *testing.T, log *testLog, n int) []*node {
	t.Helper()
	for attempt := 0; ; attempt++ {
		addrs := make([]string, n)
		for i := range addrs {
			addrs[i] = freeAddr(t)
		}
		nodes := make([]*node, n)
		var err error
		for i := n - 1; i >= 0; i-- {
			nodes[i], err = startNode(t, log, testMeta(int32(i+1)), addrs[i], addrs)
			if err != nil {
				break
			}
		}
		if err != nil {
			if attempt < 5 && strings.Contains(err.Error(), "address already in use") {
				for _, nd := range nodes {
					if nd != nil {
						_ = nd.Stop()
					}
				}
				continue
			}
			t.Fatalf("start cluster: %v", err)
		}
		for i, nd := range nodes {
			if nd.Addr() != addrs[i] {
				t.Fatalf("node %d: Addr %s, bound to %s", i+1, nd.Addr(), addrs[i])
			}
		}
		for _, a := range nodes {
			for _, b := range nodes {
				if a != b {
					a.rec.waitEvent(t, Joined, b.Local().Name)
				}
			}
		}
		return nodes
	}
}

// states renders members as "name:state".
func states(ms []Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name + ":" + m.State.String()
	}
	return out
}
