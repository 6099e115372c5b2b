package cluster

import (
	"context"
	"time"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster/metadata"
)

// controlledShutdownTimeout bounds the hand-over of a stopping node's
// leaderships; past it the node stops anyway and the controller fences it
// when its session ends.
const controlledShutdownTimeout = 10 * time.Second

// shutdownStarted tells the metadata actor that the node is shutting
// down: it no longer proposes itself as a leader; with fence set, it also
// stops heartbeating (a heartbeat would unfence it again).
type shutdownStarted struct{ fence bool }

// controlledShutdown hands this node's leaderships to in-sync followers
// that hold each leader's whole log, leaves the ISRs of the partitions it
// follows, and asks the controller to fence it, before the node stops
// serving (docs/DESIGN.md "Controlled shutdown"). The Kafka listener keeps
// serving meanwhile, so the followers can fetch the last records.
func (n *Node) controlledShutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), controlledShutdownTimeout)
	defer cancel()
	epoch := n.BrokerEpoch()
	if epoch == 0 || n.quorumLeader.Load() < 0 {
		// Not registered, or no controller to hand anything to (the
		// quorum is gone): there is nothing to move.
		return
	}
	n.system.Root.Send(n.meta, &shutdownStarted{})
	moves := n.handOverAll(ctx)
	res, err := n.Metadata(ctx, &metadata.MoveLeadersRequest{BrokerID: n.id, BrokerEpoch: epoch, Moves: moves, LeaveISR: true})
	if err != nil {
		n.log.Warn("controlled shutdown: leaderships not moved", "err", err)
		return
	}
	moved := 0
	for i, e := range res.(*metadata.MoveLeadersResult).Errors {
		if e.Failed() {
			n.log.Warn("controlled shutdown: a leadership not moved", "topic_id", moves[i].TopicID.String(),
				"partition", moves[i].Partition, "code", e.Code, "message", e.Message)
			continue
		}
		moved++
	}
	// Fenced now, this node is elected nowhere while it goes.
	n.system.Root.Send(n.meta, &shutdownStarted{fence: true})
	if _, err := n.Metadata(ctx, &metadata.BrokerHeartbeatRequest{NodeID: n.id, BrokerEpoch: epoch,
		MetadataOffset: n.Image().Offset(), WantFence: true, WantShutDown: true}); err != nil {
		n.log.Warn("controlled shutdown: not fenced", "err", err)
	}
	n.log.Info("controlled shutdown", "leaderships_moved", moved, "left_isr", res.(*metadata.MoveLeadersResult).LeftISR)
}

// handOverAll asks every partition this node leads to hand over, and
// returns the moves to the successors they chose.
func (n *Node) handOverAll(ctx context.Context) []metadata.LeaderMove {
	in := partition.NewInbox(n.system)
	defer in.Close()
	img := n.Image()
	asked := map[uint64]replicaKey{}
	for _, t := range img.Topics() {
		for i := range t.NumPartitions() {
			p, _ := t.Partition(i)
			if p.Leader != n.id || len(p.ISR) < 2 {
				continue
			}
			c := n.replicas.get(t.ID(), i)
			if c == nil {
				continue
			}
			id := in.NextID()
			asked[id] = replicaKey{t.ID(), i}
			c.SendHandOver(&partition.HandOver{ID: id}, in.PID())
		}
	}
	var moves []metadata.LeaderMove
	for len(asked) > 0 {
		m, err := in.Receive(ctx)
		if err != nil {
			n.log.Warn("controlled shutdown: partitions without a caught-up follower", "partitions", len(asked))
			break
		}
		h, ok := m.(*partition.HandOverReady)
		if !ok {
			continue
		}
		k, ok := asked[h.ID]
		if !ok {
			continue
		}
		delete(asked, h.ID)
		if h.ErrorCode != 0 || h.Successor < 0 {
			continue
		}
		moves = append(moves, metadata.LeaderMove{TopicID: k.topic, Partition: k.index,
			LeaderEpoch: h.LeaderEpoch, PartitionEpoch: h.PartitionEpoch, To: h.Successor})
	}
	return moves
}
