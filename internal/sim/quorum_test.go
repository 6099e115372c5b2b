package sim

import (
	"math/rand/v2"

	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/cluster/metadata"
)

// quorum is the metadata quorum as one sequencer: a totally ordered log of
// committed record batches (one raft entry each; offsets from 1) and the
// image after each, which every node applies in order, possibly late
// (raft itself is etcd's and tested elsewhere: what is tested here is
// weir's use of the facts). The controller runs on one node, the raft
// leader; its failover is a change of that node, with a fresh
// metadata.Controller whose Sessions are Reset at takeover.
//
// What of raft the model keeps: a leader commits only while it reaches a
// majority (itself and one more running node over uncut links); a leader
// that cannot is replaced after an election timeout by a node that can;
// entries it proposed while it still reached a majority may or may not be
// committed by its successor, later ones never are; and a deposed leader
// that is cut off or paused goes on believing it leads until it hears of
// the new term or CheckQuorum makes it step down. Whether a leader that
// cannot confirm its leadership answers the requests that need no write
// (heartbeats) from its own image is scenario.DeposedAnswers.
type quorum struct {
	w      *world
	images []*metadata.Image // images[i] is the image after entry i
	// cur is the controller of the current term (nil before the first);
	// stale is a deposed one that still believes it leads.
	cur   *controller
	stale *controller
	term  uint64
	// unhealthySince is when cur stopped reaching a majority (-1: it
	// does), and electAt when a successor takes over.
	unhealthySince, electAt int64
	// members is memberlist's view: since when each node has been
	// unreachable (-1: reachable), and whether it is declared failed.
	unreachableSince []int64
	failed           []bool
	// rand feeds the controllers' topic ids.
	rand *randReader
	// topicAsked is set once the admin's CreateTopics was decided.
	topicAsked bool
	// healthyFenced counts the brokers fenced although they ran and
	// reached the controller for a whole session before.
	healthyFenced int
}

// controller is one term's controller on its host node.
type controller struct {
	host int32
	term uint64
	ctl  *metadata.Controller
	// spec is the image plus this controller's proposals in flight, which
	// Evaluate decides against.
	spec    *metadata.Image
	pending []*proposal
	fencing bool
	// stepDownAt is, once it lost its majority, when CheckQuorum makes it
	// step down; down is set then.
	stepDownAt int64
	down       bool
	// holdUntil is when a slow commit lets the proposals commit.
	holdUntil int64
}

// proposal is a batch in flight; done runs with its offset once
// committed. safe is set when the leader reached a majority when it
// proposed it: only such a batch may survive a failover. planned is set
// for a MoveLeadersRequest's batch (the checker tells planned moves from
// elections by it).
type proposal struct {
	recs    []metadata.Record
	done    func(offset int64)
	safe    bool
	planned bool
}

// randReader is an io.Reader over the world's random source.
type randReader struct{ rng *rand.Rand }

func (r *randReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r.rng.Uint32())
	}
	return len(p), nil
}

func newQuorum(w *world) *quorum {
	q := &quorum{w: w, images: []*metadata.Image{metadata.Empty()}, unhealthySince: -1, rand: &randReader{w.rng}}
	q.unreachableSince = make([]int64, w.cfg.Nodes+1)
	q.failed = make([]bool, w.cfg.Nodes+1)
	for i := range q.unreachableSince {
		q.unreachableSince[i] = -1
	}
	return q
}

// head is the offset of the last committed entry.
func (q *quorum) head() int64 { return int64(len(q.images) - 1) }

// image is the committed image.
func (q *quorum) image() *metadata.Image { return q.images[len(q.images)-1] }

// bootstrap makes node 1 the first controller and names the cluster.
func (q *quorum) bootstrap() {
	q.takeOver(1)
	var id metadata.UUID
	for id.IsZero() {
		_, _ = q.rand.Read(id[:])
	}
	q.commit([]metadata.Record{metadata.ClusterCreatedRecord{ClusterID: id.String()}}, false)
}

