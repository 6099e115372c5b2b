package partition

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/internal/leakcheck"
	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

// TestMain checks that no test leaves goroutines behind: the actor systems
// are shut down and the managers closed.
func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

// actorEnv is a partition actor over a real log on MemFS in a real actor
// system.
type actorEnv struct {
	t      *testing.T
	fsys   *log.MemFS
	system *actor.ActorSystem
	m      *log.Manager
	l      *log.Log
	c      *Client
	nowMs  int64
}

// fixedNow is the injected clock of the tests.
var fixedNow = time.UnixMilli(1_700_000_000_000)

// startActor opens the manager and the log over fsys and spawns a leader
// with isr (default: this node only).
func startActor(t *testing.T, fsys *log.MemFS, groupCommit bool, isr ...int32) *actorEnv {
	t.Helper()
	return startActorLogged(t, fsys, groupCommit, nil, isr...)
}

// startActorLogged is startActor with the actor's log lines sent to logger
// (nil: slog.Default()).
func startActorLogged(t *testing.T, fsys *log.MemFS, groupCommit bool, logger *slog.Logger, isr ...int32) *actorEnv {
	t.Helper()
	return startActorWith(t, fsys, groupCommit, func(c *ActorConfig) { c.Logger = logger }, isr...)
}

// startActorWith is startActor with the actor's configuration changed by
// mutate before it is spawned.
func startActorWith(t *testing.T, fsys *log.MemFS, groupCommit bool, mutate func(*ActorConfig), isr ...int32) *actorEnv {
	t.Helper()
	m, err := log.OpenManager(log.ManagerConfig{Dir: "/data", FS: fsys, NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	lcfg := log.DefaultConfig()
	if groupCommit {
		lcfg.FlushMessages = 1
	}
	l, err := m.OpenLog(log.TopicPartition{Topic: "t", Partition: 0}, lcfg, [16]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.GroupCommit = groupCommit
	system := actor.NewActorSystem()
	e := &actorEnv{t: t, fsys: fsys, system: system, m: m, l: l, nowMs: fixedNow.UnixMilli()}
	acfg := ActorConfig{Log: l, Replica: cfg, Now: func() time.Time { return fixedNow }}
	if mutate != nil {
		mutate(&acfg)
	}
	e.c = Spawn(system, acfg)
	if len(isr) == 0 {
		isr = []int32{cfg.NodeID}
	}
	e.c.BecomeLeader(&BecomeLeader{LeaderEpoch: 1, ISR: isr})
	e.waitFor(func(st Status) bool { return st.Role == Leader })
	return e
}

// stop stops the actor and closes the manager and the system.
func (e *actorEnv) stop() {
	e.t.Helper()
	if err := e.c.Stop(); err != nil {
		e.t.Fatal(err)
	}
	if err := e.m.Close(); err != nil {
		e.t.Fatal(err)
	}
	e.system.Shutdown()
}

// waitFor polls the published status until ok holds.
func (e *actorEnv) waitFor(ok func(Status) bool) {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok(e.c.Status()) {
		if time.Now().After(deadline) {
			e.t.Fatalf("status never satisfied: %+v", e.c.Status())
		}
		time.Sleep(time.Millisecond)
	}
}

// append appends through the facade and checks the answer.
func (e *actorEnv) append(records []byte, acks int16, wantCode int16, wantBase int64) *AppendBatchesResult {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := e.c.Append(ctx, &AppendBatches{ID: 42, Records: records, Acks: acks, TimeoutMs: 1000})
	if err != nil {
		e.t.Fatal(err)
	}
	if res.ID != 42 || res.ErrorCode != wantCode || res.BaseOffset != wantBase {
		e.t.Fatalf("got id %d code %d base %d (%s), want code %d base %d", res.ID, res.ErrorCode, res.BaseOffset, res.ErrorMessage, wantCode, wantBase)
	}
	return res
}

func TestActorAppendAcks(t *testing.T) {
	e := startActor(t, log.NewMemFS(), false)
	defer e.stop()
	e.append(plain(t, 3), 1, 0, 0)
	e.append(plain(t, 2), -1, 0, 3)
	e.append(plain(t, 1), 0, 0, 5)
	e.append(plain(t, 4), 1, 0, 6)
	e.append(plain(t, 1), 2, kerr.InvalidRequiredAcks.Code, -1)
	e.waitFor(func(st Status) bool { return st.LogEndOffset == 10 && st.HighWatermark == 10 })
	if st := e.c.Status(); st.LeaderEpoch != 1 || st.LogStartOffset != 0 {
		t.Fatalf("status %+v", st)
	}
}

func TestActorIdempotentRetry(t *testing.T) {
	e := startActor(t, log.NewMemFS(), false)
	defer e.stop()
	first := rec(t, 7, 0, 0, 3)
	e.append(first, -1, 0, 0)
	e.append(plain(t, 2), 1, 0, 3)
	e.append(first, -1, 0, 0) // the retry gets its original offset
	e.append(rec(t, 7, 0, 3, 1), 1, 0, 5)
	e.append(rec(t, 7, 0, 9, 1), 1, kerr.OutOfOrderSequenceNumber.Code, -1)
	if got := e.l.LogEndOffset(); got != 6 {
		t.Fatalf("log end offset %d, want 6", got)
	}
}

func TestActorGroupCommitRepliesAfterFlush(t *testing.T) {
	e := startActor(t, log.NewMemFS(), true)
	defer e.stop()
	for i := range 5 {
		res := e.append(plain(t, 2), 1, 0, int64(2*i))
		// The answer came after the fsync covering the batch.
		if fl := e.l.FlushedOffset(); fl < res.BaseOffset+2 {
			t.Fatalf("acks=1 answered at base %d with flushed offset %d", res.BaseOffset, fl)
		}
	}
	e.append(plain(t, 1), -1, 0, 10)
	if fl := e.l.FlushedOffset(); fl < 11 {
		t.Fatalf("acks=all answered with flushed offset %d", fl)
	}
	e.waitFor(func(st Status) bool { return st.HighWatermark == 11 && st.FlushedOffset == 11 })
}

func TestActorRestartRebuildsProducerState(t *testing.T) {
	fsys := log.NewMemFS()
	e := startActor(t, fsys, true)
	e.append(rec(t, 5, 0, 0, 3), -1, 0, 0)
	e.append(rec(t, 5, 0, 3, 2), 1, 0, 3)
	e.append(plain(t, 4), 1, 0, 5)
	e.stop()

	e = startActor(t, fsys, true)
	defer e.stop()
	if st := e.c.Status(); st.LogEndOffset != 9 || st.HighWatermark != 9 || st.Producers != 1 {
		t.Fatalf("status after restart %+v", st)
	}
	e.append(rec(t, 5, 0, 0, 3), -1, 0, 0) // retry after restart
	e.append(rec(t, 5, 0, 3, 2), 1, 0, 3)
	e.append(rec(t, 5, 0, 5, 1), -1, 0, 9)
	if got := e.l.LogEndOffset(); got != 10 {
		t.Fatalf("log end offset %d, want 10", got)
	}
}

func TestActorConcurrentAppenders(t *testing.T) {
	e := startActor(t, log.NewMemFS(), true)
	defer e.stop()
	const writers, each, n = 8, 25, 3
	var (
		mu    sync.Mutex
		bases []int64
		wg    sync.WaitGroup
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				acks := []int16{1, -1}[(w+i)%2]
				res, err := e.c.Append(context.Background(), &AppendBatches{Records: plain(t, n), Acks: acks, TimeoutMs: 5000})
				if err != nil || res.ErrorCode != 0 {
					t.Errorf("append: %v %+v", err, res)
					return
				}
				mu.Lock()
				bases = append(bases, res.BaseOffset)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(bases)
	if len(bases) != writers*each {
		t.Fatalf("%d answers, want %d", len(bases), writers*each)
	}
	for i, b := range bases {
		if b != int64(i*n) {
			t.Fatalf("base offsets not unique and contiguous at %d: %d", i, b)
		}
	}
}

func TestActorAcksAllTimesOutOnTick(t *testing.T) {
	// Node 2 is in the ISR but never fetches: the high watermark stays.
	e := startActor(t, log.NewMemFS(), false, 1, 2)
	defer e.stop()
	f := e.system.Root.RequestFuture(e.c.PID(), &AppendBatches{ID: 9, Records: plain(t, 2), Acks: -1, TimeoutMs: 100}, 5*time.Second)
	e.c.Tick(e.nowMs + 50) // before the deadline: still parked
	e.c.Tick(e.nowMs + 100)
	got, err := f.Result()
	if err != nil {
		t.Fatal(err)
	}
	if res := got.(*AppendBatchesResult); res.ID != 9 || res.ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("got %+v", res)
	}
	e.append(plain(t, 1), 1, 0, 2) // acks=1 does not wait for node 2
}

func TestActorStopAnswersParked(t *testing.T) {
	e := startActor(t, log.NewMemFS(), false, 1, 2)
	f := e.system.Root.RequestFuture(e.c.PID(), &AppendBatches{Records: plain(t, 1), Acks: -1, TimeoutMs: 60000}, 5*time.Second)
	e.waitFor(func(st Status) bool { return st.LogEndOffset == 1 })
	e.stop()
	got, err := f.Result()
	if err != nil {
		t.Fatal(err)
	}
	if res := got.(*AppendBatchesResult); res.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("got %+v", res)
	}
}

func TestActorUnknownMessage(t *testing.T) {
	e := startActor(t, log.NewMemFS(), false)
	defer e.stop()
	e.system.Root.Send(e.c.PID(), "hello")
	e.system.Root.Send(e.c.PID(), &struct{ X int }{1})
	deadline := time.Now().Add(5 * time.Second)
	for e.c.UnknownMessages() != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("unknown messages %d", e.c.UnknownMessages())
		}
		time.Sleep(time.Millisecond)
	}
	e.append(plain(t, 1), 1, 0, 0) // still serving
}

