package quorum

import (
	"errors"
	"slices"
	"testing"

	"github.com/weirmq/weir/cluster/metadata"
	pb "go.etcd.io/raft/v3/raftpb"
)

// testCluster runs voters in one process; the test loop delivers their
// messages, and may cut a node off. No network, no clock: time is Tick.
type testCluster struct {
	t      *testing.T
	ids    []int32 // voters, then learners
	voters []int32
	nodes  map[int32]*testNode
	down   map[int32]bool
}

func newTestCluster(t *testing.T, ids ...int32) *testCluster {
	c := &testCluster{t: t, ids: slices.Clone(ids), voters: ids, nodes: map[int32]*testNode{}, down: map[int32]bool{}}
	for _, id := range ids {
		c.nodes[id] = newTestNode(t, id, ids)
	}
	return c
}

// startLearners starts nodes outside the voters: learners, which the
// leader has not added yet.
func (c *testCluster) startLearners(ids ...int32) {
	for _, id := range ids {
		c.nodes[id] = newTestNode(c.t, id, c.voters)
		c.ids = append(c.ids, id)
	}
}

// settle handles Ready on every node and delivers messages until none are
// left. Messages to or from a node that is down are lost.
func (c *testCluster) settle() {
	c.t.Helper()
	for range 1000 {
		var queue []*pb.Message
		for _, id := range c.ids {
			msgs, err := c.nodes[id].n.HandleReady()
			if err != nil {
				c.t.Fatalf("node %d: %v", id, err)
			}
			queue = append(queue, msgs...)
		}
		if len(queue) == 0 {
			return
		}
		for _, m := range queue {
			from, to := NodeIDOf(m.GetFrom()), NodeIDOf(m.GetTo())
			if c.down[from] || c.down[to] {
				c.nodes[from].n.ReportUnreachable(to)
				continue
			}
			if err := c.nodes[to].n.Step(m); err != nil {
				c.t.Fatalf("node %d step: %v", to, err)
			}
			if m.GetType() == pb.MsgSnap {
				c.nodes[from].n.ReportSnapshot(to, true)
			}
		}
	}
	c.t.Fatal("messages never stopped")
}

// tick ticks every node n times, settling after each tick.
func (c *testCluster) tick(n int) {
	c.t.Helper()
	for range n {
		for _, id := range c.ids {
			c.nodes[id].n.Tick()
		}
		c.settle()
	}
}

// leader ticks until exactly one node that is up leads and every voter up
// knows it, and returns it.
func (c *testCluster) leader() *testNode {
	c.t.Helper()
	for range 200 {
		var leaders []int32
		agreed := true
		for _, id := range c.ids {
			if c.down[id] {
				continue
			}
			if c.nodes[id].n.IsLeader() {
				leaders = append(leaders, id)
			}
		}
		for _, id := range c.voters { // (a learner learns of the leader once added)
			if !c.down[id] && len(leaders) == 1 && c.nodes[id].n.Leader() != leaders[0] {
				agreed = false
			}
		}
		if len(leaders) == 1 && agreed {
			return c.nodes[leaders[0]]
		}
		c.tick(1)
	}
	c.t.Fatal("no leader elected")
	return nil
}

// propose proposes recs on the leader and ticks until they are applied.
func (c *testCluster) propose(recs ...metadata.Record) uint64 {
	c.t.Helper()
	var index uint64
	var done bool
	var perr error
	l := c.leader()
	if err := l.n.Propose(recs, func(i uint64, err error) { index, perr, done = i, err, true }); err != nil {
		c.t.Fatal(err)
	}
	for range 50 {
		c.settle()
		if done {
			break
		}
		c.tick(1)
	}
	if !done || perr != nil {
		c.t.Fatalf("proposal %v: done %v, err %v", recs, done, perr)
	}
	return index
}

// checkConverged ticks a few heartbeats, then checks that every node that
// is up has the same image.
func (c *testCluster) checkConverged() *metadata.Image {
	c.t.Helper()
	c.tick(3)
	var want *metadata.Image
	for _, id := range c.ids {
		if c.down[id] {
			continue
		}
		img := c.nodes[id].n.Image()
		if want == nil {
			want = img
		} else if !img.Equal(want) {
			c.t.Fatalf("node %d image at offset %d differs from one at offset %d", id, img.Offset(), want.Offset())
		}
	}
	return want
}