// newController is a controller of weir's configuration for the run.
func (q *quorum) newController(host int32) *controller {
	cfg := config.NewBroker()
	sess := metadata.NewSessions(q.w.cfg.SessionMs, q.w.cfg.HeartbeatMs)
	return &controller{host: host, term: q.term, spec: q.image(),
		ctl: &metadata.Controller{Config: cfg, Rand: q.rand, Sessions: sess, Voters: q.w.cfg.Nodes}}
}

// takeOver makes host the controller of a new term: the term's
// ControllerChangedRecord first, then a fresh Controller whose Sessions
// give every unfenced broker a full session from now, with memberlist's
// failure verdicts replayed into it. The host has every committed entry.
func (q *quorum) takeOver(host int32) {
	w := q.w
	q.term++
	off := q.commit([]metadata.Record{metadata.ControllerChangedRecord{ControllerID: host, Term: q.term}}, false)
	c := q.newController(host)
	c.ctl.Sessions.Reset(c.spec, w.now)
	for id := int32(1); id <= int32(w.cfg.Nodes); id++ {
		if q.failed[id] && w.cfg.Hints {
			c.ctl.Sessions.MemberFailed(id, w.now)
		}
	}
	q.cur = c
	q.unhealthySince = -1
	w.trace("controller", host, int64(q.term), 0, 0)
	if h := w.nodes[host]; h.state == nodeRunning {
		h.applyUpTo(off, q.term)
	}
}

// commit appends recs as the next entry and builds its image through a
// metadata.Builder; it returns the entry's offset. planned marks a
// MoveLeadersRequest's batch.
func (q *quorum) commit(recs []metadata.Record, planned bool) int64 {
	off := q.head() + 1
	b := metadata.NewBuilder(q.image())
	for _, r := range recs {
		if err := b.Apply(r, off); err != nil {
			q.w.fail("a committed batch does not apply (the controller proposed it): %v", err)
			return off
		}
	}
	prev := q.image()
	q.images = append(q.images, b.Image())
	q.w.trace("commit", 0, off, int64(len(recs)), 0)
	q.w.chk.onImage(prev, q.image(), planned)
	return off
}

// healthy reports whether host reaches a majority of the voters now.
func (q *quorum) healthy(host int32) bool {
	if q.w.nodes[host].state != nodeRunning {
		return false
	}
	reach := 1
	for id := int32(1); id <= int32(q.w.cfg.Nodes); id++ {
		if id != host && q.w.net.linked(host, id) {
			reach++
		}
	}
	return reach > q.w.cfg.Nodes/2
}

// believedBy returns the controller node id believes it is, or nil: the
// current one on its host, or a deposed one that has not stepped down.
func (q *quorum) believedBy(id int32) *controller {
	if c := q.stale; c != nil && c.host == id && q.w.now < c.stepDownAt {
		return c
	}
	if c := q.cur; c != nil && c.host == id && !c.down {
		return c
	}
	return nil
}

// leaderFor is the node that id sends its controller requests to: itself
// while it believes it leads, else the current controller's host.
func (q *quorum) leaderFor(id int32) int32 {
	if q.believedBy(id) != nil {
		return id
	}
	if q.cur == nil || q.cur.down {
		return -1
	}
	return q.cur.host
}

