package quorum

import (
	"fmt"
	"slices"

	pb "go.etcd.io/raft/v3/raftpb"
)

// Learners (docs/DESIGN.md "Metadata: one quorum holds the facts"): a
// node whose id is not among the voters is a raft learner. It never campaigns or votes (raft
// does not promote a learner, nor a node outside its configuration); the
// leader replicates the log to it once a configuration change has added
// it (AddLearner), and it applies the committed entries like a voter. The
// voters are the static list of every node's Config and never change:
// the only configuration changes applied are a learner added (an id that
// is not a voter) and a learner removed; any other change in the log is
// skipped, on every node alike (the check reads only the configuration,
// itself a product of the log), so no learner ever becomes a voter and no
// voter a learner.

// Membership returns the configuration this node has applied: the
// voters and the learners, in id order.
func (n *Node) Membership() (voters, learners []int32) {
	return nodeIDs(n.confState.GetVoters()), nodeIDs(n.confState.GetLearners())
}

// IsMember reports whether node is a voter or a learner in the applied
// configuration.
func (n *Node) IsMember(node int32) bool {
	id := RaftID(node)
	return slices.Contains(n.confState.GetVoters(), id) || slices.Contains(n.confState.GetLearners(), id)
}

// AddLearner proposes adding node as a learner: a configuration change
// (ConfChangeAddLearnerNode) that commits and applies like an entry; from
// then on the leader sends node the log (from a snapshot when it is
// compacted past node's position). Only the leader proposes. It does
// nothing for a node already a learner, and refuses a voter
// (ErrNotLearner). Raft takes one configuration change at a time: one
// proposed while another is unapplied becomes an empty entry, so the
// caller proposes again while the node is not a member (IsMember).
func (n *Node) AddLearner(node int32) error {
	if n.failed != nil {
		return n.failed
	}
	if n.stalled != nil {
		return fmt.Errorf("%w: %w", ErrStorageUnavailable, n.stalled)
	}
	switch {
	case node < 0 || slices.Contains(n.cfg.Voters, node) || slices.Contains(n.confState.GetVoters(), RaftID(node)):
		return fmt.Errorf("%w: node %d (voters %v)", ErrNotLearner, node, n.cfg.Voters)
	case slices.Contains(n.confState.GetLearners(), RaftID(node)):
		return nil
	case !n.IsLeader():
		return fmt.Errorf("%w: node %d (leader %d)", ErrNotLeader, n.cfg.NodeID, n.Leader())
	}
	cc := &pb.ConfChange{Type: pb.ConfChangeType_ConfChangeAddLearnerNode.Enum(), NodeId: new(RaftID(node))}
	if err := n.rn.ProposeConfChange(cc); err != nil {
		return fmt.Errorf("quorum: propose learner %d: %w", node, err)
	}
	return nil
}

// applyConfChange applies a committed configuration change when it only
// adds or removes learners (allowedConfChange), and skips it otherwise.
// A learner added while the log is compacted makes a snapshot due at
// once: raft sends a node that lacks the compacted entries the newest
// snapshot, and a node refuses one whose configuration does not hold it,
// so an older snapshot would never let the new learner catch up.
func (n *Node) applyConfChange(cc pb.ConfChangeI) {
	if !allowedConfChange(n.confState, cc) {
		return
	}
	before := len(n.confState.GetLearners())
	n.confState = n.rn.ApplyConfChange(cc)
	if len(n.confState.GetLearners()) > before && n.snapIndex > 0 {
		n.snapshotDue = true
	}
}

// allowedConfChange reports whether every change of cc adds a learner that
// is not a voter of cs or removes a learner of cs, outside a joint
// configuration.
func allowedConfChange(cs *pb.ConfState, cc pb.ConfChangeI) bool {
	v2 := cc.AsV2()
	if len(v2.GetChanges()) == 0 || len(cs.GetVotersOutgoing()) > 0 {
		return false
	}
	for _, c := range v2.GetChanges() {
		id := c.GetNodeId()
		switch c.GetType() {
		case pb.ConfChangeType_ConfChangeAddLearnerNode:
			if id == 0 || slices.Contains(cs.GetVoters(), id) {
				return false
			}
		case pb.ConfChangeType_ConfChangeRemoveNode:
			if !slices.Contains(cs.GetLearners(), id) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// nodeIDs maps raft ids to node ids, sorted.
func nodeIDs(ids []uint64) []int32 {
	out := make([]int32, 0, len(ids))
	for _, id := range ids {
		out = append(out, NodeIDOf(id))
	}
	slices.Sort(out)
	return out
}
