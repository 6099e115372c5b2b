package sim

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/cluster/metadata"
)

// balancer is cluster/leader_balance.go's driver (unexported there, so
// its shell is restated here; its rule is metadata.PreferredMoves, the
// hand-over is partition.Replica's and the move metadata.Controller's):
// now and then (every RebalanceMs on average, seeded) a node whose
// registration is current and unfenced in its image asks PreferredMoves
// which of its leaderships go back to their preferred replicas, starts a
// rebalance hand-over (partition.HandOver with Rebalance) on each, takes
// the HandOverReady answers that come within rebalanceReadyWaitMs
// (calling off the rest, and those naming another successor or an error),
// and sends MoveLeadersRequest with KeepISR through the node's controller
// routing until each move is settled: moved; INELIGIBLE_REPLICA (called
// off); any other answer sent again after rebalanceRetryMs, until the
// image shows the partition changed. One check runs at a time: the real
// driver's goroutine blocks in it, and its ticker drops the ticks that
// fall meanwhile.
type balancer struct {
	n *node
	// running is set while a check is in progress; round numbers the
	// checks, so that a timer of an earlier one is ignored.
	running bool
	round   int
	// holding is set while HandOverReady answers are taken.
	holding bool
	nextID  uint64
	// asked are the hand-overs waiting for their HandOverReady, and
	// ready those whose successor caught up, in the order asked.
	asked, ready []*heldMove
	// epoch is the broker epoch the check started with.
	epoch int64
	// settled is the unfenced brokers' epochs at the previous check
	// (rebalanceOnce's settled).
	settled map[int32]int64
}

// heldMove is a partition whose leader holds appends for a move.
type heldMove struct {
	id   uint64
	s    *replicaShell
	move metadata.LeaderMove
}

// The real driver's timings (cluster/leader_balance.go).
const (
	rebalanceReadyWaitMs = 1000
	rebalanceRetryMs     = 250
)

// imbalancePercent is leader.imbalance.per.broker.percentage's default.
var imbalancePercent = int(config.NewBroker().Int("leader.imbalance.per.broker.percentage"))

func newBalancer(n *node) *balancer { return &balancer{n: n} }

// schedule plans the node's next check.
func (b *balancer) schedule() {
	w := b.n.w
	if w.cfg.RebalanceMs <= 0 {
		return
	}
	w.after(w.cfg.RebalanceMs/2+w.rng.Int64N(w.cfg.RebalanceMs), b.n.id, func() {
		b.check()
		b.schedule()
	})
}

// check is rebalanceOnce's start: the moves PreferredMoves picks on the
// node's image, each a rebalance hand-over sent to its replica.
func (b *balancer) check() {
	n := b.n
	w := n.w
	if b.running || n.replicas == nil {
		return
	}
	if n.epoch == 0 {
		b.settled = nil
		return
	}
	img := n.img
	settled := b.settled
	b.settled = metadata.UnfencedEpochs(img)
	if br, ok := img.Broker(n.id); !ok || br.Fenced || br.Epoch != n.epoch {
		return
	}
	want := metadata.PreferredMoves(img, n.id, imbalancePercent, settled)
	if len(want) == 0 {
		return
	}
	b.running, b.holding, b.epoch = true, true, n.epoch
	b.round++
	b.asked, b.ready = nil, nil
	for _, m := range want {
		if m.TopicID != n.topicID || int(m.Partition) >= len(n.replicas) {
			continue
		}
		s := n.replicas[m.Partition]
		b.nextID++
		h := &heldMove{id: b.nextID, s: s, move: metadata.LeaderMove{TopicID: m.TopicID, Partition: m.Partition, To: m.To}}
		b.asked = append(b.asked, h)
		w.chk.handOvers++
		w.trace("hand-over", n.id, int64(m.Partition), int64(m.To), int64(h.id))
		msg := &partition.HandOver{ID: h.id, Rebalance: true, To: m.To}
		n.post(func() {
			s.handOverTo = b
			s.step(func(r *partition.Replica) partition.Output { return r.OnHandOver(msg) })
		})
	}
	round := b.round
	w.after(rebalanceReadyWaitMs, n.id, func() {
		if b.round == round && b.holding {
			b.endHold()
		}
	})
}