// decide decides req from node from at the controller c believes to be on
// c.host: Evaluate against c's latest image, then either the answer at
// once (nothing to write; the offset an image must reach to hold it is
// the host's applied one) or a proposal answered once committed. A
// deposed controller's proposals never commit.
func (q *quorum) decide(c *controller, req metadata.Request, answer func(metadata.Result, int64)) {
	w := q.w
	switch r := req.(type) {
	case *metadata.RegisterBrokerRequest:
		r.NowMs = w.now
	case *metadata.BrokerHeartbeatRequest:
		r.NowMs = w.now
	}
	if confirmed := c == q.cur && !c.down && q.healthy(c.host); !confirmed && !w.cfg.DeposedAnswers {
		return // it confirms its leadership with a quorum first (raft ReadIndex), and cannot
	}
	res, recs := c.ctl.Evaluate(c.spec, req)
	if len(recs) == 0 {
		if n := len(c.pending); n > 0 && !w.cfg.SpecAnswers {
			// The answer may rest on the proposals in flight: given once
			// they committed (dropped with them, the request is sent
			// again, where weir decides it again).
			last := c.pending[n-1]
			prev := last.done
			last.done = func(off int64) {
				prev(off)
				answer(res, w.nodes[c.host].applied)
			}
			return
		}
		answer(res, w.nodes[c.host].applied)
		return
	}
	_, planned := req.(*metadata.MoveLeadersRequest)
	q.propose(c, recs, planned, func(off int64) { answer(res, off) })
}

// propose applies recs to c's speculative image (a batch that would not
// apply never reaches the log) and queues them for commit; planned marks
// a MoveLeadersRequest's batch.
func (q *quorum) propose(c *controller, recs []metadata.Record, planned bool, done func(int64)) {
	if c != q.cur || c.down {
		return // deposed: raft refuses or later overwrites the entry
	}
	b := metadata.NewBuilder(c.spec)
	off := c.spec.Offset() + 1
	for _, r := range recs {
		if err := b.Apply(r, off); err != nil {
			q.w.fail("the controller's proposal does not apply to its own image: %v", err)
			return
		}
	}
	c.spec = b.Image()
	c.pending = append(c.pending, &proposal{recs: recs, done: done, safe: q.healthy(c.host), planned: planned})
	w := q.w
	if w.cfg.SlowCommitRate > 0 && w.rng.Float64() < w.cfg.SlowCommitRate {
		c.holdUntil = max(c.holdUntil, w.now+1+w.rng.Int64N(w.cfg.SlowCommitMaxMs))
		w.trace("slow-commit", c.host, c.holdUntil-startMs, 0, 0)
		w.at(c.holdUntil, 0, q.commitPending)
		return
	}
	w.after(1+w.rng.Int64N(4), 0, q.commitPending)
}

// commitPending commits the current controller's proposals while it
// reaches a majority, once a slow commit lets them.
func (q *quorum) commitPending() { q.commitPendingNow(false) }

// commitPendingNow is commitPending; with force a slow commit is waited
// out (a leadership transfer commits the old leader's proposals first).
func (q *quorum) commitPendingNow(force bool) {
	c := q.cur
	if c == nil || c.down || len(c.pending) == 0 || !q.healthy(c.host) || (!force && q.w.now < c.holdUntil) {
		return
	}
	ps := c.pending
	c.pending = nil
	offs := make([]int64, len(ps))
	for i, p := range ps {
		offs[i] = q.commit(p.recs, p.planned)
		if q.w.failure != nil {
			return
		}
	}
	c.spec = q.image()
	q.w.nodes[c.host].applyUpTo(q.head(), q.term)
	for i, p := range ps {
		p.done(offs[i])
	}
}

// tick is the quorum's and the controller's periodic work: memberlist's
// verdicts, the step-down and failover of a controller that lost its
// majority, commits, the controller's duties (fencing expired sessions,
// the admin's topic) and the push of committed entries to the other
// nodes.
func (q *quorum) tick() {
	w := q.w
	defer w.after(w.cfg.TickMs, 0, q.tick)
	q.members()
	if q.stale != nil && w.now >= q.stale.stepDownAt {
		w.trace("stale-steps-down", q.stale.host, int64(q.stale.term), 0, 0)
		q.stale = nil
	}
	if c := q.cur; !c.down && q.healthy(c.host) {
		q.unhealthySince = -1
	} else {
		q.failover()
	}
	c := q.cur
	host := w.nodes[c.host]
	if c.down || host.state != nodeRunning {
		return
	}
	q.commitPending()
	q.duties(c)
	head := q.head()
	for id := int32(1); id <= int32(w.cfg.Nodes); id++ {
		if id == c.host {
			continue
		}
		n, term := w.nodes[id], q.term
		w.net.send(c.host, id, 0, func() { n.applyUpTo(head, term) })
	}
}

