package sim

import (
	"bytes"
	"fmt"
	"slices"
	"sort"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/log/batch"
)

// checker holds the invariants, checked after every step (and at the
// moments named below):
//
//  1. Leadership: at most one node acknowledges produces for a (partition,
//     leader epoch); no two nodes lead a partition with a valid lease at
//     the same moment (but the old leader of a committed planned move,
//     which keeps its lease and leads until it applies the move, holding
//     appends meanwhile); a leader appends a client's batch only while the
//     sequencer's committed image names it leader at that epoch.
//  2. Every batch acknowledged with acks=all is in the log, byte for byte
//     at its offset, of every leader elected after (checked when a
//     replica becomes leader), and of every leader of a later epoch that
//     already leads when it is acknowledged.
//  3. A leader's high watermark never goes backwards within its epoch,
//     and the committed prefix (every batch below any leader's high
//     watermark, ever) never changes or shrinks: every new leader holds
//     it, and no leader commits another batch at a committed offset.
//  4. A broker fenced in the sequencer's committed image (or no longer
//     registered with its epoch) never accepts a produce (appends a
//     client's batch as leader) and never acknowledges an acks=0/1 one.
//     An acks=all produce it accepted unfenced may complete after its
//     fencing (followers that have not applied the fence still fetch
//     from it); those are counted (fencedAcksAll), and invariant 2
//     checks that nothing they acknowledged is lost.
//  5. Every member of a partition's ISR in the sequencer's committed
//     image holds the committed prefix (checked when the ISR changes and
//     when the prefix grows): the state from which an election could lose
//     acknowledged records, caught before an election happens to.
//  6. Likewise every eligible leader replica (KIP-966: the ELR, which the
//     controller may elect cleanly once no ISR member is left) holds the
//     committed prefix, checked when the ELR changes and when the prefix
//     grows. (The last known ELR is not checked: its members came back
//     from an unclean shutdown, which may lose records in weir, though not
//     here, where a killed node keeps its disk.)
//  7. A planned move loses nothing the old leader acknowledged: a batch
//     acknowledged with acks=1 or acks=all by the leader at leader epoch E
//     is in the log of the leader at the next epoch whenever that epoch
//     came from a planned move (a committed MoveLeadersRequest batch, not
//     an election), checked when the successor becomes leader at it, and
//     for an acknowledgement at E that comes after, against the
//     successor's log as it took over.
type checker struct {
	w     *world
	ackBy map[[2]int64]int32
	// committed is, per partition, the committed prefix as contiguous
	// batches from offset 0.
	committed [][]storedBatch
	// acked is, per partition, the acks=all acknowledged batches;
	// verified counts those checked against the committed prefix.
	acked    [][]storedBatch
	verified []int
	// Figures for the run's summary: elections won from the ELR and from
	// the last known ELR are counted as the committed images show them.
	fencedAcksAll, leaderships       int
	elrElections, lastKnownElections int
	ending                           bool
	// ackedAny is, per partition, every batch acknowledged with acks=1
	// or acks=all, and planned the planned moves committed (invariant 7).
	ackedAny [][]storedBatch
	planned  [][]*plannedMove
	// The rebalances' figures: hand-overs started and called off,
	// planned moves committed, those whose successor was checked as it
	// took over, and the MoveLeaders answers INELIGIBLE_REPLICA and
	// retried.
	handOvers, handOverCancels, plannedMoves, plannedChecked int
	moveIneligible, moveRetries                              int
}

// plannedMove is a committed planned move of a partition's leadership,
// from leader epoch fromEpoch to toEpoch. snap is the successor's log as
// it took over (nil until then).
type plannedMove struct {
	from, to           int32
	fromEpoch, toEpoch int32
	snap               *memLog
}

// storedBatch is a batch as stored at base (the exact bytes), and by whom.
type storedBatch struct {
	base, last int64
	data       []byte
	node       int32
	epoch      int32
}

func newChecker(w *world) *checker {
	p := w.cfg.Partitions
	return &checker{w: w, ackBy: map[[2]int64]int32{}, committed: make([][]storedBatch, p),
		acked: make([][]storedBatch, p), verified: make([]int, p),
		ackedAny: make([][]storedBatch, p), planned: make([][]*plannedMove, p)}
}

