package quorum

import (
	"fmt"

	"go.etcd.io/raft/v3"
)

// LeaderGone takes a hint from outside raft (the failure detector) that
// the quorum leader is gone: a follower that still follows leader forgets
// it (raft's ForgetLeader), so that it grants pre-votes at once instead of
// after the election timeout that CheckQuorum otherwise imposes, and, when
// campaign is set, starts an election now. Raft's safety does not rest on
// the hint: a wrong one costs an election, never a second leader. It
// reports whether the hint was taken (this node followed leader).
func (n *Node) LeaderGone(leader int32, campaign bool) (bool, error) {
	if n.failed != nil || n.stalled != nil {
		return false, nil
	}
	st := n.rn.BasicStatus()
	if st.RaftState != raft.StateFollower || st.Lead != RaftID(leader) || leader == n.cfg.NodeID {
		return false, nil
	}
	if err := n.rn.ForgetLeader(); err != nil {
		return false, fmt.Errorf("quorum: forget leader %d: %w", leader, err)
	}
	if campaign {
		if err := n.rn.Campaign(); err != nil {
			return true, fmt.Errorf("quorum: campaign: %w", err)
		}
	}
	return true, nil
}
