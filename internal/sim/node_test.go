package sim

import (
	"container/heap"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster/metadata"
)

// nodeState is a node process's state.
type nodeState uint8

const (
	nodeRunning nodeState = iota
	// nodePaused: SIGSTOP; nothing runs, messages wait, the clock goes on.
	nodePaused
	// nodeDead: SIGKILL; only the partition logs (the page cache) and the
	// applied metadata (the fsynced raft log) survive to the restart.
	nodeDead
)

// node is one weir process: the metadata actor's broker duties
// (cluster/broker_duties.go: registration, heartbeats and the lease,
// elections, ISR changes), the reconciler (cluster/replicas.go), the
// partition actors' shells (replica_test.go), the replica fetchers'
// shells and the leader's side of replica fetches (fetch_test.go), and
// the Produce handler's lease check (wire/00_produce.go).
type node struct {
	w     *world
	id    int32
	state nodeState
	// inc counts the process starts; events of an earlier one are dropped.
	inc           int
	incarnationID metadata.UUID
	deferred      []*event
	// upSince is when the node last started or resumed.
	upSince int64
	// local is the node's actors' mailboxes as one FIFO: messages between
	// actors of the node run after the event that sent them, in order.
	local []func()

	// The metadata the node has applied (it survives restarts).
	applied int64
	img     *metadata.Image

	// Controller requests on their way (cluster/routing.go).
	routes    map[uint64]*route
	nextRoute uint64
	parked    []parkedAnswer

	ticks int64
	// Broker duties.
	epoch int64
	// previousEpoch is the registration's PreviousBrokerEpoch: the
	// previous process's epoch if it "shut down cleanly", else -1.
	previousEpoch int64
	registering   bool
	heartbeating  bool
	heartbeatAt   int64
	// leaseFrom is when the last heartbeat the controller answered was
	// sent (0: none).
	leaseFrom int64
	elector   *elector
	electing  bool
	electAt   int64
	// isr holds the leaders' ISR proposals not yet sent, by partition.
	isr []*partition.ISRChange

	// disk is the partition logs, kept across restarts (the page cache).
	disk     []*memLog
	topicID  metadata.UUID
	replicas []*replicaShell
	// fetchers are the replica fetchers, by leader node id.
	fetchers []*fetcherShell
	// following is the leader each partition is fetched from (0: none).
	following []int32
	// byClient finds a replica shell by the handle the fetcher holds.
	byClient map[*partition.Client]*replicaShell
	// parkedFetches are long-polled replica fetches.
	parkedFetches []*parkedFetch
	// balancer moves leaderships back to their preferred replicas
	// (balancer_test.go).
	balancer *balancer
}

// route is one controller request on its way.
type route struct {
	id     uint64
	req    metadata.Request
	done   func(metadata.Result)
	sentTo int32
	sentAt int64
}

// parkedAnswer waits for the node's image to reach offset.
type parkedAnswer struct {
	offset int64
	res    metadata.Result
	done   func(metadata.Result)
}

// forwardTimeoutTicks is cluster/routing.go's: a forwarded request with no
// answer is sent again after it.
const forwardTimeoutTicks = 40

func newNode(w *world, id int32) *node {
	n := &node{w: w, id: id, img: metadata.Empty(), disk: make([]*memLog, w.cfg.Partitions), state: nodeDead}
	for i := range n.disk {
		n.disk[i] = &memLog{}
	}
	return n
}

