package partition

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/log"
)

// snapEnv is a partition directory on MemFS whose log rolls every few
// batches.
type snapEnv struct {
	t    *testing.T
	fsys *log.MemFS
	m    *log.Manager
	l    *log.Log
}

func openSnapEnv(t *testing.T, fsys *log.MemFS) *snapEnv {
	t.Helper()
	m, err := log.OpenManager(log.ManagerConfig{Dir: "/data", FS: fsys, NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	lcfg := log.DefaultConfig()
	lcfg.SegmentBytes = 400 // a one-record batch is ~70 bytes: a roll every ~5 batches
	l, err := m.OpenLog(log.TopicPartition{Topic: "t", Partition: 0}, lcfg, [16]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	return &snapEnv{t: t, fsys: fsys, m: m, l: l}
}

func (e *snapEnv) close() {
	e.t.Helper()
	if err := e.m.Close(); err != nil {
		e.t.Fatal(err)
	}
}

func (e *snapEnv) snapshots() []int64 {
	e.t.Helper()
	offs, err := listSnapshots(e.fsys, e.l.Dir())
	if err != nil {
		e.t.Fatal(err)
	}
	return offs
}

func (e *snapEnv) snapPath(off int64) string { return filepath.Join(e.l.Dir(), snapshotFileName(off)) }

// rebuild runs the actor's start-up recovery and returns the replica, how
// it replayed and the warnings logged.
func (e *snapEnv) rebuild() (*Replica, replayInfo, string) {
	e.t.Helper()
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	r, info, err := rebuild(ActorConfig{Log: e.l, Replica: DefaultConfig()}, logger)
	if err != nil {
		e.t.Fatal(err)
	}
	return r, info, buf.String()
}

// produce appends n one-record batches of producer 7 (sequences from seq)
// through a partition actor, then stops it cleanly.
func (e *snapEnv) produce(seq, n int) {
	e.t.Helper()
	system := actor.NewActorSystem()
	defer system.Shutdown()
	c := Spawn(system, ActorConfig{Log: e.l, Replica: DefaultConfig(), Now: func() time.Time { return fixedNow }})
	c.BecomeLeader(&BecomeLeader{LeaderEpoch: 1, ISR: []int32{1}})
	for i := range n {
		res, err := c.Append(context.Background(), &AppendBatches{Records: rec(e.t, 7, 0, int32(seq+i), 1), Acks: 1})
		if err != nil || res.ErrorCode != 0 {
			e.t.Fatalf("append %d: %v %+v", seq+i, err, res)
		}
	}
	if err := c.Stop(); err != nil {
		e.t.Fatal(err)
	}
}

func TestProducerSnapshotsAtRollAndShutdown(t *testing.T) {
	fsys := log.NewMemFS()
	e := openSnapEnv(t, fsys)
	e.produce(0, 40)
	if e.l.SegmentCount() < 5 {
		t.Fatalf("%d segments: the test needs rolls", e.l.SegmentCount())
	}
	offs := e.snapshots()
	if len(offs) != snapshotsToKeep || offs[1] != 40 || offs[0] >= 40 || offs[0] < 30 {
		t.Fatalf("snapshots %v, want a roll snapshot and the clean shutdown's at 40", offs)
	}
	rollSnap := offs[0]
	e.close()

	// Restart after a clean shutdown: nothing to replay.
	e = openSnapEnv(t, fsys)
	r, info, warn := e.rebuild()
	if info.snapshot != 40 || info.batches != 0 || warn != "" {
		t.Fatalf("clean restart: %+v, warnings %q", info, warn)
	}
	if got, _ := r.Producers().Entry(7); len(got.Batches) != BatchesToRetain || got.Batches[4].LastSeq != 39 {
		t.Fatalf("producer 7 after restart: %+v", got)
	}

	// A corrupt newest snapshot: one warning, the roll snapshot instead,
	// and only the tail after it is replayed.
	data, err := log.ReadFile(fsys, e.snapPath(40))
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 0xff
	if err := log.WriteFileAtomic(fsys, e.snapPath(40), data); err != nil {
		t.Fatal(err)
	}
	r2, info, warn := e.rebuild()
	if info.snapshot != rollSnap || info.batches != int(40-rollSnap) {
		t.Fatalf("after corrupting 40: %+v, want snapshot %d and %d batches", info, rollSnap, 40-rollSnap)
	}
	if strings.Count(warn, "ignoring producer snapshot") != 1 {
		t.Fatalf("warnings %q, want one line", warn)
	}
	if a, b := r.Producers().Snapshot(), r2.Producers().Snapshot(); !bytes.Equal(a, b) {
		t.Fatal("state from the roll snapshot plus the tail differs from the clean one")
	}

	// Every snapshot corrupt (or gone): the whole log is replayed.
	if err := log.WriteFileAtomic(fsys, e.snapPath(rollSnap), []byte("junk")); err != nil {
		t.Fatal(err)
	}
	r3, info, _ := e.rebuild()
	if info.snapshot != -1 || info.batches != 40 {
		t.Fatalf("no usable snapshot: %+v", info)
	}
	if !bytes.Equal(r.Producers().Snapshot(), r3.Producers().Snapshot()) {
		t.Fatal("replayed state differs")
	}
	e.close()
}

func TestProducerSnapshotOutOfRangeDeleted(t *testing.T) {
	fsys := log.NewMemFS()
	e := openSnapEnv(t, fsys)
	e.produce(0, 10)
	// A snapshot beyond the log end (the log was truncated under it).
	ahead := NewProducerState()
	ahead.SkipTo(1000)
	if err := log.WriteFileAtomic(fsys, e.snapPath(1000), ahead.Snapshot()); err != nil {
		t.Fatal(err)
	}
	_, info, warn := e.rebuild()
	if info.snapshot != 10 || info.batches != 0 || warn != "" {
		t.Fatalf("%+v %q", info, warn)
	}
	for _, off := range e.snapshots() {
		if off > 10 {
			t.Fatalf("snapshot %d above the log end kept", off)
		}
	}
	e.close()
}

func TestDuplicatesDetectedAfterRestartFromSnapshot(t *testing.T) {
	fsys := log.NewMemFS()
	e := openSnapEnv(t, fsys)
	e.produce(0, 30)
	e.close()

	e = openSnapEnv(t, fsys)
	defer e.close()
	system := actor.NewActorSystem()
	defer system.Shutdown()
	c := Spawn(system, ActorConfig{Log: e.l, Replica: DefaultConfig(), Now: func() time.Time { return fixedNow }})
	defer func() {
		if err := c.Stop(); err != nil {
			t.Fatal(err)
		}
	}()
	c.BecomeLeader(&BecomeLeader{LeaderEpoch: 2, ISR: []int32{1}})
	appendOne := func(seq int32) *AppendBatchesResult {
		res, err := c.Append(context.Background(), &AppendBatches{Records: rec(t, 7, 0, seq, 1), Acks: 1})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := appendOne(27); res.ErrorCode != 0 || res.BaseOffset != 27 {
		t.Fatalf("retry of 27: %+v", res)
	}
	if res := appendOne(20); res.ErrorCode != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("old sequence 20: %+v", res)
	}
	if res := appendOne(30); res.ErrorCode != 0 || res.BaseOffset != 30 {
		t.Fatalf("next sequence: %+v", res)
	}
	if e.l.LogEndOffset() != 31 {
		t.Fatalf("log end %d", e.l.LogEndOffset())
	}
}