// registered reports whether n's registration is current and unfenced in
// the sequencer's committed image.
func (c *checker) registered(n *node) bool {
	b, ok := c.w.quorum.image().Broker(n.id)
	return ok && b.Epoch == n.epoch && !b.Fenced
}

// onLeaderAppend is told that s appends a client's batch as leader.
func (c *checker) onLeaderAppend(s *replicaShell) {
	w := c.w
	n := s.n
	st := s.r.Status()
	if !c.registered(n) {
		w.fail("invariant 4: node %d (broker epoch %d, lease from t=%d) accepts a produce on partition %d at leader epoch %d while fenced in the committed image",
			n.id, n.epoch, n.leaseFrom-startMs, s.part, st.LeaderEpoch)
		return
	}
	if p, _ := w.quorum.image().Partition(n.topicID, s.part); p.Leader != n.id || p.LeaderEpoch != st.LeaderEpoch {
		w.fail("invariant 1: node %d accepts a produce on partition %d as leader at epoch %d; the committed image has leader %d at epoch %d",
			n.id, s.part, st.LeaderEpoch, p.Leader, p.LeaderEpoch)
	}
}

// onProduceAck is told that s acknowledges a produce at base.
func (c *checker) onProduceAck(s *replicaShell, acks int16, base int64) {
	w := c.w
	n := s.n
	st := s.r.Status()
	k := [2]int64{int64(s.part), int64(st.LeaderEpoch)}
	if other, ok := c.ackBy[k]; ok && other != n.id {
		w.fail("invariant 1: nodes %d and %d both acknowledge produces on partition %d at leader epoch %d", other, n.id, s.part, st.LeaderEpoch)
		return
	}
	c.ackBy[k] = n.id
	w.trace("ack", n.id, int64(s.part), base, int64(acks))
	if acks == 1 {
		c.plannedAck(s, st.LeaderEpoch, base)
	}
	if acks != -1 {
		if !c.registered(n) {
			w.fail("invariant 4: node %d acknowledges an acks=%d produce on partition %d at offset %d while fenced in the committed image", n.id, acks, s.part, base)
		}
		return
	}
	if !c.registered(n) {
		c.fencedAcksAll++
	}
	data := s.log.batchAt(base)
	if data == nil {
		w.fail("node %d acknowledges an acks=all batch at offset %d of partition %d that its log does not hold", n.id, base, s.part)
		return
	}
	last := batch.LastOffset(data)
	if st.HighWatermark <= last {
		w.fail("node %d acknowledges an acks=all batch at %d-%d of partition %d below its high watermark %d", n.id, base, last, s.part, st.HighWatermark)
		return
	}
	a := storedBatch{base: base, last: last, data: data, node: n.id, epoch: st.LeaderEpoch}
	c.acked[s.part] = append(c.acked[s.part], a)
	c.plannedAck(s, st.LeaderEpoch, base)
	if w.failure != nil {
		return
	}
	// Leaders of later epochs already elected must hold it too.
	for _, o := range w.nodes[1:] {
		if o.state == nodeDead || o.replicas == nil {
			continue
		}
		os := o.replicas[s.part]
		if ost := os.r.Status(); ost.Role == partition.Leader && ost.LeaderEpoch > st.LeaderEpoch {
			if !bytes.Equal(os.log.batchAt(base), data) {
				w.fail("invariant 2: node %d acknowledges acks=all offset %d of partition %d at epoch %d, which node %d, already leading at epoch %d, does not hold",
					n.id, base, s.part, st.LeaderEpoch, o.id, ost.LeaderEpoch)
				return
			}
		}
	}
}

