package membership

import (
	"cmp"
	"slices"
)

// table is one node's view of the other members, stepped by what
// memberlist's callbacks report (observations) and free of I/O and clocks:
// time comes in as nowMs, on any monotonic millisecond scale.
type table struct {
	// self is this node's name; it never enters the table.
	self string
	// reapMs is how long a dead or left member is kept before it is
	// forgotten (memberlist's GossipToTheDeadTime: it gossips about the
	// member, and keeps it in its own list, for that long).
	reapMs  int64
	entries map[string]*entry
}

// entry is one member and when it last became dead or left.
type entry struct {
	m         Member
	changedMs int64
}

// observation is what one memberlist callback says about one node.
type observation struct {
	name, addr string
	meta       Meta
	// leaving is the meta's leaving mark (see wireMeta).
	leaving bool
}

func newTable(self string, reapMs int64) *table {
	return &table{self: self, reapMs: reapMs, entries: make(map[string]*entry)}
}

// alive records a node memberlist counts as alive (its NotifyJoin and
// NotifyUpdate). It returns Joined for a node that is new or was dead or
// left, Updated for an alive node whose meta or address changed, and no
// event otherwise (also for this node itself, and for a meta change that
// is only the leaving mark).
func (t *table) alive(o observation, nowMs int64) (Event, bool) {
	t.reap(nowMs)
	if o.name == t.self {
		return Event{}, false
	}
	m := Member{Name: o.name, Addr: o.addr, Meta: o.meta, State: Alive}
	e, known := t.entries[o.name]
	if !known {
		t.entries[o.name] = &entry{m: m}
		return Event{Kind: Joined, Member: m}, true
	}
	was := e.m
	e.m = m
	if was.State != Alive {
		return Event{Kind: Joined, Member: m}, true
	}
	if was.Meta != m.Meta || was.Addr != m.Addr {
		return Event{Kind: Updated, Member: m}, true
	}
	return Event{}, false
}

// gone records a node memberlist declared dead or left (its
// NotifyLeave): Departed when its last meta carried the leaving mark,
// Failed otherwise; no event for a node unknown, already gone, or this
// node itself.
func (t *table) gone(o observation, nowMs int64) (Event, bool) {
	t.reap(nowMs)
	e, known := t.entries[o.name]
	if !known || e.m.State == Dead || e.m.State == Left {
		return Event{}, false
	}
	e.m.Addr, e.m.Meta, e.changedMs = o.addr, o.meta, nowMs
	kind := Failed
	e.m.State = Dead
	if o.leaving {
		kind = Departed
		e.m.State = Left
	}
	return Event{Kind: kind, Member: e.m}, true
}

// reap forgets the members dead or left for reapMs or longer.
func (t *table) reap(nowMs int64) {
	for name, e := range t.entries {
		if (e.m.State == Dead || e.m.State == Left) && nowMs-e.changedMs >= t.reapMs {
			delete(t.entries, name)
		}
	}
}

// members returns every member in the table, sorted by node id, then name;
// with aliveOnly, only those alive.
func (t *table) members(nowMs int64, aliveOnly bool) []Member {
	t.reap(nowMs)
	out := make([]Member, 0, len(t.entries))
	for _, e := range t.entries {
		if aliveOnly && e.m.State != Alive && e.m.State != Suspect {
			continue
		}
		out = append(out, e.m)
	}
	slices.SortFunc(out, func(a, b Member) int {
		return cmp.Or(cmp.Compare(a.Meta.NodeID, b.Meta.NodeID), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// claiming returns the alive members that gossip node id id, sorted.
func (t *table) claiming(id int32, nowMs int64) []Member {
	var out []Member
	for _, m := range t.members(nowMs, true) {
		if m.Meta.NodeID == id {
			out = append(out, m)
		}
	}
	return out
}