func TestThreeVoters(t *testing.T) {
	c := newTestCluster(t, 1, 2, 3)
	first := c.leader()
	c.propose(metadata.ClusterCreatedRecord{ClusterID: testClusterID})
	for _, id := range c.ids {
		reg, epoch, err := metadata.RegisterBrokerRecords(first.n.Image(), metadata.BrokerRegistrationRecord{
			NodeID: id, IncarnationID: metadata.UUID{byte(id), 1}, Host: "127.0.0.1", Port: 9092 + id,
		})
		if err != nil {
			t.Fatal(err)
		}
		c.propose(reg...)
		c.propose(metadata.BrokerUnfencedRecord{NodeID: id, BrokerEpoch: epoch})
	}
	recs, err := metadata.NewTopicRecords(first.n.Image(), "orders", 3, 3, nil, nil, metadata.UUID{1, 7})
	if err != nil {
		t.Fatal(err)
	}
	c.propose(recs...)
	img := c.checkConverged()
	if img.ControllerID() != first.cfg.NodeID || img.NumPartitions() != 3 || len(img.Brokers()) != 3 {
		t.Fatalf("image: controller %d, %d partitions, %d brokers", img.ControllerID(), img.NumPartitions(), len(img.Brokers()))
	}

	// Cut the leader off. It still leads for a moment and accepts a
	// proposal that can never commit.
	old := first.cfg.NodeID
	c.down[old] = true
	var lostErr error
	lost := false
	if err := first.n.Propose([]metadata.Record{metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, ResourceName: "orders", Name: "cleanup.policy", Value: "compact"}},
		func(_ uint64, err error) { lost, lostErr = true, err }); err != nil {
		t.Fatal(err)
	}
	second := c.leader()
	if second.cfg.NodeID == old {
		t.Fatal("the cut-off node is still the only leader")
	}
	c.propose(metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, ResourceName: "orders", Name: "retention.ms", Value: "60000"})
	for i := 0; first.n.IsLeader(); i++ {
		if i == 2*first.cfg.ElectionTicks {
			t.Fatal("CheckQuorum: the cut-off leader did not step down")
		}
		c.tick(1)
	}
	if err := first.n.Propose([]metadata.Record{metadata.ClusterCreatedRecord{ClusterID: testClusterID}}, nil); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("proposal on a deposed leader: %v", err)
	}

	// Heal: the old leader's uncommitted entry is replaced, and reported so.
	delete(c.down, old)
	img = c.checkConverged()
	if !lost || !errors.Is(lostErr, ErrProposalDropped) {
		t.Fatalf("the cut-off leader's proposal: resolved %v, err %v", lost, lostErr)
	}
	if cfg := img.Config(metadata.TopicResource("orders")); cfg["retention.ms"] != "60000" || cfg["cleanup.policy"] != "" {
		t.Fatalf("orders configs %v", cfg)
	}
	if img.ControllerID() != second.cfg.NodeID || img.ControllerEpoch() != second.n.Term() {
		t.Fatalf("controller %d epoch %d, want %d and %d", img.ControllerID(), img.ControllerEpoch(), second.cfg.NodeID, second.n.Term())
	}
}

// A follower that was down while the leader compacted its log catches up
// from the snapshot, and a restarted follower from its own disk.
func TestThreeVotersSnapshotCatchUp(t *testing.T) {
	c := newTestCluster(t, 1, 2, 3)
	c.propose(metadata.ClusterCreatedRecord{ClusterID: testClusterID})
	l := c.leader()
	lagging := c.ids[slices.IndexFunc(c.ids, func(id int32) bool { return id != l.cfg.NodeID })]
	c.down[lagging] = true
	for i := range 5 {
		c.propose(metadata.ConfigRecord{ResourceType: metadata.ResourceBroker, Name: "k", Value: string(rune('a' + i))})
	}
	if err := l.n.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if first, _ := l.st.FirstIndex(); first != l.n.Applied()+1 {
		t.Fatalf("leader not compacted: first index %d, applied %d", first, l.n.Applied())
	}
	delete(c.down, lagging)
	want := c.checkConverged()
	if snap, _ := c.nodes[lagging].st.Snapshot(); snap.GetMetadata().GetIndex() == 0 {
		t.Fatal("the lagging follower caught up without the snapshot")
	}
	c.nodes[lagging].restart()
	c.checkConverged()
	if got := c.nodes[lagging].n.Image(); got.Offset() < want.Offset() {
		t.Fatalf("restarted follower at %d, want %d", got.Offset(), want.Offset())
	}
}