// observe checks a replica after each of its steps: a new leadership
// (newLeader), its high watermark within the epoch, and the batches the
// high watermark passed (commit).
func (c *checker) observe(s *replicaShell) {
	w := c.w
	st := s.r.Status()
	if st.Role != partition.Leader {
		s.chkEpoch = -1
		return
	}
	if st.LeaderEpoch != s.chkEpoch {
		s.chkEpoch, s.chkHW = st.LeaderEpoch, st.HighWatermark
		c.newLeader(s, &st)
		return
	}
	if st.HighWatermark < s.chkHW {
		w.fail("invariant 3: the high watermark of node %d on partition %d went back from %d to %d at leader epoch %d",
			s.n.id, s.part, s.chkHW, st.HighWatermark, st.LeaderEpoch)
		return
	}
	if st.HighWatermark > s.chkHW {
		c.commit(s, &st, s.chkHW, st.HighWatermark)
		s.chkHW = st.HighWatermark
	}
}

// afterStep checks, after every step of the world, that no two nodes lead
// a partition with a valid lease, and that the acks=all batches
// acknowledged in the step are in the committed prefix.
func (c *checker) afterStep() {
	w := c.w
	for part := range w.cfg.Partitions {
		leasing := int32(0)
		for _, n := range w.nodes[1:] {
			if n.state == nodeDead || n.replicas == nil || !n.leaseValid() {
				continue
			}
			if st := n.replicas[part].r.Status(); st.Role != partition.Leader || c.movedFrom(int32(part), st.LeaderEpoch) {
				continue
			}
			if leasing != 0 {
				w.fail("invariant 1: nodes %d and %d both lead partition %d with a valid lease", leasing, n.id, part)
				return
			}
			leasing = n.id
		}
		c.verifyAcked(int32(part))
	}
}

// movedFrom reports whether a committed planned move of part ended leader
// epoch epoch.
func (c *checker) movedFrom(part, epoch int32) bool {
	for _, pm := range c.planned[part] {
		if pm.fromEpoch == epoch {
			return true
		}
	}
	return false
}

// newLeader checks a replica that just became leader: every acks=all
// batch acknowledged so far, and the whole committed prefix, are in its
// log, when acknowledged or committed at an epoch not above its own (a
// restarted node may lead for a moment at the old epoch its stale image
// names: it cannot write, lacking the lease, and is no later leader).
func (c *checker) newLeader(s *replicaShell, st *partition.Status) {
	w := c.w
	c.leaderships++
	if !c.ending {
		w.trace("leader", s.n.id, int64(s.part), int64(st.LeaderEpoch), s.log.leo)
	}
	for _, a := range c.acked[s.part] {
		if a.epoch <= st.LeaderEpoch && !bytes.Equal(s.log.batchAt(a.base), a.data) {
			w.fail("invariant 2: acks=all batch at offset %d of partition %d (acknowledged by node %d at epoch %d) is not in the log of node %d, leader at epoch %d (log end %d)",
				a.base, s.part, a.node, a.epoch, s.n.id, st.LeaderEpoch, s.log.leo)
			return
		}
	}
	for _, b := range c.committed[s.part] {
		if b.epoch <= st.LeaderEpoch && !bytes.Equal(s.log.batchAt(b.base), b.data) {
			w.fail("invariant 3: committed batch at offset %d of partition %d (committed by node %d at epoch %d) is not in the log of node %d, leader at epoch %d (log end %d)",
				b.base, s.part, b.node, b.epoch, s.n.id, st.LeaderEpoch, s.log.leo)
			return
		}
	}
	c.plannedSuccessor(s, st)
}

// plannedSuccessor checks a replica that just became leader at an epoch a
// planned move made (invariant 7): it holds every batch acknowledged at
// the epoch before, with acks=1 or acks=all.
func (c *checker) plannedSuccessor(s *replicaShell, st *partition.Status) {
	w := c.w
	for _, pm := range c.planned[s.part] {
		if pm.toEpoch != st.LeaderEpoch || pm.to != s.n.id || pm.snap != nil {
			continue
		}
		for _, a := range c.ackedAny[s.part] {
			if a.epoch == pm.fromEpoch && !bytes.Equal(s.log.batchAt(a.base), a.data) {
				w.fail("invariant 7: batch at offset %d of partition %d, acknowledged by node %d at epoch %d, is not in the log of node %d, leader at epoch %d by a planned move (log end %d)",
					a.base, s.part, a.node, a.epoch, s.n.id, st.LeaderEpoch, s.log.leo)
				return
			}
		}
		l := s.log
		pm.snap = &memLog{start: l.start, leo: l.leo, batches: slices.Clone(l.batches), bases: slices.Clone(l.bases), lasts: slices.Clone(l.lasts)}
		c.plannedChecked++
	}
}