// start starts a process: a new incarnation with everything but the disk
// and the applied metadata forgotten. It registers again (a new broker
// epoch) and applies the metadata it has at once.
func (n *node) start() {
	w := n.w
	n.state = nodeRunning
	n.upSince = w.now
	n.inc++
	old := n.incarnationID
	for n.incarnationID.IsZero() || n.incarnationID == old {
		_, _ = w.quorum.rand.Read(n.incarnationID[:])
	}
	n.deferred, n.local = nil, nil
	// Route ids go on growing: an answer to an earlier process never
	// matches a route of this one.
	n.routes, n.parked = map[uint64]*route{}, nil
	n.ticks = 0
	// The process before was killed, which keeps its disk here (the page
	// cache survives a SIGKILL): it may register as after a clean shutdown
	// (its epoch: weir's Node.Stop and Halt) or an unclean one (-1: a
	// SIGKILL or a power cut, after which it leaves the ELRs, KIP-966).
	// Both are true of an intact disk, so either may be told.
	n.previousEpoch = -1
	if n.epoch > 0 && w.rng.IntN(2) == 0 {
		n.previousEpoch = n.epoch
	}
	n.epoch, n.registering, n.heartbeating, n.heartbeatAt, n.leaseFrom = 0, false, false, -1<<40, 0
	n.elector = newElector(w.cfg.Partitions, w.cfg.StaggerTicks)
	n.electing, n.electAt = false, 0
	n.isr = make([]*partition.ISRChange, w.cfg.Partitions)
	n.replicas = nil
	n.topicID = metadata.UUID{}
	n.fetchers = make([]*fetcherShell, w.cfg.Nodes+1)
	n.following = make([]int32, w.cfg.Partitions)
	n.byClient = map[*partition.Client]*replicaShell{}
	n.parkedFetches = nil
	n.balancer = newBalancer(n)
	w.trace("start", n.id, int64(n.inc), n.applied, 0)
	n.reconcile()
	w.after(1+w.rng.Int64N(w.cfg.TickMs), n.id, n.tick)
	n.balancer.schedule()
}

// kill stops the process at once.
func (n *node) kill() {
	n.state = nodeDead
	n.deferred, n.local = nil, nil
	n.w.trace("kill", n.id, int64(n.inc), 0, 0)
	for _, o := range n.w.nodes[1:] {
		if o != n && o.state != nodeDead {
			o.peerDied(n.id)
		}
	}
}

// pause stops the process's steps; its clock goes on.
func (n *node) pause() {
	n.state = nodePaused
	n.w.trace("pause", n.id, 0, 0, 0)
}

// resume runs what waited, in order, and goes on.
func (n *node) resume() {
	w := n.w
	n.state = nodeRunning
	n.upSince = w.now
	w.trace("resume", n.id, int64(len(n.deferred)), 0, 0)
	w.quorum.resumed(n.id)
	for _, e := range n.deferred {
		w.seq++
		e.at, e.seq = w.now, w.seq
		heap.Push(&w.q, e)
	}
	n.deferred = nil
}

// post queues fn in the node's mailboxes.
func (n *node) post(fn func()) { n.local = append(n.local, fn) }

// drain runs the node's queued messages, and those they queue, in order.
func (n *node) drain() {
	for len(n.local) > 0 && n.state == nodeRunning {
		fn := n.local[0]
		n.local = n.local[1:]
		fn()
	}
	if n.state == nodeRunning {
		n.wakeFetches()
	}
}

// leaseValid is cluster.Node.LeaseValid: the last heartbeat the
// controller answered was sent less than the session timeout ago.
func (n *node) leaseValid() bool {
	return n.leaseFrom > 0 && n.w.now-n.leaseFrom < n.w.cfg.SessionMs
}

// tick is the node's ticker: the metadata actor's duties (reroutes, broker
// duties) and the partitions' and fetchers' ticks.
func (n *node) tick() {
	w := n.w
	defer w.after(w.cfg.TickMs, n.id, n.tick)
	n.ticks++
	n.rerouteStale()
	n.brokerDuties()
	for _, s := range n.replicas {
		s.checkHeldLease()
		s.step(func(r *partition.Replica) partition.Output { return r.OnTick(&partition.Tick{NowMs: w.now}) })
	}
	for _, f := range n.fetchers {
		if f != nil && f.wakeAt > 0 && w.now >= f.wakeAt {
			f.onTick()
		}
	}
}

