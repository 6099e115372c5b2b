package quorum

import (
	"errors"
	"slices"
	"testing"

	"github.com/weirmq/weir/cluster/metadata"
	pb "go.etcd.io/raft/v3/raftpb"
)

// addLearner has the leader add node and ticks until every node up has
// applied the change.
func (c *testCluster) addLearner(node int32) {
	c.t.Helper()
	for range 100 {
		l := c.leader()
		if err := l.n.AddLearner(node); err != nil {
			c.t.Fatalf("add learner %d: %v", node, err)
		}
		c.tick(1)
		all := true
		for _, id := range c.ids {
			if !c.down[id] && !c.nodes[id].n.IsMember(node) {
				all = false
			}
		}
		if all {
			return
		}
	}
	c.t.Fatalf("learner %d never added", node)
}

// checkMembership fails unless every node up has applied voters 1,2,3 and
// learners.
func (c *testCluster) checkMembership(learners ...int32) {
	c.t.Helper()
	for _, id := range c.ids {
		if c.down[id] {
			continue
		}
		v, l := c.nodes[id].n.Membership()
		if !slices.Equal(v, c.voters) || !slices.Equal(l, learners) {
			c.t.Fatalf("node %d: voters %v learners %v, want %v and %v", id, v, l, c.voters, learners)
		}
	}
}

// A learner applies the log like a voter once the leader added it, shows
// as an observer in the leader's status, never campaigns, and keeps its
// membership across a restart; the voters keep quorum without it.
func TestLearnerAppliesLog(t *testing.T) {
	c := newTestCluster(t, 1, 2, 3)
	c.propose(metadata.ClusterCreatedRecord{ClusterID: testClusterID})
	c.startLearners(4)
	if c.nodes[4].n.IsLeader() || c.nodes[4].n.Leader() != -1 {
		t.Fatal("a learner nobody added knows a leader")
	}
	l := c.leader()
	if err := l.n.AddLearner(2); !errors.Is(err, ErrNotLearner) {
		t.Fatalf("adding voter 2 as a learner: %v", err)
	}
	c.addLearner(4)
	c.propose(metadata.ConfigRecord{ResourceType: metadata.ResourceBroker, Name: "k", Value: "v"})
	img := c.checkConverged()
	if cfg := img.Config(metadata.BrokerResource(-1)); cfg["k"] != "v" {
		t.Fatalf("broker configs %v", cfg)
	}
	if c.nodes[4].n.Image().Offset() != img.Offset() || c.nodes[4].n.Leader() != l.cfg.NodeID {
		t.Fatalf("learner at offset %d leader %d", c.nodes[4].n.Image().Offset(), c.nodes[4].n.Leader())
	}
	c.checkMembership(4)
	s := l.n.Status()
	if len(s.Voters) != 3 || len(s.Observers) != 1 || s.Observers[0].ID != 4 || s.Observers[0].LogEndOffset != s.HighWatermark {
		t.Fatalf("leader status: voters %+v observers %+v, high watermark %d", s.Voters, s.Observers, s.HighWatermark)
	}

	// The learner dies: the voters keep quorum.
	c.down[4] = true
	c.propose(metadata.ConfigRecord{ResourceType: metadata.ResourceBroker, Name: "k", Value: "w"})
	delete(c.down, 4)
	c.checkConverged()

	// With every voter cut off, the learner never campaigns.
	for _, v := range c.voters {
		c.down[v] = true
	}
	term := c.nodes[4].n.Term()
	for range 5 * c.nodes[4].cfg.ElectionTicks {
		c.nodes[4].n.Tick()
		c.settle()
	}
	if c.nodes[4].n.IsLeader() || c.nodes[4].n.Term() != term {
		t.Fatalf("the learner campaigned: leader %v, term %d (was %d)", c.nodes[4].n.IsLeader(), c.nodes[4].n.Term(), term)
	}
	for _, v := range c.voters {
		delete(c.down, v)
	}

	// Restarted from its files, every node agrees on the membership.
	for _, id := range c.ids {
		c.nodes[id].restart()
	}
	c.propose(metadata.ConfigRecord{ResourceType: metadata.ResourceBroker, Name: "k", Value: "x"})
	c.checkConverged()
	c.checkMembership(4)
	if l := c.leader(); l.cfg.NodeID == 4 {
		t.Fatal("the learner leads")
	}
}

