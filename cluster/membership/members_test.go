package membership

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestJoinInReverseOrder: three nodes with one seed list holding all
// three, started last to first, all see each other with the right meta.
func TestJoinInReverseOrder(t *testing.T) {
	log := newTestLog(t)
	nodes := startCluster(t, log, 3)
	for _, a := range nodes {
		var want []Member
		for _, b := range nodes {
			if b != a {
				want = append(want, b.Local())
			}
		}
		if got := a.Members(); !slices.Equal(got, want) {
			t.Errorf("node %d Members:\n got %+v\nwant %+v", a.Local().Meta.NodeID, got, want)
		}
		if got := a.Alive(); !slices.Equal(got, want) {
			t.Errorf("node %d Alive: %+v", a.Local().Meta.NodeID, got)
		}
		for _, b := range want {
			if ks := a.rec.about(b.Name); !slices.Equal(ks, []EventKind{Joined}) {
				t.Errorf("node %d: events about %s: %v", a.Local().Meta.NodeID, b.Name, ks)
			}
		}
		if ks := a.rec.about(a.Local().Name); len(ks) != 0 {
			t.Errorf("node %d got events about itself: %v", a.Local().Meta.NodeID, ks)
		}
		if l := a.Local(); l.State != Alive || l.Addr != a.Addr() || l.Name != nodeName(l.Meta) {
			t.Errorf("Local: %+v", l)
		}
	}
}

// TestSetMeta: a new broker epoch reaches the others as Updated.
func TestSetMeta(t *testing.T) {
	log := newTestLog(t)
	nodes := startCluster(t, log, 3)
	n1 := nodes[0]
	meta := n1.Local().Meta
	meta.BrokerEpoch = 7
	if err := n1.SetMeta(meta); err != nil {
		t.Fatalf("SetMeta: %v", err)
	}
	if got := n1.Local().Meta; got != meta {
		t.Fatalf("Local meta %+v", got)
	}
	for _, o := range nodes[1:] {
		ev := o.rec.waitEvent(t, Updated, n1.Local().Name)
		if ev.Member.Meta != meta || ev.Member.State != Alive {
			t.Fatalf("Updated: %+v, want meta %+v", ev.Member, meta)
		}
		if ms := o.Members(); ms[0].Name != n1.Local().Name || ms[0].Meta.BrokerEpoch != 7 {
			t.Fatalf("Members after the update: %+v", ms)
		}
	}
	bad := meta
	bad.NodeID = 9
	if err := n1.SetMeta(bad); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("SetMeta with another node id: %v", err)
	}
	bad = meta
	bad.Incarnation = NewIncarnation()
	if err := n1.SetMeta(bad); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("SetMeta with another incarnation: %v", err)
	}
}

// TestStopIsFailed: a node stopped without Leave is Failed for the others.
func TestStopIsFailed(t *testing.T) {
	log := newTestLog(t)
	nodes := startCluster(t, log, 3)
	n3 := nodes[2]
	name := n3.Local().Name
	if err := n3.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := n3.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if st := n3.Local().State; st != Dead {
		t.Fatalf("stopped node's Local state %v", st)
	}
	if err := n3.SetMeta(n3.Local().Meta); !errors.Is(err, ErrStopped) {
		t.Fatalf("SetMeta after Stop: %v", err)
	}
	if err := n3.Leave(time.Second); !errors.Is(err, ErrStopped) {
		t.Fatalf("Leave after Stop: %v", err)
	}
	for _, o := range nodes[:2] {
		ev := o.rec.waitFor(t, "gone about n3", func(e Event) bool {
			return e.Member.Name == name && (e.Kind == Failed || e.Kind == Departed)
		})
		if ev.Kind != Failed || ev.Member.State != Dead {
			t.Fatalf("node %d: %v %v, want failed and dead", o.Local().Meta.NodeID, ev.Kind, ev.Member.State)
		}
		if ks := o.rec.about(name); !slices.Equal(ks, []EventKind{Joined, Failed}) {
			t.Fatalf("events about n3: %v", ks)
		}
		other := nodes[1]
		if o == other {
			other = nodes[0]
		}
		want := []string{other.Local().Name + ":alive", name + ":dead"}
		if got := states(o.Members()); !slices.Equal(got, want) {
			t.Fatalf("Members %v, want %v", got, want)
		}
		if got := states(o.Alive()); !slices.Equal(got, want[:1]) {
			t.Fatalf("Alive %v", got)
		}
	}
}

