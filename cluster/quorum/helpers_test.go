package quorum

import (
	"testing"

	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/log"
)

// testNode is one quorum node on its own in-memory file system.
type testNode struct {
	t   testing.TB
	mem *log.MemFS
	cfg Config
	m   *log.Manager
	st  *Storage
	n   *Node
}

// newTestNode starts node id with voters on a fresh MemFS.
func newTestNode(t testing.TB, id int32, voters []int32) *testNode {
	t.Helper()
	cfg := DefaultConfig(id)
	cfg.Voters = voters
	tn := &testNode{t: t, mem: log.NewMemFS(), cfg: cfg}
	tn.start()
	return tn
}

// start opens the manager, the storage and the node.
func (tn *testNode) start() {
	tn.t.Helper()
	m, err := log.OpenManager(log.ManagerConfig{Dir: "/data", FS: tn.mem, NoBackground: true})
	if err != nil {
		tn.t.Fatalf("open manager: %v", err)
	}
	st, err := OpenStorage(m, tn.mem, tn.cfg.Voters)
	if err != nil {
		m.Abandon()
		tn.t.Fatalf("open storage: %v", err)
	}
	n, err := NewNode(tn.cfg, st)
	if err != nil {
		m.Abandon()
		tn.t.Fatalf("new node: %v", err)
	}
	tn.m, tn.st, tn.n = m, st, n
	tn.t.Cleanup(func() { tn.m.Abandon() })
}

// stop shuts the manager down cleanly.
func (tn *testNode) stop() {
	tn.t.Helper()
	if err := tn.m.Close(); err != nil {
		tn.t.Fatalf("close manager: %v", err)
	}
}

// restart stops cleanly and starts again on the same files.
func (tn *testNode) restart() {
	tn.t.Helper()
	tn.stop()
	tn.start()
}

// powerCut loses everything not fsynced, then starts again.
func (tn *testNode) powerCut() {
	tn.t.Helper()
	tn.mem.PowerCutDropAll()
	tn.m.Abandon()
	tn.start()
}

// settle handles Ready until there is none; a single voter sends nothing.
func (tn *testNode) settle() {
	tn.t.Helper()
	for tn.n.HasReady() {
		msgs, err := tn.n.HandleReady()
		if err != nil {
			tn.t.Fatalf("handle ready: %v", err)
		}
		if len(msgs) > 0 {
			tn.t.Fatalf("single voter sent %d messages: %v", len(msgs), msgs[0])
		}
	}
}

// propose proposes recs on a single voter, settles and returns the index
// the entry committed at.
func (tn *testNode) propose(recs ...metadata.Record) uint64 {
	tn.t.Helper()
	var got uint64
	var gotErr error
	called := false
	if err := tn.n.Propose(recs, func(index uint64, err error) { got, gotErr, called = index, err, true }); err != nil {
		tn.t.Fatalf("propose %v: %v", recs, err)
	}
	tn.settle()
	if !called || gotErr != nil {
		tn.t.Fatalf("proposal %v: called %v, err %v", recs, called, gotErr)
	}
	return got
}

const testClusterID = "MkU3OEVBNTcwNTJENDM2Qg"

// registerBroker registers and unfences node on a single voter.
func (tn *testNode) registerBroker(node int32) {
	tn.t.Helper()
	reg, epoch, err := metadata.RegisterBrokerRecords(tn.n.Image(), metadata.BrokerRegistrationRecord{
		NodeID: node, IncarnationID: metadata.UUID{byte(node), 1}, Host: "127.0.0.1", Port: 9092 + node,
	})
	if err != nil {
		tn.t.Fatal(err)
	}
	tn.propose(reg...)
	tn.propose(metadata.BrokerUnfencedRecord{NodeID: node, BrokerEpoch: epoch})
}

// createTopic creates a topic with partitions on a single voter.
func (tn *testNode) createTopic(name string, id byte, partitions int32) {
	tn.t.Helper()
	recs, err := metadata.NewTopicRecords(tn.n.Image(), name, partitions, 1, nil, nil, metadata.UUID{id, 7})
	if err != nil {
		tn.t.Fatal(err)
	}
	tn.propose(recs...)
}

// populate makes a cluster with a broker and two topics.
func (tn *testNode) populate() {
	tn.t.Helper()
	tn.propose(metadata.ClusterCreatedRecord{ClusterID: testClusterID})
	tn.registerBroker(tn.cfg.NodeID)
	tn.createTopic("orders", 1, 3)
	tn.createTopic("payments", 2, 2)
	tn.propose(metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, ResourceName: "orders", Name: "retention.ms", Value: "1000"})
}

// checkImage fails unless the node's image equals want.
func (tn *testNode) checkImage(want *metadata.Image) {
	tn.t.Helper()
	if got := tn.n.Image(); !got.Equal(want) {
		tn.t.Fatalf("image at offset %d differs from the expected one at offset %d", got.Offset(), want.Offset())
	}
}
