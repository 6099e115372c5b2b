package membership

import (
	"github.com/hashicorp/memberlist"
)

// delegate is memberlist's Delegate and EventDelegate for one Members.
// memberlist calls the event methods with its node lock held, in the order
// of its state changes; they only update the table and queue the event
// (under Members.mu, never blocking), and OnEvent runs later on the
// delivery goroutine.
type delegate struct{ m *Members }

// NodeMeta returns this node's encoded meta (Start and SetMeta made sure
// it fits).
func (d delegate) NodeMeta(limit int) []byte {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	if len(d.m.encoded) > limit {
		d.m.log.Error("membership: meta does not fit memberlist's limit; gossiping none", "size", len(d.m.encoded), "limit", limit)
		return nil
	}
	return d.m.encoded
}

// NotifyMsg ignores user messages: weir sends none over gossip.
func (delegate) NotifyMsg([]byte) {}

// GetBroadcasts has nothing to broadcast.
func (delegate) GetBroadcasts(int, int) [][]byte { return nil }

// LocalState has no state beyond the node meta.
func (delegate) LocalState(bool) []byte { return nil }

// MergeRemoteState has nothing to merge.
func (delegate) MergeRemoteState([]byte, bool) {}

// NotifyJoin records a node that is new or alive again.
func (d delegate) NotifyJoin(n *memberlist.Node) { d.alive(n) }

// NotifyUpdate records an alive node's new meta.
func (d delegate) NotifyUpdate(n *memberlist.Node) { d.alive(n) }

// NotifyLeave records a node declared dead or left.
func (d delegate) NotifyLeave(n *memberlist.Node) {
	m := d.m
	if n.Name == m.name {
		return
	}
	o, err := observe(n)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return
	}
	if err != nil {
		// Keep the meta last decoded; the node is gone all the same.
		m.log.Warn("membership: departed node's meta", "node", n.Name, "error", err)
		if e, ok := m.tab.entries[n.Name]; ok {
			o.meta = e.m.Meta
		}
	}
	ev, ok := m.tab.gone(o, m.nowMs())
	if !ok {
		return
	}
	m.log.Info("membership: member "+ev.Kind.String(), "node", ev.Member.Name, "node_id", ev.Member.Meta.NodeID, "addr", ev.Member.Addr)
	m.enqueueLocked(ev)
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

func (d delegate) alive(n *memberlist.Node) {
	m := d.m
	if n.Name == m.name {
		return
	}
	o, err := observe(n)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return
	}
	if err != nil {
		m.log.Warn("membership: ignoring a node whose meta does not decode", "node", n.Name, "addr", o.addr, "error", err)
		return
	}
	ev, ok := m.tab.alive(o, m.nowMs())
	if !ok {
		return
	}
	if ev.Kind == Joined {
		m.log.Info("membership: member joined", "node", ev.Member.Name, "node_id", ev.Member.Meta.NodeID, "addr", ev.Member.Addr)
	}
	if dup := m.claimingLocked(ev.Member.Meta.NodeID); dup != nil {
		names := make([]string, len(dup))
		for i, c := range dup {
			names[i] = c.Name
		}
		m.log.Warn("membership: live processes with one node id", "node_id", ev.Member.Meta.NodeID, "names", names)
	}
	m.enqueueLocked(ev)
}

// observe copies what the table needs out of memberlist's node (which
// memberlist goes on changing after the callback returns).
func observe(n *memberlist.Node) (observation, error) {
	o := observation{name: n.Name, addr: n.Address()}
	meta, leaving, err := decodeMeta(n.Meta)
	if err != nil {
		return o, err
	}
	o.meta, o.leaving = meta, leaving
	return o, nil
}