// failover deals with a controller that does not reach a majority, as
// raft with PreVote and CheckQuorum does: the leader steps down an
// election timeout (1-2 of ElectionMs) after it lost its majority, counted
// on its own ticks (a paused one from its resumption); independently,
// after an election timeout, a node that reaches a majority is elected
// (the old one too, once it stepped down), with the entries the old
// leader proposed while it still reached a majority maybe committed. An
// old leader that has not stepped down by then goes on believing it
// leads.
func (q *quorum) failover() {
	w := q.w
	c := q.cur
	host := w.nodes[c.host]
	if q.unhealthySince < 0 {
		q.unhealthySince = w.now
		q.electAt = w.now + w.cfg.ElectionMs + w.rng.Int64N(w.cfg.ElectionMs)
		c.stepDownAt = w.now + w.cfg.ElectionMs + w.rng.Int64N(w.cfg.ElectionMs)
		if host.state == nodePaused {
			c.stepDownAt = never // counted from its resumption
		}
	}
	if !c.down && host.state == nodeRunning && w.now >= c.stepDownAt {
		c.down = true
		w.trace("ctl-steps-down", c.host, int64(c.term), 0, 0)
	}
	if w.now < q.electAt {
		return
	}
	var cands []int32
	for id := int32(1); id <= int32(w.cfg.Nodes); id++ {
		if (id != c.host || c.down) && q.healthy(id) {
			cands = append(cands, id)
		}
	}
	if len(cands) == 0 {
		q.electAt = w.now + w.cfg.ElectionMs
		return
	}
	q.transfer(cands[w.rng.IntN(len(cands))])
}

// never is a time that does not come.
const never = int64(1) << 62

// transfer hands the controller to host: the old controller's safe
// proposals commit in order up to a random point (those that reached the
// new leader's log), unanswered; the rest are lost. An old controller
// that has not stepped down stays, deposed, believing it leads until it
// does or hears of the new term.
func (q *quorum) transfer(host int32) {
	w := q.w
	old := q.cur
	keep := 0
	for keep < len(old.pending) && old.pending[keep].safe && w.rng.IntN(2) == 0 {
		keep++
	}
	for _, p := range old.pending[:keep] {
		q.commit(p.recs, p.planned)
	}
	old.pending = nil
	if !old.down && w.nodes[old.host].state != nodeDead && old.host != host {
		q.stale = old
		w.trace("ctl-deposed", old.host, int64(old.term), old.stepDownAt-startMs, 0)
	}
	q.takeOver(host)
}

// resumed is told that node id resumed: a controller there that lost its
// majority counts an election timeout from now before CheckQuorum steps
// it down.
func (q *quorum) resumed(id int32) {
	w := q.w
	for _, c := range []*controller{q.cur, q.stale} {
		if c != nil && c.host == id && c.stepDownAt == never {
			c.stepDownAt = w.now + w.cfg.ElectionMs + w.rng.Int64N(w.cfg.ElectionMs)
		}
	}
}

// heardTerm is told that node id received a message of term: a deposed
// controller there steps down.
func (q *quorum) heardTerm(id int32, term uint64) {
	if c := q.stale; c != nil && c.host == id && term > c.term {
		q.stale = nil
	}
}

