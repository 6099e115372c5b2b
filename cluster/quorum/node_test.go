package quorum

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/weirmq/weir/cluster/metadata"
)

// withoutController returns img's snapshot records minus the controller
// record, which every restart of a single voter changes (a new term).
func withoutController(img *metadata.Image) []metadata.Record {
	var out []metadata.Record
	for _, r := range img.Records() {
		if _, ok := r.(metadata.ControllerChangedRecord); !ok {
			out = append(out, r)
		}
	}
	return out
}

func checkSameState(t *testing.T, got, want *metadata.Image) {
	t.Helper()
	if g, w := withoutController(got), withoutController(want); !reflect.DeepEqual(g, w) {
		t.Fatalf("image differs:\n got %v\nwant %v", g, w)
	}
	if got.Offset() < want.Offset() {
		t.Fatalf("image offset %d went back from %d", got.Offset(), want.Offset())
	}
}

func TestSingleVoterCommitsAndApplies(t *testing.T) {
	tn := newTestNode(t, 1, []int32{1})
	tn.settle()
	if !tn.n.IsLeader() || tn.n.Leader() != 1 {
		t.Fatalf("single voter not leader: leader %d", tn.n.Leader())
	}
	img := tn.n.Image()
	if img.ControllerID() != 1 || img.ControllerEpoch() != tn.n.Term() {
		t.Fatalf("controller %d epoch %d, want 1 and term %d", img.ControllerID(), img.ControllerEpoch(), tn.n.Term())
	}
	tn.populate()
	img = tn.n.Image()
	if img.ClusterID() != testClusterID {
		t.Fatalf("cluster id %q", img.ClusterID())
	}
	if uint64(img.Offset()) != tn.n.Applied() {
		t.Fatalf("image offset %d, applied %d", img.Offset(), tn.n.Applied())
	}
	orders, ok := img.Topic("orders")
	if !ok || orders.NumPartitions() != 3 {
		t.Fatalf("orders: %v", ok)
	}
	if p, _ := orders.Partition(2); p.Leader != 1 {
		t.Fatalf("orders-2 leader %d", p.Leader)
	}
	if b, ok := img.Broker(1); !ok || b.Fenced {
		t.Fatalf("broker 1: %+v %v", b, ok)
	}
	if hs := tn.st.HardState(); hs.GetCommit() != tn.n.Applied() {
		t.Fatalf("persisted commit %d, applied %d", hs.GetCommit(), tn.n.Applied())
	}
}

func TestProposeRejects(t *testing.T) {
	tn := newTestNode(t, 1, []int32{1})
	if err := tn.n.Propose([]metadata.Record{metadata.ClusterCreatedRecord{ClusterID: testClusterID}}, nil); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("propose before election: %v", err)
	}
	tn.settle()
	if err := tn.n.Propose(nil, nil); !errors.Is(err, ErrEmptyProposal) {
		t.Fatalf("empty proposal: %v", err)
	}
}

// A committed record that the image rejects stops the node loudly.
func TestApplyErrorStopsNode(t *testing.T) {
	tn := newTestNode(t, 1, []int32{1})
	tn.settle()
	before := tn.n.Image()
	bad := metadata.PartitionRecord{TopicID: metadata.UUID{9}, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1}
	if err := tn.n.Propose([]metadata.Record{bad}, nil); err != nil {
		t.Fatal(err)
	}
	_, err := tn.n.HandleReady()
	if !errors.Is(err, ErrApplyFailed) {
		t.Fatalf("handle ready: %v, want ErrApplyFailed", err)
	}
	if !errors.Is(tn.n.Err(), ErrApplyFailed) || tn.n.HasReady() {
		t.Fatalf("node not stopped: %v", tn.n.Err())
	}
	if err := tn.n.Propose([]metadata.Record{metadata.ClusterCreatedRecord{ClusterID: testClusterID}}, nil); !errors.Is(err, ErrApplyFailed) {
		t.Fatalf("propose after failure: %v", err)
	}
	if tn.n.Image() != before {
		t.Fatal("a failed run published an image")
	}
}

