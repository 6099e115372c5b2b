package sim

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"strings"
)

// world is one simulated cluster: a virtual clock, one queue of scheduled
// events run in (time, sequence) order in one goroutine, one seeded random
// source that every decision draws from in event order, the nodes, the
// metadata quorum, the network and the clients. The same seed runs the
// same events in the same order and gives the same trace.
type world struct {
	seed uint64
	cfg  scenario
	rng  *rand.Rand
	now  int64
	q    eventQueue
	seq  uint64

	nodes     []*node // by node id; nodes[0] is nil
	quorum    *quorum
	net       *network
	producers []*producer
	chk       *checker
	tr        *trace
	steps     int
	// failure is the first invariant violation (or harness error); the
	// run stops at it.
	failure error
}

// event is one scheduled step. An event of a node (node > 0) waits while
// the node is paused and is dropped when the node is dead or restarted
// since (inc is the incarnation it was scheduled for; 0 for any).
type event struct {
	at   int64
	seq  uint64
	node int32
	inc  int
	fn   func()
}

// eventQueue is a min-heap of events by (at, seq).
type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return e
}

// startMs is the virtual clock's first reading: the replica ignores
// readings <= 0, and batch timestamps are this clock's.
const startMs = 1_000_000

// newWorld builds the cluster of seed under cfg, before its first event.
func newWorld(seed uint64, cfg scenario) *world {
	w := &world{seed: seed, cfg: cfg, rng: rand.New(rand.NewPCG(seed, 0x5eed)), now: startMs, tr: newTrace()}
	w.net = newNetwork(w)
	w.chk = newChecker(w)
	w.nodes = make([]*node, cfg.Nodes+1)
	for id := int32(1); id <= int32(cfg.Nodes); id++ {
		w.nodes[id] = newNode(w, id)
	}
	w.quorum = newQuorum(w)
	for i := range cfg.Producers {
		w.producers = append(w.producers, newProducer(w, int32(100+i), int32(i%cfg.Partitions)))
	}
	return w
}

// at schedules fn at time t for node (0: the world) at its current
// incarnation.
func (w *world) at(t int64, node int32, fn func()) {
	inc := 0
	if node > 0 {
		inc = w.nodes[node].inc
	}
	w.seq++
	heap.Push(&w.q, &event{at: max(t, w.now), seq: w.seq, node: node, inc: inc, fn: fn})
}

// after schedules fn d milliseconds from now.
func (w *world) after(d int64, node int32, fn func()) { w.at(w.now+d, node, fn) }

// fail records the first violation.
func (w *world) fail(format string, args ...any) {
	if w.failure == nil {
		w.failure = fmt.Errorf("t=%d: %s", w.now-startMs, fmt.Sprintf(format, args...))
		w.tr.add(w.now, "VIOLATION", 0, 0, 0, 0)
	}
}

// run starts the cluster and steps events until the scenario's end or the
// first violation, checking the invariants after every step.
func (w *world) run() error {
	w.quorum.bootstrap()
	for _, n := range w.nodes[1:] {
		n.start()
	}
	for _, p := range w.producers {
		p.start()
	}
	if !w.cfg.NoFaults {
		w.scheduleFaults()
	}
	w.after(w.cfg.TickMs, 0, w.quorum.tick)
	end := startMs + w.cfg.FaultMs + w.cfg.HealMs
	for len(w.q) > 0 && w.failure == nil {
		e := heap.Pop(&w.q).(*event)
		if e.at > end {
			break
		}
		w.now = e.at
		var n *node
		if e.node > 0 {
			n = w.nodes[e.node]
			if (e.inc != 0 && e.inc != n.inc) || n.state == nodeDead {
				continue
			}
			if n.state == nodePaused {
				n.deferred = append(n.deferred, e)
				continue
			}
		}
		e.fn()
		if n != nil {
			n.drain()
		}
		w.steps++
		w.chk.afterStep()
	}
	if w.failure == nil {
		w.chk.final()
	}
	return w.failure
}

// trace keeps the tail of the run's events for a failure report and a
// hash of all of them for the replay check. Entries are formatted only
// when printed.
type trace struct {
	ring [traceTail]traceEntry
	n    int
	hash uint64
	// all keeps every entry when set (WEIR_SIM_TRACE=1 with one seed).
	all     []traceEntry
	keepAll bool
}

const traceTail = 300

// traceEntry is one traced event.
type traceEntry struct {
	at      int64
	what    string
	node    int32
	a, b, c int64
}

func newTrace() *trace { return &trace{hash: 14695981039346656037} }

// add records an event.
func (t *trace) add(at int64, what string, node int32, a, b, c int64) {
	e := traceEntry{at: at, what: what, node: node, a: a, b: b, c: c}
	t.ring[t.n%traceTail] = e
	t.n++
	if t.keepAll {
		t.all = append(t.all, e)
	}
	for _, v := range [...]uint64{uint64(at), uint64(node), uint64(a), uint64(b), uint64(c), uint64(len(what))} {
		t.hash = (t.hash ^ v) * 1099511628211
	}
	for i := 0; i < len(what); i++ {
		t.hash = (t.hash ^ uint64(what[i])) * 1099511628211
	}
}

// tail formats the last entries.
func (t *trace) tail(n int) string {
	var sb strings.Builder
	first := max(0, t.n-min(n, traceTail))
	for i := first; i < t.n; i++ {
		t.ring[i%traceTail].format(&sb)
	}
	return sb.String()
}

// format writes one entry's line.
func (e traceEntry) format(sb *strings.Builder) {
	who := "world"
	if e.node > 0 {
		who = fmt.Sprintf("n%d", e.node)
	}
	fmt.Fprintf(sb, "  t=%-6d %-6s %-16s %d %d %d\n", e.at-startMs, who, e.what, e.a, e.b, e.c)
}

// tr records an event in the trace.
func (w *world) trace(what string, node int32, a, b, c int64) { w.tr.add(w.now, what, node, a, b, c) }