// applyUpTo applies the committed log up to off (a push from the
// controller of term), reconciles the partitions with the new image and
// releases the answers it holds.
func (n *node) applyUpTo(off int64, term uint64) {
	w := n.w
	w.quorum.heardTerm(n.id, term)
	if off <= n.applied {
		return
	}
	n.applied = off
	n.img = w.quorum.images[off]
	w.trace("apply", n.id, off, 0, 0)
	n.reconcile()
	n.releaseParked()
}

// submit routes a controller request; done runs once the node's image
// holds the answer's change (cluster/routing.go).
func (n *node) submit(req metadata.Request, done func(metadata.Result)) {
	n.nextRoute++
	r := &route{id: n.nextRoute, req: req, done: done, sentTo: -1}
	n.routes[r.id] = r
	n.route(r)
}

// route decides r here while this node believes it leads the quorum, else
// sends it to the controller's node.
func (n *node) route(r *route) {
	w := n.w
	q := w.quorum
	if c := q.believedBy(n.id); c != nil {
		delete(n.routes, r.id)
		inc := n.inc
		q.decide(c, r.req, func(res metadata.Result, _ int64) {
			// The answer goes to the process that asked: one killed since
			// (its proposal committed after its restart) hears nothing.
			if n.inc == inc && n.state != nodeDead {
				r.done(res)
			}
		})
		return
	}
	leader := q.leaderFor(n.id)
	r.sentTo = -1
	if leader < 0 {
		return
	}
	r.sentTo, r.sentAt = leader, n.ticks
	from, inc, id, req := n.id, n.inc, r.id, r.req
	w.net.send(n.id, leader, 0, func() { w.nodes[leader].onForwarded(from, inc, id, req) })
}

// rerouteStale sends again the routes not sent, sent to a node that no
// longer leads, or unanswered for forwardTimeoutTicks.
func (n *node) rerouteStale() {
	leader := n.w.quorum.leaderFor(n.id)
	for id := uint64(1); id <= n.nextRoute; id++ {
		r := n.routes[id]
		if r != nil && (r.sentTo < 0 || r.sentTo != leader || n.ticks-r.sentAt >= forwardTimeoutTicks) {
			n.route(r)
		}
	}
}

// onForwarded decides another node's request while this node believes it
// leads, and answers it (or says it does not lead).
func (n *node) onForwarded(from int32, fromInc int, id uint64, req metadata.Request) {
	w := n.w
	c := w.quorum.believedBy(n.id)
	if c == nil {
		w.net.send(n.id, from, fromInc, func() { w.nodes[from].onAnswer(id, nil, 0) })
		return
	}
	w.quorum.decide(c, req, func(res metadata.Result, off int64) {
		if w.nodes[n.id].state == nodeRunning {
			w.net.send(n.id, from, fromInc, func() { w.nodes[from].onAnswer(id, res, off) })
		}
	})
}

// onAnswer takes a forwarded request's answer (nil: not the controller).
func (n *node) onAnswer(id uint64, res metadata.Result, off int64) {
	r := n.routes[id]
	if r == nil {
		return
	}
	if res == nil {
		r.sentTo = -1
		return
	}
	delete(n.routes, id)
	if n.applied >= off {
		r.done(res)
		return
	}
	n.parked = append(n.parked, parkedAnswer{offset: off, res: res, done: r.done})
}

// releaseParked answers the parked answers the image now holds.
func (n *node) releaseParked() {
	var ready []parkedAnswer
	kept := n.parked[:0]
	for _, p := range n.parked {
		if n.applied >= p.offset {
			ready = append(ready, p)
		} else {
			kept = append(kept, p)
		}
	}
	n.parked = kept
	for _, p := range ready {
		p.done(p.res)
	}
}