func TestRestartRebuildsImage(t *testing.T) {
	tn := newTestNode(t, 1, []int32{1})
	tn.settle()
	tn.populate()
	want, hs := tn.n.Image(), tn.st.HardState()
	last, _ := tn.st.LastIndex()
	tn.restart()
	if got := tn.st.HardState(); got.GetTerm() != hs.GetTerm() || got.GetVote() != hs.GetVote() || got.GetCommit() != hs.GetCommit() {
		t.Fatalf("hard state after restart %v, want %v", got, hs)
	}
	if l, _ := tn.st.LastIndex(); l != last {
		t.Fatalf("last index %d after restart, want %d", l, last)
	}
	tn.settle()
	checkSameState(t, tn.n.Image(), want)
	if tn.n.Term() <= hs.GetTerm() || tn.n.Image().ControllerEpoch() != tn.n.Term() {
		t.Fatalf("term %d after restart (was %d), controller epoch %d", tn.n.Term(), hs.GetTerm(), tn.n.Image().ControllerEpoch())
	}
	tn.createTopic("after-restart", 3, 1)
	if _, ok := tn.n.Image().Topic("after-restart"); !ok {
		t.Fatal("no topic proposed after restart")
	}
}

func TestSnapshotCompactsAndRestores(t *testing.T) {
	tn := newTestNode(t, 1, []int32{1})
	tn.settle()
	tn.populate()
	if err := tn.n.Snapshot(); err != nil {
		t.Fatal(err)
	}
	applied := tn.n.Applied()
	if first, _ := tn.st.FirstIndex(); first != applied+1 {
		t.Fatalf("first index %d after snapshot at %d", first, applied)
	}
	if tn.st.Log().LogStartOffset() != tn.st.Log().LogEndOffset() {
		t.Fatalf("log start %d, end %d: not compacted", tn.st.Log().LogStartOffset(), tn.st.Log().LogEndOffset())
	}
	checkCheckpoints(t, tn, applied)
	tn.createTopic("after-snapshot", 3, 2)
	want := tn.n.Image()
	tn.restart()
	if got := tn.n.Image(); got.Offset() != int64(applied) {
		t.Fatalf("image restored at offset %d, want the snapshot's %d", got.Offset(), applied)
	}
	tn.settle()
	checkSameState(t, tn.n.Image(), want)

	// A snapshot taken on its own schedule replaces the older one.
	tn.n.cfg.SnapshotEntries = 2
	tn.createTopic("third", 4, 1)
	tn.createTopic("fourth", 5, 1)
	checkCheckpoints(t, tn, tn.n.snapIndex)
	if tn.n.snapIndex <= applied {
		t.Fatalf("no automatic snapshot: snapshot index %d", tn.n.snapIndex)
	}
	want = tn.n.Image()
	tn.powerCut()
	tn.settle()
	checkSameState(t, tn.n.Image(), want)
}

// checkCheckpoints fails unless the partition directory holds exactly one
// checkpoint file, at index.
func checkCheckpoints(t *testing.T, tn *testNode, index uint64) {
	t.Helper()
	names, err := tn.mem.ReadDir(tn.st.Log().Dir())
	if err != nil {
		t.Fatal(err)
	}
	var ckpts []string
	for _, n := range names {
		if strings.HasSuffix(n, checkpointSuffix) || strings.HasSuffix(n, ".tmp") {
			ckpts = append(ckpts, n)
		}
	}
	term, _ := tn.st.Term(index)
	if len(ckpts) != 1 || ckpts[0] != checkpointName(index, term) {
		t.Fatalf("checkpoint files %v, want [%s]", ckpts, checkpointName(index, term))
	}
	if _, err := tn.mem.Stat(filepath.Join(tn.st.Log().Dir(), quorumStateFile)); err != nil {
		t.Fatal(err)
	}
}

// Everything reported committed survives a power cut that drops all
// unsynced data: entries and hard state are fsynced before raft is told.
func TestPowerCutKeepsCommitted(t *testing.T) {
	tn := newTestNode(t, 1, []int32{1})
	tn.settle()
	tn.populate()
	want := tn.n.Image()
	tn.powerCut()
	if hs := tn.st.HardState(); hs.GetCommit() < uint64(want.Offset()) {
		t.Fatalf("commit %d after power cut, image was at %d", hs.GetCommit(), want.Offset())
	}
	tn.settle()
	checkSameState(t, tn.n.Image(), want)
	tn.createTopic("after-cut", 3, 1)
	want = tn.n.Image()
	tn.powerCut()
	tn.settle()
	checkSameState(t, tn.n.Image(), want)
}