// TestLeaveIsDeparted: a node that leaves is Departed (state Left) for the
// others, never Failed.
func TestLeaveIsDeparted(t *testing.T) {
	log := newTestLog(t)
	nodes := startCluster(t, log, 3)
	n3 := nodes[2]
	name := n3.Local().Name
	if err := n3.Leave(10 * time.Second); err != nil {
		t.Fatalf("Leave: %v", err)
	}
	if err := n3.Leave(time.Second); err != nil {
		t.Fatalf("second Leave: %v", err)
	}
	if st := n3.Local().State; st != Left {
		t.Fatalf("Local state after Leave %v", st)
	}
	if err := n3.SetMeta(n3.Local().Meta); !errors.Is(err, ErrLeft) {
		t.Fatalf("SetMeta after Leave: %v", err)
	}
	for _, o := range nodes[:2] {
		ev := o.rec.waitFor(t, "gone about n3", func(e Event) bool {
			return e.Member.Name == name && (e.Kind == Failed || e.Kind == Departed)
		})
		if ev.Kind != Departed || ev.Member.State != Left || ev.Member.Meta != n3.Local().Meta {
			t.Fatalf("node %d: %v %+v, want left", o.Local().Meta.NodeID, ev.Kind, ev.Member)
		}
		if ks := o.rec.about(name); !slices.Equal(ks, []EventKind{Joined, Departed}) {
			t.Fatalf("events about n3: %v", ks)
		}
		if got := states(o.Members()); !slices.Contains(got, name+":left") {
			t.Fatalf("Members %v", got)
		}
	}
	if err := n3.Stop(); err != nil {
		t.Fatalf("Stop after Leave: %v", err)
	}
}

// TestRestartBesideDeadPredecessor: a process restarted with the same node
// id (new incarnation, new port) joins while its predecessor is still
// listed dead; a second live process with that id shows in DuplicateOf.
func TestRestartBesideDeadPredecessor(t *testing.T) {
	log := newTestLog(t)
	nodes := startCluster(t, log, 3)
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]
	old := n2.Local()
	if err := n2.Stop(); err != nil {
		t.Fatal(err)
	}
	n1.rec.waitEvent(t, Failed, old.Name)

	meta := testMeta(2)
	n2b := mustStart(t, log, meta, "127.0.0.1:0", []string{n1.Addr()})
	if n2b.Addr() == old.Addr {
		t.Fatalf("restarted node on the old port %s", old.Addr)
	}
	n1.rec.waitEvent(t, Joined, n2b.Local().Name)
	n3.rec.waitEvent(t, Joined, n2b.Local().Name)

	names := []string{old.Name, n2b.Local().Name}
	slices.Sort(names)
	var want []string
	for _, nm := range names {
		st := ":alive"
		if nm == old.Name {
			st = ":dead"
		}
		want = append(want, nm+st)
	}
	want = append(want, n3.Local().Name+":alive")
	if got := states(n1.Members()); !slices.Equal(got, want) {
		t.Fatalf("Members %v, want %v", got, want)
	}
	wantAlive := []string{n2b.Local().Name + ":alive", n3.Local().Name + ":alive"}
	if got := states(n1.Alive()); !slices.Equal(got, wantAlive) {
		t.Fatalf("Alive %v, want %v", got, wantAlive)
	}
	if d := n1.DuplicateOf(2); d != nil {
		t.Fatalf("DuplicateOf(2) with one live process: %+v", d)
	}

	// A second live process with node id 2.
	n2c := mustStart(t, log, testMeta(2), "127.0.0.1:0", []string{n1.Addr()})
	n1.rec.waitEvent(t, Joined, n2c.Local().Name)
	dup := n1.DuplicateOf(2)
	if len(dup) != 2 || !slices.ContainsFunc(dup, func(m Member) bool { return m.Name == n2b.Local().Name }) ||
		!slices.ContainsFunc(dup, func(m Member) bool { return m.Name == n2c.Local().Name }) {
		t.Fatalf("DuplicateOf(2) = %+v", dup)
	}
	n2b.rec.waitEvent(t, Joined, n2c.Local().Name)
	if dup := n2b.DuplicateOf(2); len(dup) != 2 || dup[0].Name != n2b.Local().Name {
		t.Fatalf("DuplicateOf(2) on the duplicate itself = %+v", dup)
	}
	if !strings.Contains(log.String(), "live processes with one node id") {
		t.Fatal("no warning about the duplicate node id")
	}
}