// brokerDuties is cluster/broker_duties.go's: register, heartbeat every
// interval (the answer renews the lease from when it was sent), propose
// leaders for the leaderless partitions this node may lead, and send the
// leaders' ISR changes.
func (n *node) brokerDuties() {
	w := n.w
	img := n.img
	if img.ClusterID() == "" {
		return
	}
	if n.epoch == 0 {
		n.register()
		return
	}
	if !n.heartbeating && n.ticks-n.heartbeatAt >= ticksOf(w.cfg.HeartbeatMs, w.cfg.TickMs) {
		n.heartbeat()
	}
	if br, ok := img.Broker(n.id); !ok || br.Fenced {
		return
	}
	if !n.electing || n.ticks-n.electAt >= forwardTimeoutTicks {
		if props := n.elector.proposals(img, n.topicID, n.id, n.epoch, n.ticks); len(props) > 0 {
			n.electing, n.electAt = true, n.ticks
			for _, p := range props {
				w.trace("propose-leader", n.id, int64(p.Partition), int64(p.PartitionEpoch), 0)
			}
			n.submit(&metadata.ElectLeadersRequest{Proposals: props}, func(metadata.Result) { n.electing = false })
		}
	}
	var changes []metadata.ISRProposal
	for p, ch := range n.isr {
		if ch == nil {
			continue
		}
		changes = append(changes, metadata.ISRProposal{
			TopicID: n.topicID, Partition: int32(p), Leader: n.id, BrokerEpoch: n.epoch,
			LeaderEpoch: ch.LeaderEpoch, PartitionEpoch: ch.PartitionEpoch, ISR: ch.ISR,
		})
		w.trace("propose-isr", n.id, int64(p), int64(ch.PartitionEpoch), int64(len(ch.ISR)))
		n.isr[p] = nil
	}
	if len(changes) > 0 {
		n.submit(&metadata.AlterPartitionRequest{BrokerID: n.id, BrokerEpoch: n.epoch, Changes: changes}, func(metadata.Result) {})
	}
}

// ticksOf converts milliseconds to ticks, at least 1.
func ticksOf(ms, tickMs int64) int64 { return max(1, (ms+tickMs-1)/tickMs) }

// register asks the controller to register this process.
func (n *node) register() {
	if n.registering {
		return
	}
	n.registering = true
	req := &metadata.RegisterBrokerRequest{NodeID: n.id, IncarnationID: n.incarnationID, Host: "127.0.0.1", Port: 9090 + n.id,
		PreviousBrokerEpoch: n.previousEpoch}
	n.submit(req, func(r metadata.Result) {
		n.registering = false
		res := r.(*metadata.RegisterBrokerResult)
		if !res.Error.Failed() {
			n.epoch = res.BrokerEpoch
			n.w.trace("registered", n.id, n.epoch, n.applied, 0)
		}
	})
}

// heartbeat sends one heartbeat; its answer renews the lease from when it
// was sent.
func (n *node) heartbeat() {
	w := n.w
	n.heartbeating, n.heartbeatAt = true, n.ticks
	sent, epoch := w.now, n.epoch
	req := &metadata.BrokerHeartbeatRequest{NodeID: n.id, BrokerEpoch: epoch, MetadataOffset: n.applied}
	n.submit(req, func(r metadata.Result) {
		n.heartbeating = false
		res := r.(*metadata.BrokerHeartbeatResult)
		if !res.Error.Failed() && sent > n.leaseFrom {
			n.leaseFrom = sent
		}
		w.trace("heartbeat-answer", n.id, sent-startMs, int64(res.Error.Code), b2i(res.IsFenced))
		if res.Error.Code == kerr.StaleBrokerEpoch.Code {
			w.trace("heartbeat-stale", n.id, epoch, 0, 0)
		}
	})
}

// peerDied tells the node a peer process died: its connections to it are
// reset, so a Fetch in flight there fails at once.
func (n *node) peerDied(peer int32) {
	if f := n.fetchers[peer]; f != nil && f.inflight != 0 {
		id := f.inflight
		n.w.after(1, n.id, func() { f.onFetchError(id) })
	}
}

// b2i is 1 for true.
func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