func TestActorRead(t *testing.T) {
	e := startActor(t, log.NewMemFS(), false)
	defer e.stop()
	e.append(plain(t, 3), 1, 0, 0)
	e.append(plain(t, 2), 1, 0, 3)
	ctx := context.Background()
	res, err := e.c.Read(ctx, &ReadRecords{Offset: 0, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	bs, err := batch.Split(res.Records)
	if err != nil || len(bs) != 2 || res.HighWatermark != 5 {
		t.Fatalf("read: %v, %d batches, %+v", err, len(bs), res)
	}
	res, err = e.c.Read(ctx, &ReadRecords{Offset: 0, MaxBytes: 1 << 20, MaxOffset: 3})
	if bs, _ := batch.Split(res.Records); err != nil || len(bs) != 1 {
		t.Fatalf("read bounded by MaxOffset: %v, %d batches", err, len(bs))
	}
	res, err = e.c.Read(ctx, &ReadRecords{Offset: 9})
	if err != nil || res.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("read past the end: %v %+v", err, res)
	}
	res, err = e.c.Read(ctx, &ReadRecords{Offset: 5})
	if err != nil || res.ErrorCode != 0 || len(res.Records) != 0 {
		t.Fatalf("read at the end: %v %+v", err, res)
	}
}

func TestActorReadLongPoll(t *testing.T) {
	e := startActor(t, log.NewMemFS(), false)
	defer e.stop()
	// Parked, then answered by the append that moves the high watermark.
	f := e.system.Root.RequestFuture(e.c.PID(), &ReadRecords{Offset: 0, MaxBytes: 1 << 20, MaxWaitMs: 60000}, 5*time.Second)
	e.append(plain(t, 2), 1, 0, 0)
	got, err := f.Result()
	if err != nil {
		t.Fatal(err)
	}
	if res := got.(*ReadRecordsResult); res.ErrorCode != 0 || len(res.Records) == 0 || res.HighWatermark != 2 {
		t.Fatalf("woken read: %+v", res)
	}
	// Parked, then answered empty when a tick passes its deadline.
	f = e.system.Root.RequestFuture(e.c.PID(), &ReadRecords{Offset: 2, MaxBytes: 1 << 20, MaxWaitMs: 100}, 5*time.Second)
	e.c.Tick(e.nowMs + 99)
	e.c.Tick(e.nowMs + 100)
	got, err = f.Result()
	if err != nil {
		t.Fatal(err)
	}
	if res := got.(*ReadRecordsResult); res.ErrorCode != 0 || len(res.Records) != 0 {
		t.Fatalf("expired read: %+v", res)
	}
}