// duties are the controller's own work on its host's tick: fence the
// brokers whose sessions expired, and create the test topic once every
// broker is registered and unfenced (the admin's CreateTopics).
func (q *quorum) duties(c *controller) {
	w := q.w
	if !c.fencing {
		fenced, recs := c.ctl.FenceExpired(c.spec, w.now)
		if len(recs) > 0 {
			for _, ref := range fenced {
				w.trace("fence-expired", ref.NodeID, ref.Epoch, 0, 0)
				if w.net.linked(c.host, ref.NodeID) && w.now-q.linkedSince(c.host, ref.NodeID) > w.cfg.SessionMs {
					// Up and reachable for a whole session, yet expired.
					q.healthyFenced++
					w.trace("healthy-fenced", ref.NodeID, 0, 0, 0)
				}
			}
			c.fencing = true
			q.propose(c, recs, false, func(int64) { c.fencing = false })
		}
	}
	if !q.topicAsked && q.allUnfenced(c.spec) {
		q.topicAsked = true
		minISR := "2"
		rf := w.cfg.ReplicationFactor
		if rf == 0 {
			rf = w.cfg.Nodes
		}
		req := &metadata.CreateTopicsRequest{Topics: []metadata.CreatableTopic{{
			Name: topicName, NumPartitions: int32(w.cfg.Partitions), ReplicationFactor: int16(rf),
			Configs: []metadata.ConfigValue{{Name: "min.insync.replicas", Value: &minISR}},
		}}}
		q.decide(c, req, func(res metadata.Result, _ int64) {
			if t := res.(*metadata.CreateTopicsResult).Topics[0]; t.Error.Failed() {
				q.topicAsked = false
			}
		})
	}
}

// topicName is the simulated topic.
const topicName = "sim"

// allUnfenced reports whether every node is registered and unfenced in img.
func (q *quorum) allUnfenced(img *metadata.Image) bool {
	for id := int32(1); id <= int32(q.w.cfg.Nodes); id++ {
		if b, ok := img.Broker(id); !ok || b.Fenced {
			return false
		}
	}
	return true
}

// members is memberlist's failure detector as the controller hears it: a
// node that no other running node reaches, directly or through a third
// (memberlist's indirect probes), for cfg.DetectMs is declared failed
// (Sessions.MemberFailed), and alive again once reached.
func (q *quorum) members() {
	w := q.w
	for id := int32(1); id <= int32(w.cfg.Nodes); id++ {
		if q.reachable(id) {
			q.unreachableSince[id] = -1
			if q.failed[id] {
				q.failed[id] = false
				if q.cur != nil {
					q.cur.ctl.Sessions.MemberAlive(id)
				}
				w.trace("member-alive", id, 0, 0, 0)
			}
			continue
		}
		if q.unreachableSince[id] < 0 {
			q.unreachableSince[id] = w.now
		}
		if !q.failed[id] && w.now-q.unreachableSince[id] >= w.cfg.DetectMs {
			q.failed[id] = true
			if q.cur != nil && w.cfg.Hints {
				q.cur.ctl.Sessions.MemberFailed(id, w.now)
			}
			w.trace("member-failed", id, 0, 0, 0)
		}
	}
}

// reachable reports whether some running node other than id reaches it,
// directly or through another.
func (q *quorum) reachable(id int32) bool {
	w := q.w
	if w.nodes[id].state != nodeRunning {
		return false
	}
	for a := int32(1); a <= int32(w.cfg.Nodes); a++ {
		if a == id || w.nodes[a].state != nodeRunning {
			continue
		}
		if w.net.linked(a, id) {
			return true
		}
		for b := int32(1); b <= int32(w.cfg.Nodes); b++ {
			if b != a && b != id && w.net.linked(a, b) && w.net.linked(b, id) {
				return true
			}
		}
	}
	return false
}

// linkedSince is a lower bound of the time since which a and b have been
// linked: the later of the end of their link's last cut and of the last
// start, pause or resume of either (which the nodes record).
func (q *quorum) linkedSince(a, b int32) int64 {
	w := q.w
	t := w.net.cutUntil[linkKey(a, b)]
	for _, id := range []int32{a, b} {
		t = max(t, w.nodes[id].upSince)
	}
	return t
}