// plannedAck records a batch s acknowledged at epoch with acks=1 or
// acks=all, and checks it against the successors of planned moves from
// epoch that already took over (invariant 7).
func (c *checker) plannedAck(s *replicaShell, epoch int32, base int64) {
	data := s.log.batchAt(base)
	if data == nil {
		c.w.fail("node %d acknowledges a batch at offset %d of partition %d that its log does not hold", s.n.id, base, s.part)
		return
	}
	c.ackedAny[s.part] = append(c.ackedAny[s.part], storedBatch{base: base, last: batch.LastOffset(data), data: data, node: s.n.id, epoch: epoch})
	for _, pm := range c.planned[s.part] {
		if pm.fromEpoch == epoch && pm.snap != nil && !bytes.Equal(pm.snap.batchAt(base), data) {
			c.w.fail("invariant 7: node %d acknowledges offset %d of partition %d at epoch %d after node %d took over at epoch %d by a planned move without it",
				s.n.id, base, s.part, epoch, pm.to, pm.toEpoch)
			return
		}
	}
}

// commit records that leader s's high watermark passed [from, to): its
// batches there must be the committed ones, or extend the prefix, and a
// batch that extends it must be in the log of every leader of a later
// epoch already elected.
func (c *checker) commit(s *replicaShell, st *partition.Status, from, to int64) {
	w := c.w
	part := s.part
	l := s.log
	i := sort.Search(len(l.lasts), func(i int) bool { return l.lasts[i] >= from })
	for ; i < len(l.batches) && l.bases[i] < to; i++ {
		base, data := l.bases[i], l.batches[i]
		cs := c.committed[part]
		end := int64(0)
		if len(cs) > 0 {
			end = cs[len(cs)-1].last + 1
		}
		switch {
		case base < end:
			j := sort.Search(len(cs), func(j int) bool { return cs[j].base >= base })
			if j == len(cs) || cs[j].base != base || !bytes.Equal(cs[j].data, data) {
				w.fail("invariant 3: node %d at leader epoch %d commits a batch at offset %d of partition %d other than the one committed there before",
					s.n.id, st.LeaderEpoch, base, part)
				return
			}
		case base == end:
			b := storedBatch{base: base, last: l.lasts[i], data: data, node: s.n.id, epoch: st.LeaderEpoch}
			c.committed[part] = append(cs, b)
			c.laterLeadersHold(s, st, b)
			c.isrHolds(part, c.w.quorum.image(), []storedBatch{b})
		default:
			w.fail("invariant 3: node %d at leader epoch %d commits offset %d of partition %d past the committed prefix's end %d",
				s.n.id, st.LeaderEpoch, base, part, end)
			return
		}
		if w.failure != nil {
			return
		}
	}
}

// laterLeadersHold checks that leaders of later epochs hold b, a batch s
// just committed.
func (c *checker) laterLeadersHold(s *replicaShell, st *partition.Status, b storedBatch) {
	w := c.w
	for _, o := range w.nodes[1:] {
		if o == s.n || o.state == nodeDead || o.replicas == nil {
			continue
		}
		os := o.replicas[s.part]
		if ost := os.r.Status(); ost.Role == partition.Leader && ost.LeaderEpoch > st.LeaderEpoch && !bytes.Equal(os.log.batchAt(b.base), b.data) {
			w.fail("invariant 3: node %d at epoch %d commits offset %d of partition %d, which node %d, already leading at epoch %d, does not hold",
				s.n.id, st.LeaderEpoch, b.base, s.part, o.id, ost.LeaderEpoch)
			return
		}
	}
}