// TestStartErrors: meta too large, no incarnation, no profile, a taken
// port, a bad address.
func TestStartErrors(t *testing.T) {
	log := newTestLog(t)
	big := testMeta(1)
	big.Rack = strings.Repeat("r", 600)
	if _, err := startNode(t, log, big, "127.0.0.1:0", nil); !errors.Is(err, ErrMetaTooLarge) {
		t.Fatalf("Start with a large meta: %v", err)
	}
	if _, err := startNode(t, log, Meta{NodeID: 1}, "127.0.0.1:0", nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Start without an incarnation: %v", err)
	}
	if _, err := Start(Config{BindAddr: "127.0.0.1:0", Meta: testMeta(1)}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Start without a profile: %v", err)
	}
	for _, a := range []string{"127.0.0.1", "127.0.0.1:x", "127.0.0.1:70000"} {
		if _, err := startNode(t, log, testMeta(1), a, nil); !errors.Is(err, ErrInvalidConfig) {
			t.Fatalf("Start on %q: %v", a, err)
		}
	}
	if _, err := Start(Config{BindAddr: "127.0.0.1:0", AdvertiseAddr: "127.0.0.1:7000", Profile: testProfile, Meta: testMeta(1)}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("advertise port with bind port 0: %v", err)
	}
	n := mustStart(t, log, testMeta(1), "127.0.0.1:0", nil)
	_, err := startNode(t, log, testMeta(2), n.Addr(), nil)
	if err == nil || !strings.Contains(err.Error(), n.Addr()) {
		t.Fatalf("Start on a taken port: %v", err)
	}

	meta := n.Local().Meta
	big = meta
	big.Rack = strings.Repeat("r", 600)
	if err := n.SetMeta(big); !errors.Is(err, ErrMetaTooLarge) {
		t.Fatalf("SetMeta with a large meta: %v", err)
	}
	if got := n.Local().Meta; got != meta {
		t.Fatalf("meta changed by a refused SetMeta: %+v", got)
	}
	// Alone: SetMeta and Leave do not wait for peers.
	meta.BrokerEpoch = 3
	if err := n.SetMeta(meta); err != nil {
		t.Fatalf("SetMeta alone: %v", err)
	}
	if err := n.Leave(time.Second); err != nil {
		t.Fatalf("Leave alone: %v", err)
	}
}

// TestJoinLoop: a node whose only seed comes up a second later joins it;
// when that seed dies and another process comes up on its address, the
// node, alone again, joins that one too.
func TestJoinLoop(t *testing.T) {
	log := newTestLog(t)
	seedAddr := freeAddr(t)
	a := mustStart(t, log, testMeta(1), "127.0.0.1:0", []string{seedAddr})
	time.Sleep(time.Second) // the scenario: the seed is not up yet
	if ms := a.Members(); len(ms) != 0 {
		t.Fatalf("members before the seed is up: %+v", ms)
	}
	seed := startOn(t, log, testMeta(2), seedAddr)
	a.rec.waitEvent(t, Joined, seed.Local().Name)
	seed.rec.waitEvent(t, Joined, a.Local().Name)

	if err := seed.Stop(); err != nil {
		t.Fatal(err)
	}
	a.rec.waitEvent(t, Failed, seed.Local().Name)
	seed2 := startOn(t, log, testMeta(2), seedAddr)
	a.rec.waitEvent(t, Joined, seed2.Local().Name)
	if got := states(a.Alive()); !slices.Equal(got, []string{seed2.Local().Name + ":alive"}) {
		t.Fatalf("Alive %v", got)
	}
}

// startOn starts a node without seeds on addr, retrying while the port is
// still taken (by another test's socket, or the previous process there).
func startOn(t *testing.T, log *testLog, meta Meta, addr string) *node {
	t.Helper()
	for i := 0; ; i++ {
		n, err := startNode(t, log, meta, addr, nil)
		if err == nil {
			return n
		}
		if i == 50 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("Start on %s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