// A learner that was down while the leader compacted its log catches up
// from the leader's snapshot, and after a restart from its own.
func TestLearnerSnapshotCatchUp(t *testing.T) {
	c := newTestCluster(t, 1, 2, 3)
	c.propose(metadata.ClusterCreatedRecord{ClusterID: testClusterID})
	c.startLearners(4)
	c.addLearner(4)
	c.checkConverged()
	c.down[4] = true
	for i := range 5 {
		c.propose(metadata.ConfigRecord{ResourceType: metadata.ResourceBroker, Name: "k", Value: string(rune('a' + i))})
	}
	l := c.leader()
	if err := l.n.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if first, _ := l.st.FirstIndex(); first != l.n.Applied()+1 {
		t.Fatalf("leader not compacted: first index %d, applied %d", first, l.n.Applied())
	}
	delete(c.down, 4)
	want := c.checkConverged()
	if snap, _ := c.nodes[4].st.Snapshot(); snap.GetMetadata().GetIndex() == 0 {
		t.Fatal("the learner caught up without the snapshot")
	}
	c.checkMembership(4)
	c.nodes[4].restart()
	c.checkConverged()
	c.checkMembership(4)
	if got := c.nodes[4].n.Image(); got.Offset() < want.Offset() {
		t.Fatalf("restarted learner at %d, want %d", got.Offset(), want.Offset())
	}
}

// A learner added to a cluster whose log is compacted already catches up
// from a snapshot: the voters take one that holds the new learner (raft
// refuses a snapshot whose configuration lacks the node).
func TestLearnerAddedAfterCompaction(t *testing.T) {
	c := newTestCluster(t, 1, 2, 3)
	c.propose(metadata.ClusterCreatedRecord{ClusterID: testClusterID})
	c.propose(metadata.ConfigRecord{ResourceType: metadata.ResourceBroker, Name: "k", Value: "v"})
	for _, id := range c.ids {
		if err := c.nodes[id].n.Snapshot(); err != nil {
			t.Fatal(err)
		}
	}
	c.settle()
	c.startLearners(4)
	c.addLearner(4)
	img := c.checkConverged()
	if cfg := img.Config(metadata.BrokerResource(-1)); cfg["k"] != "v" {
		t.Fatalf("broker configs %v", cfg)
	}
	c.checkMembership(4)
	if snap, _ := c.nodes[4].st.Snapshot(); !slices.Contains(snap.GetMetadata().GetConfState().GetLearners(), RaftID(4)) {
		t.Fatalf("the learner's snapshot %v", snap.GetMetadata())
	}
}

// Only learner changes are applied; anything that would change the
// voters is skipped.
func TestAllowedConfChange(t *testing.T) {
	cs := &pb.ConfState{Voters: []uint64{1, 2, 3}, Learners: []uint64{5}}
	cc := func(t pb.ConfChangeType, id uint64) pb.ConfChangeI {
		return &pb.ConfChange{Type: t.Enum(), NodeId: new(id)}
	}
	for _, tc := range []struct {
		cc   pb.ConfChangeI
		want bool
	}{
		{cc(pb.ConfChangeType_ConfChangeAddLearnerNode, 4), true},
		{cc(pb.ConfChangeType_ConfChangeAddLearnerNode, 2), false},
		{cc(pb.ConfChangeType_ConfChangeAddNode, 4), false},
		{cc(pb.ConfChangeType_ConfChangeAddNode, 5), false},
		{cc(pb.ConfChangeType_ConfChangeRemoveNode, 5), true},
		{cc(pb.ConfChangeType_ConfChangeRemoveNode, 1), false},
		{cc(pb.ConfChangeType_ConfChangeUpdateNode, 5), false},
		{&pb.ConfChangeV2{}, false},
	} {
		if got := allowedConfChange(cs, tc.cc); got != tc.want {
			t.Errorf("%v: allowed %v, want %v", tc.cc, got, tc.want)
		}
	}
}
