package sim

import "container/heap"

// network carries messages between nodes (ids 1..n) and between clients
// (ids >= clientBase) and nodes. Every message may be dropped, is delayed
// (a short delay, now and then a long one, so messages overtake each
// other), and is lost when the link between two nodes is cut at its
// sending or its delivery. A message to a node waits while the node is
// paused (the kernel keeps it) and is lost when the node dies or restarts
// before it arrives (its connections die with the process).
type network struct {
	w *world
	// cutUntil is, per link between two nodes (lower id first), when its
	// cut heals; a link is cut while now < cutUntil.
	cutUntil map[[2]int32]int64
}

// clientBase is the first client endpoint id.
const clientBase = 100

func newNetwork(w *world) *network { return &network{w: w, cutUntil: map[[2]int32]int64{}} }

func linkKey(a, b int32) [2]int32 {
	if a > b {
		a, b = b, a
	}
	return [2]int32{a, b}
}

// cut reports whether the link between a and b is cut now. Links with a
// client are never cut: a cut leader still hears its clients.
func (n *network) cut(a, b int32) bool {
	if a >= clientBase || b >= clientBase || a == b {
		return false
	}
	return n.w.now < n.cutUntil[linkKey(a, b)]
}

// cutLink cuts the link between a and b for d milliseconds.
func (n *network) cutLink(a, b int32, d int64) {
	k := linkKey(a, b)
	n.cutUntil[k] = max(n.cutUntil[k], n.w.now+d)
}

// linked reports whether a and b, both nodes, can talk now: both run and
// their link is not cut. A paused node counts as not linked.
func (n *network) linked(a, b int32) bool {
	na, nb := n.w.nodes[a], n.w.nodes[b]
	return na.state == nodeRunning && nb.state == nodeRunning && !n.cut(a, b)
}

// send delivers fn at the destination after the network's delay, unless
// the message is lost. to is a node or a client; fn runs as the
// destination's event. toInc is the incarnation of the node the message
// is for (an answer goes to the process that asked), 0 for the current.
func (n *network) send(from, to int32, toInc int, fn func()) {
	w := n.w
	if n.cut(from, to) {
		return
	}
	if w.rng.Float64() < w.cfg.DropRate {
		return
	}
	d := 1 + w.rng.Int64N(3)
	if w.rng.Float64() < w.cfg.SlowRate {
		d += w.rng.Int64N(w.cfg.SlowMaxMs)
	}
	deliver := func() {
		if !n.cut(from, to) {
			fn()
		}
	}
	if to >= clientBase {
		w.after(d, 0, deliver)
		return
	}
	if toInc == 0 {
		toInc = w.nodes[to].inc
	}
	w.seq++
	heap.Push(&w.q, &event{at: w.now + d, seq: w.seq, node: to, inc: toInc, fn: deliver})
}
