package membership

import (
	"slices"
	"testing"
)

// step is one memberlist callback fed to a table, and what it must yield.
type step struct {
	at      int64
	gone    bool // NotifyLeave, else NotifyJoin/NotifyUpdate
	name    string
	meta    Meta
	leaving bool
	want    *EventKind // nil: no event
	// after the step:
	members []string // Members(): "name:state"
	alive   []string // Alive(): names
}

func kind(k EventKind) *EventKind { return &k }

func TestTable(t *testing.T) {
	m2a := Meta{NodeID: 2, Incarnation: [16]byte{0xa}}
	m2b := Meta{NodeID: 2, Incarnation: [16]byte{0xb}}
	m3 := Meta{NodeID: 3, Incarnation: [16]byte{0xc}}
	m3e := m3
	m3e.BrokerEpoch = 9
	self := Meta{NodeID: 1, Incarnation: [16]byte{1}}
	const reap = 30_000
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"self is never a member", []step{
			{name: "self", meta: self, members: []string{}},
			{gone: true, name: "self", meta: self, members: []string{}},
		}},
		{"join, update, no-op update, fail", []step{
			{name: "3", meta: m3, want: kind(Joined), members: []string{"3:alive"}, alive: []string{"3"}},
			{name: "3", meta: m3e, want: kind(Updated), members: []string{"3:alive"}},
			{name: "3", meta: m3e, leaving: true}, // only the leaving mark changed
			{at: 10, gone: true, name: "3", meta: m3e, want: kind(Failed), members: []string{"3:dead"}, alive: []string{}},
			{at: 20, gone: true, name: "3", meta: m3e}, // already dead
		}},
		{"leave with the mark is Departed", []step{
			{name: "3", meta: m3, want: kind(Joined)},
			{name: "3", meta: m3, leaving: true},
			{gone: true, name: "3", meta: m3, leaving: true, want: kind(Departed), members: []string{"3:left"}, alive: []string{}},
		}},
		{"unknown node gone: nothing", []step{
			{gone: true, name: "9", meta: m3, members: []string{}},
		}},
		{"restart beside the dead predecessor, sorted by id then name", []step{
			{name: "3", meta: m3, want: kind(Joined)},
			{name: "2-b", meta: m2b, want: kind(Joined)},
			{at: 5, gone: true, name: "2-b", meta: m2b, want: kind(Failed)},
			{at: 6, name: "2-a", meta: m2a, want: kind(Joined),
				members: []string{"2-a:alive", "2-b:dead", "3:alive"}, alive: []string{"2-a", "3"}},
		}},
		{"dead member alive again is Joined", []step{
			{name: "3", meta: m3, want: kind(Joined)},
			{at: 1, gone: true, name: "3", meta: m3, want: kind(Failed)},
			{at: 2, name: "3", meta: m3, want: kind(Joined), members: []string{"3:alive"}},
		}},
		{"dead members are reaped after GossipToTheDeadTime", []step{
			{name: "3", meta: m3, want: kind(Joined)},
			{name: "2-a", meta: m2a, want: kind(Joined)},
			{at: 100, gone: true, name: "3", meta: m3, want: kind(Failed)},
			{at: 200, gone: true, name: "2-a", meta: m2a, leaving: true, want: kind(Departed)},
			{at: 100 + reap - 1, name: "x", meta: m2b, want: kind(Joined), members: []string{"2-a:left", "x:alive", "3:dead"}},
			{at: 100 + reap, name: "x", meta: m2b, members: []string{"2-a:left", "x:alive"}},
			{at: 200 + reap, name: "x", meta: m2b, members: []string{"x:alive"}},
			// forgotten: its late NotifyLeave is about an unknown node
			{at: 200 + reap, gone: true, name: "3", meta: m3},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := newTable("self", reap)
			for i, s := range tc.steps {
				o := observation{name: s.name, addr: "127.0.0.1:1", meta: s.meta, leaving: s.leaving}
				var ev Event
				var ok bool
				if s.gone {
					ev, ok = tab.gone(o, s.at)
				} else {
					ev, ok = tab.alive(o, s.at)
				}
				switch {
				case s.want == nil && ok:
					t.Fatalf("step %d: unexpected %v", i, ev)
				case s.want != nil && !ok:
					t.Fatalf("step %d: no event, want %v", i, *s.want)
				case s.want != nil && (ev.Kind != *s.want || ev.Member.Name != s.name || ev.Member.Meta != s.meta):
					t.Fatalf("step %d: %v %+v, want %v about %s", i, ev.Kind, ev.Member, *s.want, s.name)
				}
				if s.members != nil {
					var got []string
					for _, m := range tab.members(s.at, false) {
						got = append(got, m.Name+":"+m.State.String())
					}
					if !slices.Equal(got, s.members) && !(len(got) == 0 && len(s.members) == 0) {
						t.Fatalf("step %d: members %v, want %v", i, got, s.members)
					}
				}
				if s.alive != nil {
					var got []string
					for _, m := range tab.members(s.at, true) {
						got = append(got, m.Name)
					}
					if !slices.Equal(got, s.alive) && !(len(got) == 0 && len(s.alive) == 0) {
						t.Fatalf("step %d: alive %v, want %v", i, got, s.alive)
					}
				}
			}
		})
	}
}

func TestTableClaiming(t *testing.T) {
	tab := newTable("self", 1000)
	a := Meta{NodeID: 2, Incarnation: [16]byte{0xa}}
	b := Meta{NodeID: 2, Incarnation: [16]byte{0xb}}
	tab.alive(observation{name: "2-a", meta: a}, 0)
	tab.alive(observation{name: "2-b", meta: b}, 0)
	tab.alive(observation{name: "3", meta: Meta{NodeID: 3}}, 0)
	if got := tab.claiming(2, 0); len(got) != 2 || got[0].Name != "2-a" || got[1].Name != "2-b" {
		t.Fatalf("claiming(2) = %+v", got)
	}
	tab.gone(observation{name: "2-a", meta: a}, 1)
	if got := tab.claiming(2, 1); len(got) != 1 || got[0].Name != "2-b" {
		t.Fatalf("claiming(2) after 2-a died = %+v", got)
	}
}

func TestStrings(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Alive.String(), "alive"}, {Suspect.String(), "suspect"}, {Dead.String(), "dead"}, {Left.String(), "left"},
		{State(9).String(), "state(9)"}, {Joined.String(), "joined"}, {Updated.String(), "updated"},
		{Failed.String(), "failed"}, {Departed.String(), "left"}, {EventKind(7).String(), "event(7)"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
