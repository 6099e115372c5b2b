package quorum

import (
	"bytes"
	"errors"
	"testing"

	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/log"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// openTestStorage opens a storage on mem, closing its manager at the end.
func openTestStorage(t *testing.T, mem *log.MemFS) (*log.Manager, *Storage) {
	t.Helper()
	m, err := log.OpenManager(log.ManagerConfig{Dir: "/data", FS: mem, NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := OpenStorage(m, mem, []int32{1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Abandon)
	return m, st
}

// normalEntry is a normal entry holding one ClusterCreated-free record per
// value of n (a config record), or an empty entry for n == 0.
func normalEntry(t *testing.T, index, term uint64, n int) *pb.Entry {
	t.Helper()
	var recs []metadata.Record
	for i := range n {
		recs = append(recs, metadata.ConfigRecord{ResourceType: metadata.ResourceBroker, Name: "k", Value: string(rune('a' + i))})
	}
	data, err := EncodeEntry(recs)
	if err != nil {
		t.Fatal(err)
	}
	return &pb.Entry{Index: new(index), Term: new(term), Type: new(pb.EntryNormal), Data: data}
}

// entries returns normal entries from..to of term, of 0 to 2 records.
func entries(t *testing.T, from, to, term uint64) []*pb.Entry {
	t.Helper()
	var out []*pb.Entry
	for i := from; i <= to; i++ {
		out = append(out, normalEntry(t, i, term, int(i%3)))
	}
	return out
}

func checkEntries(t *testing.T, st *Storage, want []*pb.Entry) {
	t.Helper()
	first, _ := st.FirstIndex()
	last, _ := st.LastIndex()
	if first != want[0].GetIndex() || last != want[len(want)-1].GetIndex() {
		t.Fatalf("storage holds [%d, %d], want [%d, %d]", first, last, want[0].GetIndex(), want[len(want)-1].GetIndex())
	}
	got, err := st.Entries(first, last+1, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Fatalf("entry %d: got %v, want %v", i, got[i], want[i])
		}
		if term, _ := st.Term(want[i].GetIndex()); term != want[i].GetTerm() {
			t.Fatalf("Term(%d) = %d, want %d", want[i].GetIndex(), term, want[i].GetTerm())
		}
	}
}

func TestStorageEntryKinds(t *testing.T) {
	mem := log.NewMemFS()
	m, st := openTestStorage(t, mem)
	cc, _ := proto.Marshal(&pb.ConfChange{Type: new(pb.ConfChangeAddLearnerNode), NodeId: new(uint64(4))})
	cc2, _ := proto.Marshal(&pb.ConfChangeV2{Changes: []*pb.ConfChangeSingle{{Type: new(pb.ConfChangeAddNode), NodeId: new(uint64(5))}}})
	want := []*pb.Entry{
		normalEntry(t, 1, 1, 0), // the empty entry a new leader appends
		normalEntry(t, 2, 1, 3),
		{Index: new(uint64(3)), Term: new(uint64(1)), Type: new(pb.EntryConfChange), Data: cc},
		{Index: new(uint64(4)), Term: new(uint64(2)), Type: new(pb.EntryConfChangeV2), Data: cc2},
		normalEntry(t, 5, 7, 1),
	}
	if err := st.Append(want); err != nil {
		t.Fatal(err)
	}
	checkEntries(t, st, want)
	// A batch per entry, a record per metadata record (one at least), the
	// term as the partition leader epoch.
	if end := st.Log().LogEndOffset(); end != 1+3+1+1+1 {
		t.Fatalf("log end offset %d", end)
	}
	if e := st.Log().LatestEpoch(); e != 7 {
		t.Fatalf("latest leader epoch %d, want 7", e)
	}
	if got, err := st.Entries(1, 6, 1); err != nil || len(got) != 1 {
		t.Fatalf("Entries with a tiny maxSize: %d entries, %v", len(got), err)
	}
	if _, err := st.Entries(1, 7, 1<<20); !errors.Is(err, raft.ErrUnavailable) {
		t.Fatalf("Entries past the end: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	_, st = openTestStorage(t, mem)
	checkEntries(t, st, want)
}

func TestStorageTruncatesConflictingSuffix(t *testing.T) {
	mem := log.NewMemFS()
	m, st := openTestStorage(t, mem)
	if err := st.Append(entries(t, 1, 6, 1)); err != nil {
		t.Fatal(err)
	}
	// A new leader of term 2 overwrites 4.. with two entries.
	repl := entries(t, 4, 5, 2)
	if err := st.Append(repl); err != nil {
		t.Fatal(err)
	}
	want := append(entries(t, 1, 3, 1), repl...)
	checkEntries(t, st, want)
	if err := st.Append(entries(t, 8, 8, 2)); err == nil {
		t.Fatal("append after a gap succeeded")
	}
	// Re-appending entries already stored (same index and term) keeps them.
	if err := st.Append(entries(t, 5, 6, 2)); err != nil {
		t.Fatal(err)
	}
	want = append(want[:4], entries(t, 5, 6, 2)...)
	checkEntries(t, st, want)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	_, st = openTestStorage(t, mem)
	checkEntries(t, st, want)
}

func TestStorageHardStateAndSnapshot(t *testing.T) {
	mem := log.NewMemFS()
	m, st := openTestStorage(t, mem)
	if err := st.Append(entries(t, 1, 5, 3)); err != nil {
		t.Fatal(err)
	}
	hs := &pb.HardState{Term: new(uint64(3)), Vote: new(RaftID(0)), Commit: new(uint64(4))}
	if err := st.SetHardState(hs); err != nil {
		t.Fatal(err)
	}
	data, err := EncodeSnapshotData([]metadata.Record{metadata.ClusterCreatedRecord{ClusterID: testClusterID}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	cs := &pb.ConfState{Voters: []uint64{1, 2, 3}}
	if _, err := st.CreateSnapshot(3, cs, data); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateSnapshot(2, cs, data); !errors.Is(err, raft.ErrSnapOutOfDate) {
		t.Fatalf("older snapshot: %v", err)
	}
	m.Abandon() // a crash: everything was fsynced
	mem.PowerCutDropAll()
	_, st = openTestStorage(t, mem)
	gotHS, gotCS, _ := st.InitialState()
	if !proto.Equal(gotHS, hs) || !proto.Equal(gotCS, cs) {
		t.Fatalf("initial state %v %v, want %v %v", gotHS, gotCS, hs, cs)
	}
	if term, err := st.Term(3); err != nil || term != 3 {
		t.Fatalf("Term(snapshot index) = %d, %v", term, err)
	}
	if _, err := st.Term(2); !errors.Is(err, raft.ErrCompacted) {
		t.Fatalf("Term(2): %v", err)
	}
	if _, err := st.Entries(3, 4, 1<<20); !errors.Is(err, raft.ErrCompacted) {
		t.Fatalf("Entries(3): %v", err)
	}
	checkEntries(t, st, entries(t, 4, 5, 3))
	snap, _ := st.Snapshot()
	if !bytes.Equal(snap.GetData(), data) || snap.GetMetadata().GetIndex() != 3 {
		t.Fatalf("snapshot %v", snap.GetMetadata())
	}
	recs, err := DecodeSnapshotData(snap.GetData())
	if err != nil || len(recs) != 1 {
		t.Fatalf("snapshot records %v, %v", recs, err)
	}

	// A snapshot from the leader replaces the whole log.
	leaderSnap := &pb.Snapshot{Data: data, Metadata: &pb.SnapshotMetadata{ConfState: cs, Index: new(uint64(9)), Term: new(uint64(4))}}
	if err := st.ApplySnapshot(leaderSnap); err != nil {
		t.Fatal(err)
	}
	if first, _ := st.FirstIndex(); first != 10 {
		t.Fatalf("first index %d after installing snapshot 9", first)
	}
	if err := st.Append(entries(t, 10, 11, 4)); err != nil {
		t.Fatal(err)
	}
	checkEntries(t, st, entries(t, 10, 11, 4))
}

// A crash after a checkpoint is written but before the log is compacted:
// reopening drops the entries the checkpoint covers.
func TestStorageCrashBeforeCompaction(t *testing.T) {
	mem := log.NewMemFS()
	m, st := openTestStorage(t, mem)
	if err := st.Append(entries(t, 1, 6, 2)); err != nil {
		t.Fatal(err)
	}
	off4 := st.ents[3].offset
	snap := &pb.Snapshot{Metadata: &pb.SnapshotMetadata{ConfState: &pb.ConfState{Voters: []uint64{2}}, Index: new(uint64(3)), Term: new(uint64(2))}}
	st.mu.Lock()
	err := st.writeSnapshotLocked(snap)
	st.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	m.Abandon()
	mem.PowerCutDropAll()
	_, st = openTestStorage(t, mem)
	checkEntries(t, st, entries(t, 4, 6, 2))
	if start := st.Log().LogStartOffset(); start != off4 {
		t.Fatalf("log start offset %d, want entry 4's offset %d", start, off4)
	}
}

// A commit index past the log (a log that lost fsynced entries) is
// reported, not left to raft's panic.
func TestNodeRefusesCommitPastLog(t *testing.T) {
	_, st := openTestStorage(t, log.NewMemFS())
	if err := st.Append(entries(t, 1, 2, 1)); err != nil {
		t.Fatal(err)
	}
	if err := st.SetHardState(&pb.HardState{Term: new(uint64(1)), Vote: new(uint64(0)), Commit: new(uint64(5))}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewNode(DefaultConfig(0), st); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("NewNode: %v, want ErrCorrupt", err)
	}
}
