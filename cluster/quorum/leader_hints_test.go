package quorum

import (
	"testing"

	"github.com/weirmq/weir/cluster/metadata"
)

// TestLeaderGoneElectsWithoutTimeout cuts the leader off and hands the
// two followers the hint that it is gone: a new leader is elected and
// commits without a single tick (raft's election timeout never runs out),
// while without the hint no node campaigns. A hint about a live leader
// only costs an election.
func TestLeaderGoneElectsWithoutTimeout(t *testing.T) {
	c := newTestCluster(t, 1, 2, 3)
	old := c.leader()
	c.propose(metadata.ClusterCreatedRecord{ClusterID: testClusterID})
	c.down[old.cfg.NodeID] = true
	var rest []int32
	for _, id := range c.ids {
		if id != old.cfg.NodeID {
			rest = append(rest, id)
		}
	}
	c.settle()
	for _, id := range rest {
		if c.nodes[id].n.IsLeader() || c.nodes[id].n.Leader() != old.cfg.NodeID {
			t.Fatalf("node %d: leader %d before the hint", id, c.nodes[id].n.Leader())
		}
	}
	for i, id := range rest {
		taken, err := c.nodes[id].n.LeaderGone(old.cfg.NodeID, i == 0)
		if err != nil || !taken {
			t.Fatalf("node %d: hint taken %v, err %v", id, taken, err)
		}
	}
	c.settle()
	if !c.nodes[rest[0]].n.IsLeader() {
		t.Fatalf("node %d does not lead after the hint (leader %d)", rest[0], c.nodes[rest[0]].n.Leader())
	}
	// A hint naming a node that is not the leader is not taken.
	if taken, _ := c.nodes[rest[1]].n.LeaderGone(old.cfg.NodeID, true); taken {
		t.Fatal("a hint about a former leader was taken")
	}
	c.propose(metadata.ConfigRecord{ResourceType: metadata.ResourceBroker, ResourceName: "", Name: "log.retention.ms", Value: "1000"})
	c.down[old.cfg.NodeID] = false
	c.checkConverged()
}