// onReady takes a replica's HandOverReady (holdForMoves' loop).
func (b *balancer) onReady(h *partition.HandOverReady) {
	if !b.holding {
		return // the inbox is closed
	}
	i := slices.IndexFunc(b.asked, func(m *heldMove) bool { return m.id == h.ID })
	if i < 0 {
		return
	}
	m := b.asked[i]
	b.asked = slices.Delete(b.asked, i, i+1)
	if h.ErrorCode != 0 || h.Successor != m.move.To {
		b.cancel(m)
	} else {
		m.move.LeaderEpoch, m.move.PartitionEpoch = h.LeaderEpoch, h.PartitionEpoch
		b.ready = append(b.ready, m)
	}
	if len(b.asked) == 0 {
		b.endHold()
	}
}

// endHold calls off the hand-overs still unanswered and moves on to
// settling the ready ones.
func (b *balancer) endHold() {
	b.holding = false
	for _, m := range b.asked {
		b.cancel(m)
	}
	b.asked = nil
	moves := b.ready
	b.ready = nil
	if len(moves) == 0 {
		b.running = false
		return
	}
	b.n.w.trace("rebalance", b.n.id, int64(len(moves)), 0, 0)
	b.settle(moves)
}

// settle sends one MoveLeadersRequest for moves (settleMoves' loop).
func (b *balancer) settle(moves []*heldMove) {
	n := b.n
	w := n.w
	req := &metadata.MoveLeadersRequest{BrokerID: n.id, BrokerEpoch: b.epoch, KeepISR: true,
		Moves: make([]metadata.LeaderMove, len(moves))}
	for i, m := range moves {
		req.Moves[i] = m.move
	}
	round := b.round
	n.submit(req, func(r metadata.Result) {
		if b.round != round {
			return
		}
		res := r.(*metadata.MoveLeadersResult)
		kept := moves[:0]
		for i, e := range res.Errors {
			w.trace("move-answer", n.id, int64(moves[i].move.Partition), int64(moves[i].move.To), int64(e.Code))
			switch {
			case !e.Failed():
			case e.Code == kerr.IneligibleReplica.Code:
				w.chk.moveIneligible++
				b.cancel(moves[i])
			default:
				w.chk.moveRetries++
				kept = append(kept, moves[i])
			}
		}
		if len(kept) == 0 {
			b.running = false
			return
		}
		w.after(rebalanceRetryMs, n.id, func() {
			if b.round != round {
				return
			}
			img := n.img
			kept = slices.DeleteFunc(kept, func(m *heldMove) bool { return moveSettled(img, m.move) })
			if len(kept) == 0 {
				b.running = false
				return
			}
			b.settle(kept)
		})
	})
}

// cancel sends m's replica HandOverCancel.
func (b *balancer) cancel(m *heldMove) {
	w := b.n.w
	w.chk.handOverCancels++
	w.trace("hand-over-cancel", b.n.id, int64(m.move.Partition), int64(m.id), 0)
	msg := &partition.HandOverCancel{ID: m.id}
	s := m.s
	b.n.post(func() {
		s.checkHeldLease()
		s.step(func(r *partition.Replica) partition.Output { return r.OnHandOverCancel(msg) })
	})
}

// moveSettled is cluster/leader_balance.go's: img shows the partition of
// m changed since the move was made, or gone.
func moveSettled(img *metadata.Image, m metadata.LeaderMove) bool {
	p, ok := img.Partition(m.TopicID, m.Partition)
	return !ok || p.LeaderEpoch != m.LeaderEpoch || p.PartitionEpoch != m.PartitionEpoch
}