// verifyAcked checks that the acks=all batches acknowledged since the
// last call are in the committed prefix.
func (c *checker) verifyAcked(part int32) {
	as := c.acked[part]
	cs := c.committed[part]
	for ; c.verified[part] < len(as); c.verified[part]++ {
		a := as[c.verified[part]]
		j := sort.Search(len(cs), func(j int) bool { return cs[j].base >= a.base })
		if j == len(cs) || cs[j].base != a.base || !bytes.Equal(cs[j].data, a.data) {
			end := int64(0)
			if len(cs) > 0 {
				end = cs[len(cs)-1].last + 1
			}
			other := "no batch"
			if j < len(cs) && cs[j].base == a.base {
				other = fmt.Sprintf("another batch, committed by node %d at epoch %d", cs[j].node, cs[j].epoch)
			}
			c.w.fail("invariant 2: acks=all batch at offset %d of partition %d acknowledged by node %d at epoch %d is not in the committed prefix (ending at %d; %s there)",
				a.base, part, a.node, a.epoch, end, other)
			return
		}
	}
}

// final checks the end of the run: the leaders then hold everything.
func (c *checker) final() {
	c.ending = true
	for _, n := range c.w.nodes[1:] {
		if n.state == nodeDead || n.replicas == nil {
			continue
		}
		for _, s := range n.replicas {
			if st := s.r.Status(); st.Role == partition.Leader {
				c.newLeader(s, &st)
				c.leaderships--
			}
		}
	}
}

// isrHolds checks that every member of part's ISR (invariant 5) and ELR
// (invariant 6) in img holds bs.
func (c *checker) isrHolds(part int32, img *metadata.Image, bs []storedBatch) {
	w := c.w
	t, ok := img.Topic(topicName)
	if !ok {
		return
	}
	p, _ := t.Partition(part)
	for _, set := range []struct {
		invariant int
		name      string
		members   []int32
	}{{5, "ISR", p.ISR}, {6, "ELR", p.ELR}} {
		for _, m := range set.members {
			l := w.nodes[m].disk[part]
			for _, b := range bs {
				if !bytes.Equal(l.batchAt(b.base), b.data) {
					w.fail("invariant %d: node %d, in the %s %v of partition %d (ISR %v, partition epoch %d), lacks committed offset %d (committed by node %d at epoch %d; its log ends at %d)",
						set.invariant, m, set.name, set.members, part, p.ISR, p.PartitionEpoch, b.base, b.node, b.epoch, l.leo)
					return
				}
			}
		}
	}
}

// onImage checks a newly committed image: a partition whose ISR or ELR
// changed must have every member holding the committed prefix. A new
// leader in a planned batch (a MoveLeadersRequest's) is a planned move.
func (c *checker) onImage(prev, img *metadata.Image, planned bool) {
	t, ok := img.Topic(topicName)
	if !ok {
		return
	}
	pt, hadTopic := prev.Topic(topicName)
	for i := range t.NumPartitions() {
		p, _ := t.Partition(i)
		if hadTopic {
			q, _ := pt.Partition(i)
			if planned && p.LeaderEpoch != q.LeaderEpoch {
				if !p.HasLeader() || !q.HasLeader() || p.LeaderEpoch != q.LeaderEpoch+1 {
					c.w.fail("a planned move of partition %d goes from leader %d at epoch %d to %d at epoch %d", i, q.Leader, q.LeaderEpoch, p.Leader, p.LeaderEpoch)
					return
				}
				c.planned[i] = append(c.planned[i], &plannedMove{from: q.Leader, to: p.Leader, fromEpoch: q.LeaderEpoch, toEpoch: p.LeaderEpoch})
				c.plannedMoves++
				c.w.trace("planned-move", p.Leader, int64(i), int64(q.LeaderEpoch), int64(p.LeaderEpoch))
			}
			if p.HasLeader() && !q.HasLeader() {
				switch {
				case q.InELR(p.Leader):
					c.elrElections++
				case q.InLastKnownELR(p.Leader):
					c.lastKnownElections++
				}
			}
			if slices.Equal(p.ISR, q.ISR) && slices.Equal(p.ELR, q.ELR) {
				continue
			}
		}
		c.isrHolds(i, img, c.committed[i])
		if c.w.failure != nil {
			return
		}
	}
}
