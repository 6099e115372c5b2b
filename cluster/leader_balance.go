package cluster

import (
	"context"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster/metadata"
)

// Preferred leaders (docs/DESIGN.md "Preferred leaders"): every
// leader.imbalance.check.interval.seconds a node hands the partitions it
// leads that metadata.PreferredMoves picks back to their preferred
// replicas. Each goes through a rebalance hand-over (partition.HandOver
// with Rebalance): the leader holds new appends, the preferred replica
// fetches up to the log end, and the controller moves leadership with the
// old leader staying in the ISR (MoveLeadersRequest.KeepISR). Nothing the
// old leader acknowledged is lost, acks=1 records included.
//
// Writes stay held until the move is settled, and they resume on this
// leader only when the move can no longer apply:
//   - before the MoveLeaders request is sent (a successor that is not
//     caught up within rebalanceReadyWait, or the node stopping);
//   - on INELIGIBLE_REPLICA, which the controller answers only with the
//     partition unchanged in its image and in its proposals in flight, so
//     no move of it is pending;
//   - or when the image shows the partition changed while this replica
//     still leads it (the replica sees that itself).
// Any other answer (a stale epoch that may rest on a proposal still in
// flight, a timeout, no controller) is retried until one of those holds
// or the image shows the move.

// rebalanceReadyWait bounds how long a leader holds appends waiting for
// its preferred replica to fetch up to the log end before it calls the
// move off.
const rebalanceReadyWait = time.Second

// rebalanceRetry is the pause between MoveLeaders attempts.
const rebalanceRetry = 250 * time.Millisecond

// balanceLeaders runs the rebalance checks until stop closes.
func (n *Node) balanceLeaders(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	every := time.Duration(n.cfg.Broker.Int("leader.imbalance.check.interval.seconds")) * time.Second
	t := time.NewTicker(every)
	defer t.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-stop
		cancel()
	}()
	var settled map[int32]int64
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			settled = n.rebalanceOnce(ctx, settled)
		}
	}
}

// stopBalancer stops balanceLeaders and waits for it.
func (n *Node) stopBalancer() {
	if n.balanceStop == nil {
		return
	}
	select {
	case <-n.balanceStop:
	default:
		close(n.balanceStop)
	}
	<-n.balanceDone
}

// heldMove is a partition whose leader holds appends for a move.
type heldMove struct {
	id   uint64
	c    *partition.Client
	move metadata.LeaderMove
}

// rebalanceOnce moves this node's leaderships that the image says belong
// to their preferred replicas, to brokers unfenced since the previous
// check at the epochs settled holds, and returns once each move is settled
// (or ctx ends: a stopping node's controlled shutdown takes over). It
// returns the unfenced brokers' epochs, the next check's settled.
func (n *Node) rebalanceOnce(ctx context.Context, settled map[int32]int64) map[int32]int64 {
	epoch := n.BrokerEpoch()
	img := n.Image()
	if epoch == 0 || img == nil {
		return nil
	}
	next := metadata.UnfencedEpochs(img)
	if b, ok := img.Broker(n.id); !ok || b.Fenced || b.Epoch != epoch {
		return next
	}
	want := metadata.PreferredMoves(img, n.id, int(n.cfg.Broker.Int("leader.imbalance.per.broker.percentage")), settled)
	if len(want) == 0 {
		return next
	}
	moves := n.holdForMoves(ctx, want)
	if len(moves) == 0 {
		return next
	}
	n.log.Info("moving leaderships back to their preferred replicas", "partitions", len(moves))
	n.settleMoves(ctx, epoch, moves)
	return next
}

// holdForMoves starts a rebalance hand-over on each partition of want and
// returns those whose preferred replica caught up within
// rebalanceReadyWait; the others are called off.
func (n *Node) holdForMoves(ctx context.Context, want []metadata.PreferredMove) []heldMove {
	in := partition.NewInbox(n.system)
	defer in.Close()
	asked := map[uint64]heldMove{}
	for _, w := range want {
		c := n.replicas.get(w.TopicID, w.Partition)
		if c == nil {
			continue
		}
		id := in.NextID()
		asked[id] = heldMove{id: id, c: c, move: metadata.LeaderMove{TopicID: w.TopicID, Partition: w.Partition, To: w.To}}
		c.SendHandOver(&partition.HandOver{ID: id, Rebalance: true, To: w.To}, in.PID())
	}
	wait, cancel := context.WithTimeout(ctx, rebalanceReadyWait)
	defer cancel()
	var ready []heldMove
	for len(asked) > 0 {
		m, err := in.Receive(wait)
		if err != nil {
			break
		}
		h, ok := m.(*partition.HandOverReady)
		if !ok {
			continue
		}
		hm, ok := asked[h.ID]
		if !ok {
			continue
		}
		delete(asked, h.ID)
		if h.ErrorCode != 0 || h.Successor != hm.move.To {
			hm.c.CancelHandOver(hm.id)
			continue
		}
		hm.move.LeaderEpoch, hm.move.PartitionEpoch = h.LeaderEpoch, h.PartitionEpoch
		ready = append(ready, hm)
	}
	for _, hm := range asked {
		hm.c.CancelHandOver(hm.id)
	}
	if ctx.Err() != nil {
		// Stopping before anything was sent: nothing can apply.
		for _, hm := range ready {
			hm.c.CancelHandOver(hm.id)
		}
		return nil
	}
	return ready
}

// settleMoves asks the controller for moves until each is settled: moved,
// refused for good (then called off), or made moot by a change of the
// partition (the replica resumes by itself).
func (n *Node) settleMoves(ctx context.Context, epoch int64, moves []heldMove) {
	for attempt := 1; len(moves) > 0; attempt++ {
		req := &metadata.MoveLeadersRequest{BrokerID: n.id, BrokerEpoch: epoch, KeepISR: true,
			Moves: make([]metadata.LeaderMove, len(moves))}
		for i, hm := range moves {
			req.Moves[i] = hm.move
		}
		res, err := n.Metadata(ctx, req)
		if err == nil {
			kept := moves[:0]
			for i, e := range res.(*metadata.MoveLeadersResult).Errors {
				switch {
				case !e.Failed():
				case e.Code == kerr.IneligibleReplica.Code:
					moves[i].c.CancelHandOver(moves[i].id)
				default:
					kept = append(kept, moves[i])
				}
			}
			moves = kept
		} else if attempt%20 == 0 {
			n.log.Warn("leaderships held for a move to their preferred replicas", "partitions", len(moves), "err", err)
		}
		if len(moves) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(rebalanceRetry):
		}
		img := n.Image()
		moves = slices.DeleteFunc(moves, func(hm heldMove) bool { return moveSettled(img, hm.move) })
	}
}

// moveSettled reports whether img shows the partition of m changed since
// the move was made (moved, or changed with this leader staying: the move
// cannot apply any more), or gone.
func moveSettled(img *metadata.Image, m metadata.LeaderMove) bool {
	p, ok := img.Partition(m.TopicID, m.Partition)
	return !ok || p.LeaderEpoch != m.LeaderEpoch || p.PartitionEpoch != m.PartitionEpoch
}
