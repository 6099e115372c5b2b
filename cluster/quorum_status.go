package cluster

import (
	"context"

	"github.com/weirmq/weir/cluster/quorum"
	"github.com/weirmq/weir/wire"
)

// quorumStatus is DescribeQuorum's view of the quorum: the driver's status
// (read in the metadata actor, which owns it) with the write health the
// actor last published. Followers' fetch and caught-up times are not
// tracked yet (no node has followers before the replicated cluster): zero,
// which DescribeQuorum answers as -1, Kafka's "unknown".
func quorumStatus(s quorum.Status, h MetadataHealth, n *Node) wire.QuorumStatus {
	out := wire.QuorumStatus{
		Leader: s.Leader, LeaderID: s.LeaderID, LeaderEpoch: int32(s.Term), HighWatermark: s.HighWatermark,
		Writable: h.Writable, Stopped: h.Stopped, Since: h.Since, Cause: h.Cause, Now: n.cfg.Now(),
	}
	if !s.Leader {
		out.HighWatermark = -1
	}
	replicas := func(rs []quorum.ReplicaStatus) []wire.QuorumReplica {
		out := make([]wire.QuorumReplica, 0, len(rs))
		for _, r := range rs {
			out = append(out, wire.QuorumReplica{ID: r.ID, LogEndOffset: r.LogEndOffset})
		}
		return out
	}
	out.Voters, out.Observers = replicas(s.Voters), replicas(s.Observers)
	return out
}

// DescribeQuorum returns the metadata quorum's status, asked of the
// metadata actor; it waits at most until ctx ends.
func (n *Node) DescribeQuorum(ctx context.Context) (wire.QuorumStatus, error) {
	if n.stopped.Load() {
		return wire.QuorumStatus{}, ErrStopped
	}
	done := make(chan wire.QuorumStatus, 1)
	n.system.Root.Send(n.meta, &describeQuorum{reply: func(s wire.QuorumStatus) { done <- s }})
	select {
	case s := <-done:
		return s, nil
	case <-ctx.Done():
		return wire.QuorumStatus{}, ctx.Err()
	}
}

// QuorumStatus returns the metadata quorum driver's status on this node
// (quorum.Node.Status: membership, snapshots), asked of the metadata
// actor; it waits at most until ctx ends.
func (n *Node) QuorumStatus(ctx context.Context) (quorum.Status, error) {
	if n.stopped.Load() {
		return quorum.Status{}, ErrStopped
	}
	done := make(chan quorum.Status, 1)
	n.system.Root.Send(n.meta, &describeQuorum{raw: func(s quorum.Status) { done <- s }})
	select {
	case s := <-done:
		return s, nil
	case <-ctx.Done():
		return quorum.Status{}, ctx.Err()
	}
}

func (b *nodeBroker) DescribeQuorum(ctx context.Context) (wire.QuorumStatus, error) {
	return (*Node)(b).DescribeQuorum(ctx)
}
