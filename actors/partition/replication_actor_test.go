package partition

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

// replNode is one node's partition actor over its own log, in an actor
// system shared with the other nodes of a test.
type replNode struct {
	t      *testing.T
	id     int32
	fsys   *log.MemFS
	system *actor.ActorSystem
	m      *log.Manager
	l      *log.Log
	c      *Client
	gc     bool

	mu        sync.Mutex
	proposals []ISRChange
	// lastEpoch is the LastFetchedEpoch of this node's next fetch, as its
	// fetcher tracks it.
	lastEpoch int32
}

// replCluster is a set of nodes in one actor system; the test plays their
// replica fetchers.
type replCluster struct {
	t      *testing.T
	system *actor.ActorSystem
	nodes  map[int32]*replNode
	nowMs  int64
}

func newReplCluster(t *testing.T) *replCluster {
	return &replCluster{t: t, system: actor.NewActorSystem(), nodes: map[int32]*replNode{}, nowMs: fixedNow.UnixMilli()}
}

// start opens node id's log on fsys (a new MemFS if nil) and spawns its
// actor, with min.insync.replicas minISR.
func (c *replCluster) start(id int32, fsys *log.MemFS, groupCommit bool, minISR int) *replNode {
	c.t.Helper()
	if fsys == nil {
		fsys = log.NewMemFS()
	}
	m, err := log.OpenManager(log.ManagerConfig{Dir: "/data", FS: fsys, NoBackground: true})
	if err != nil {
		c.t.Fatal(err)
	}
	lcfg := log.DefaultConfig()
	if groupCommit {
		lcfg.FlushMessages = 1
	}
	l, err := m.OpenLog(log.TopicPartition{Topic: "t", Partition: 0}, lcfg, [16]byte{1})
	if err != nil {
		c.t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.NodeID, cfg.GroupCommit, cfg.MinInSyncReplicas = id, groupCommit, minISR
	n := &replNode{t: c.t, id: id, fsys: fsys, system: c.system, m: m, l: l, gc: groupCommit, lastEpoch: -1}
	n.c = Spawn(c.system, ActorConfig{
		Log: l, Replica: cfg, Now: func() time.Time { return time.UnixMilli(c.nowMs) },
		ProposeISR: func(ch ISRChange) {
			n.mu.Lock()
			defer n.mu.Unlock()
			n.proposals = append(n.proposals, ch)
		},
	})
	n.sync()
	c.nodes[id] = n
	return n
}

// stopNode stops a node's actor and closes its manager.
func (n *replNode) stop() {
	n.t.Helper()
	if err := n.c.Stop(); err != nil {
		n.t.Fatal(err)
	}
	if err := n.m.Close(); err != nil {
		n.t.Fatal(err)
	}
}

func (c *replCluster) stop() {
	for _, n := range c.nodes {
		n.stop()
	}
	c.system.Shutdown()
}

// ask sends a request to n's actor and waits for its answer.
func (n *replNode) ask(send func(replyTo *actor.PID)) any {
	n.t.Helper()
	f := actor.NewFuture(n.system, 5*time.Second)
	send(f.PID())
	res, err := f.Result()
	if err != nil {
		n.t.Fatal(err)
	}
	return res
}

// sync waits until n's actor has handled everything sent before.
func (n *replNode) sync() Status {
	n.t.Helper()
	res := n.ask(func(to *actor.PID) { n.c.SendSyncStatus(&SyncStatus{ID: 1}, to) })
	st := res.(*StatusSynced).Status
	if st == nil {
		n.t.Fatal("partition not started")
	}
	return *st
}

func (n *replNode) proposed() []ISRChange {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.proposals)
}

// lead makes n the leader at epoch with the ISR and assignment.
func (n *replNode) lead(epoch, partitionEpoch int32, isr, replicas []int32) {
	n.c.BecomeLeader(&BecomeLeader{LeaderEpoch: epoch, PartitionEpoch: partitionEpoch, ISR: isr, Replicas: replicas})
	n.sync()
}

// follow makes n a follower of leader at epoch.
func (n *replNode) follow(leader, epoch, partitionEpoch int32) {
	n.c.BecomeFollower(&BecomeFollower{Leader: leader, LeaderEpoch: epoch, PartitionEpoch: partitionEpoch})
	n.sync()
}

// produce appends records through n (acks) without waiting; the answer
// arrives on the returned channel.
func (n *replNode) produce(records []byte, acks int16) <-chan *AppendBatchesResult {
	ch := make(chan *AppendBatchesResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := n.c.Append(ctx, &AppendBatches{ID: 1, Records: records, Acks: acks, TimeoutMs: 30000})
		if err != nil {
			res = &AppendBatchesResult{ErrorCode: -99, ErrorMessage: err.Error()}
		}
		ch <- res
	}()
	return ch
}

// produceWait appends and waits for the answer.
func (n *replNode) produceWait(records []byte, acks int16) *AppendBatchesResult {
	return <-n.produce(records, acks)
}

// fetchOnce plays follower f's replica fetcher for one Fetch from leader
// ld: the diverging-epoch check, the leader's follower-fetch report, the
// replica read, and the hand-over to f. It returns f's answer.
func (c *replCluster) fetchOnce(f, ld *replNode) *ReplicaPosition {
	c.t.Helper()
	fst := f.sync()
	off := fst.localEndOf(f.gc)
	epoch := fst.LeaderEpoch
	if ep, end, diverged := ld.c.DivergingEpoch(f.lastEpoch, off); diverged {
		pos := f.ask(func(to *actor.PID) {
			f.c.SendTruncateDiverging(&TruncateDiverging{ID: 7, LeaderEpoch: epoch, Epoch: ep, EndOffset: end}, to)
		}).(*ReplicaPosition)
		f.lastEpoch = pos.LastFetchedEpoch
		return pos
	}
	ld.c.ReportFollowerFetch(&FollowerFetched{ReplicaID: f.id, BrokerEpoch: 1, FetchOffset: off, LastFetchedEpoch: f.lastEpoch, NowMs: c.nowMs})
	ld.sync()
	res := ld.c.ReadNow(&ReadRecords{Offset: off, MaxBytes: 1 << 20, Replica: true, CheckLeaderEpoch: true, CurrentLeaderEpoch: epoch})
	if res.ErrorCode == kerr.OffsetOutOfRange.Code {
		lst := ld.c.Status()
		leaderEnd := int64(-1)
		if off > lst.LogEndOffset {
			leaderEnd = lst.LogEndOffset
		}
		pos := f.ask(func(to *actor.PID) {
			f.c.SendResetToLeaderStart(&ResetToLeaderStart{ID: 8, LeaderEpoch: epoch, LogStartOffset: res.LogStartOffset, LeaderLogEndOffset: leaderEnd}, to)
		}).(*ReplicaPosition)
		f.lastEpoch = pos.LastFetchedEpoch
		return pos
	}
	if res.ErrorCode != 0 {
		c.t.Fatalf("replica read from %d at %d: code %d %s", ld.id, off, res.ErrorCode, res.ErrorMessage)
	}
	pos := f.ask(func(to *actor.PID) {
		f.c.SendAppendReplicated(&AppendReplicated{ID: 9, LeaderEpoch: epoch, FetchOffset: off, Records: res.Records,
			LeaderHighWatermark: res.HighWatermark, LeaderLogStartOffset: res.LogStartOffset, NowMs: c.nowMs}, to)
	}).(*ReplicaPosition)
	if pos.ID != 9 {
		c.t.Fatalf("position answer id %d", pos.ID)
	}
	f.lastEpoch = pos.LastFetchedEpoch
	return pos
}

// localEndOf is where a follower's next fetch starts: its log end offset,
// or its flushed offset under group commit.
func (s Status) localEndOf(groupCommit bool) int64 {
	if groupCommit {
		return s.FlushedOffset
	}
	return s.LogEndOffset
}

// catchUp fetches until f holds ld's log end and reports it once more.
func (c *replCluster) catchUp(f, ld *replNode) {
	c.t.Helper()
	for range 100 {
		pos := c.fetchOnce(f, ld)
		if pos.ErrorCode != 0 {
			c.t.Fatalf("follower %d: position %+v", f.id, pos)
		}
		if pos.FetchOffset == ld.sync().LogEndOffset {
			c.fetchOnce(f, ld) // the leader learns the position
			return
		}
	}
	c.t.Fatalf("follower %d never caught up", f.id)
}

func TestReplicationAcksAllWaitsForFollower(t *testing.T) {
	c := newReplCluster(t)
	defer c.stop()
	ld, f := c.start(1, nil, false, 2), c.start(2, nil, false, 2)
	ld.lead(1, 1, []int32{1, 2}, []int32{1, 2})
	f.follow(1, 1, 1)

	ans := ld.produce(rec(t, 7, 0, 0, 3), -1)
	waitUntil(t, func() bool { return ld.c.Status().LogEndOffset == 3 })
	// The follower has not fetched: its position is unknown.
	select {
	case r := <-ans:
		t.Fatalf("answered before the follower fetched: %+v", r)
	default:
	}
	pos := c.fetchOnce(f, ld)
	if pos.ErrorCode != 0 || pos.FetchOffset != 3 || pos.LastFetchedEpoch != 1 || pos.LeaderEpoch != 1 {
		t.Fatalf("position %+v", pos)
	}
	if st := ld.sync(); st.HighWatermark != 0 {
		t.Fatalf("high watermark %d before the follower fetched past the batch", st.HighWatermark)
	}
	select {
	case r := <-ans:
		t.Fatalf("answered before the follower fetched past the batch: %+v", r)
	default:
	}
	c.fetchOnce(f, ld) // at offset 3: the leader counts the follower there
	if r := <-ans; r.ErrorCode != 0 || r.BaseOffset != 0 {
		t.Fatalf("acks=all: %+v", r)
	}
	if st := ld.sync(); st.HighWatermark != 3 || !slices.Equal(st.ISR, []int32{1, 2}) || st.LatestEpoch != 1 {
		t.Fatalf("leader status %+v", st)
	}
	// The follower learns the high watermark from its next fetch.
	c.fetchOnce(f, ld)
	if st := f.sync(); st.HighWatermark != 3 || st.LogEndOffset != 3 || st.Producers != 1 || st.Role != Follower {
		t.Fatalf("follower status %+v", st)
	}
	if got := f.proposed(); len(got) != 0 {
		t.Fatalf("a follower proposed %+v", got)
	}
}

// A follower outside the ISR is proposed once it has caught up.
func TestReplicationProposesJoin(t *testing.T) {
	c := newReplCluster(t)
	defer c.stop()
	ld, f := c.start(1, nil, false, 1), c.start(2, nil, false, 1)
	ld.lead(1, 1, []int32{1}, []int32{1, 2})
	f.follow(1, 1, 1)
	for i := range 3 {
		if r := ld.produceWait(plain(t, 2), -1); r.ErrorCode != 0 || r.BaseOffset != int64(2*i) {
			t.Fatalf("produce %d: %+v", i, r)
		}
	}
	c.catchUp(f, ld)
	want := []ISRChange{{LeaderEpoch: 1, PartitionEpoch: 1, ISR: []int32{1, 2}}}
	waitUntil(t, func() bool { return len(ld.proposed()) == 1 })
	if got := ld.proposed(); got[0].LeaderEpoch != want[0].LeaderEpoch || got[0].PartitionEpoch != 1 || !slices.Equal(got[0].ISR, want[0].ISR) {
		t.Fatalf("proposals %+v", got)
	}
	// Committed: the follower now holds acks=all back.
	ld.lead(1, 2, []int32{1, 2}, []int32{1, 2})
	ans := ld.produce(plain(t, 1), -1)
	waitUntil(t, func() bool { return ld.c.Status().LogEndOffset == 7 })
	select {
	case r := <-ans:
		t.Fatalf("answered before the follower had it: %+v", r)
	default:
	}
	c.catchUp(f, ld)
	if r := <-ans; r.ErrorCode != 0 || r.BaseOffset != 6 {
		t.Fatalf("acks=all: %+v", r)
	}
}

// appendAs writes records on n's log as leader at epoch (a leader that
// later lost its leadership).
func (n *replNode) appendAs(epoch int32, records ...[]byte) {
	n.t.Helper()
	n.lead(epoch, epoch, []int32{n.id}, []int32{n.id})
	for _, r := range records {
		if res := n.produceWait(r, 1); res.ErrorCode != 0 {
			n.t.Fatalf("append: %+v", res)
		}
	}
}

// A follower holding records of an epoch the new leader never had is told
// where that epoch ends in the leader's log and truncates there.
func TestReplicationTruncatesDivergingFollower(t *testing.T) {
	c := newReplCluster(t)
	defer c.stop()
	a, b := c.start(1, nil, false, 1), c.start(2, nil, false, 1)
	// Epoch 1 led by a: offsets 0-3, replicated to b.
	a.lead(1, 1, []int32{1, 2}, []int32{1, 2})
	b.follow(1, 1, 1)
	a.produceWait(plain(t, 2), 1)
	a.produceWait(plain(t, 2), 1)
	c.catchUp(b, a)
	// Epoch 2 led by b: b writes 4-6 (a never gets them), then loses it.
	b.appendAs(2, plain(t, 3))
	// Epoch 3 led by a: a writes 4-5 at epoch 3.
	a.lead(3, 4, []int32{1}, []int32{1, 2})
	a.produceWait(plain(t, 1), 1)
	a.produceWait(plain(t, 1), 1)
	b.follow(1, 3, 4)
	b.lastEpoch = 2
	// b's last epoch 2 is unknown to a: the largest epoch at or below it is
	// 1, which ends at 4 in a's log.
	if ep, end, div := a.c.DivergingEpoch(2, 7); !div || ep != 1 || end != 4 {
		t.Fatalf("DivergingEpoch(2, 7) = %d, %d, %v", ep, end, div)
	}
	if _, _, div := a.c.DivergingEpoch(1, 4); div {
		t.Fatal("a fetch at the end of a shared epoch diverges")
	}
	if _, _, div := a.c.DivergingEpoch(-1, 7); div {
		t.Fatal("no last fetched epoch diverges")
	}
	pos := c.fetchOnce(b, a)
	if pos.ErrorCode != 0 || pos.FetchOffset != 4 || pos.LastFetchedEpoch != 1 {
		t.Fatalf("after truncation: %+v", pos)
	}
	if st := b.sync(); st.LogEndOffset != 4 || st.LatestEpoch != 1 {
		t.Fatalf("follower status %+v", st)
	}
	c.catchUp(b, a)
	if got, want := readAll(t, b.l), readAll(t, a.l); !slices.Equal(got, want) {
		t.Fatalf("follower log %v, leader log %v", got, want)
	}
	if st := b.sync(); st.LogEndOffset != 6 || st.LatestEpoch != 3 || st.HighWatermark != 6 {
		t.Fatalf("follower status %+v", st)
	}
}

// readAll describes every batch of l: base offset, last offset, epoch.
func readAll(t *testing.T, l *log.Log) []string {
	t.Helper()
	var out []string
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		buf, err := l.Read(off, log.ReadOptions{MaxBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		bs, err := batch.Split(buf)
		if err != nil || len(bs) == 0 {
			t.Fatalf("read at %d: %v", off, err)
		}
		for _, b := range bs {
			out = append(out, fmt.Sprintf("%d-%d@%d", batch.BaseOffset(b), batch.LastOffset(b), batch.PartitionLeaderEpoch(b)))
			off = batch.LastOffset(b) + 1
		}
	}
	return out
}

// The follower replays the producer state of what it copies: after a
// failover the new leader answers the retry of a written batch as a
// duplicate with its original offset, and takes the next sequence.
func TestReplicationProducerStateSurvivesFailover(t *testing.T) {
	c := newReplCluster(t)
	defer c.stop()
	a, b := c.start(1, nil, false, 1), c.start(2, nil, false, 1)
	a.lead(1, 1, []int32{1, 2}, []int32{1, 2})
	b.follow(1, 1, 1)
	a.produceWait(plain(t, 2), 1)
	first := a.produce(rec(t, 42, 3, 0, 3), -1)
	waitUntil(t, func() bool { return a.c.Status().LogEndOffset == 5 })
	c.catchUp(b, a)
	if r := <-first; r.ErrorCode != 0 || r.BaseOffset != 2 {
		t.Fatalf("first: %+v", r)
	}
	// a dies; b leads at epoch 2 with the ISR {2}.
	b.lead(2, 2, []int32{2}, []int32{1, 2})
	if r := b.produceWait(rec(t, 42, 3, 0, 3), -1); r.ErrorCode != 0 || r.BaseOffset != 2 {
		t.Fatalf("retry on the new leader: %+v", r)
	}
	if r := b.produceWait(rec(t, 42, 3, 3, 1), -1); r.ErrorCode != 0 || r.BaseOffset != 5 {
		t.Fatalf("next sequence on the new leader: %+v", r)
	}
	if r := b.produceWait(rec(t, 42, 3, 9, 1), -1); r.ErrorCode != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("gap on the new leader: %+v", r)
	}
}

// Under group commit a follower answers its position only once what it
// appended is flushed, with the flushed offset.
func TestReplicationGroupCommitPositionAfterFlush(t *testing.T) {
	c := newReplCluster(t)
	defer c.stop()
	ld, f := c.start(1, nil, true, 1), c.start(2, nil, true, 1)
	ld.lead(1, 1, []int32{1, 2}, []int32{1, 2})
	f.follow(1, 1, 1)
	ans := ld.produce(plain(t, 3), -1)
	waitUntil(t, func() bool { return ld.c.Status().FlushedOffset == 3 })
	pos := c.fetchOnce(f, ld)
	if pos.ErrorCode != 0 || pos.FetchOffset != 3 {
		t.Fatalf("position %+v", pos)
	}
	if fl := f.l.FlushedOffset(); fl < 3 {
		t.Fatalf("position 3 answered with the follower flushed to %d", fl)
	}
	c.fetchOnce(f, ld)
	if r := <-ans; r.ErrorCode != 0 || r.BaseOffset != 0 {
		t.Fatalf("acks=all: %+v", r)
	}
}

// deleteRecords moves n's log start offset (DeleteRecords on the leader).
func (n *replNode) deleteRecords(offset int64) {
	n.t.Helper()
	res := n.ask(func(to *actor.PID) { n.c.SendDeleteRecords(&DeleteRecords{ID: 3, Offset: offset}, to) }).(*DeleteRecordsResult)
	if res.ErrorCode != 0 || res.LowWatermark != offset {
		n.t.Fatalf("delete records: %+v", res)
	}
}

// A follower behind the leader's log start restarts its log there; when
// the leader's log start falls inside a batch, the follower's log starts
// at that batch's base offset, then follows the leader's start.
func TestReplicationFollowerBehindLogStart(t *testing.T) {
	c := newReplCluster(t)
	defer c.stop()
	ld, f := c.start(1, nil, false, 1), c.start(2, nil, false, 1)
	ld.lead(1, 1, []int32{1}, []int32{1, 2})
	f.follow(1, 1, 1)
	ld.produceWait(rec(t, 5, 0, 0, 4), 1)
	ld.produceWait(rec(t, 5, 0, 4, 4), 1)
	ld.deleteRecords(5)
	pos := c.fetchOnce(f, ld) // out of range: reset
	if pos.ErrorCode != 0 || pos.FetchOffset != 5 || pos.LastFetchedEpoch != -1 {
		t.Fatalf("after reset: %+v", pos)
	}
	if st := f.sync(); st.LogStartOffset != 5 || st.LogEndOffset != 5 || st.HighWatermark != 5 {
		t.Fatalf("follower status after reset %+v", st)
	}
	pos = c.fetchOnce(f, ld) // the batch 4-7 straddles the follower's start 5
	if pos.ErrorCode != 0 || pos.FetchOffset != 8 || pos.LastFetchedEpoch != 1 {
		t.Fatalf("after the straddling batch: %+v", pos)
	}
	// The follower's log start follows the leader's once the high
	// watermark allows.
	waitUntil(t, func() bool { return f.l.LogStartOffset() == 5 && f.c.Status().LogStartOffset == 5 })
	if got := readAll(t, f.l); !slices.Equal(got, []string{"4-7@1"}) {
		t.Fatalf("follower log %v", got)
	}
	// The producer state of the copied batch was replayed.
	f.lead(2, 2, []int32{2}, []int32{1, 2})
	if r := f.produceWait(rec(t, 5, 0, 4, 4), -1); r.ErrorCode != 0 || r.BaseOffset != 4 {
		t.Fatalf("retry on the new leader: %+v", r)
	}
}

// A follower ahead of the leader's log end (told OFFSET_OUT_OF_RANGE)
// truncates to it.
func TestReplicationFollowerAheadOfLeader(t *testing.T) {
	c := newReplCluster(t)
	defer c.stop()
	a, b := c.start(1, nil, false, 1), c.start(2, nil, false, 1)
	b.appendAs(1, plain(t, 5))
	a.lead(2, 2, []int32{1}, []int32{1, 2})
	a.produceWait(plain(t, 2), 1)
	b.follow(1, 2, 2)
	// b's fetch carries no epoch (a fetcher without one): out of range. The
	// cut at a's end 2 falls inside b's batch 0-4, which goes whole.
	pos := c.fetchOnce(b, a)
	if pos.ErrorCode != 0 || pos.FetchOffset != 0 {
		t.Fatalf("after reset: %+v", pos)
	}
	c.catchUp(b, a)
	if got, want := readAll(t, b.l), readAll(t, a.l); !slices.Equal(got, want) {
		t.Fatalf("follower log %v, leader log %v", got, want)
	}
}

// Truncation rebuilds the producer state for the log that is left: a
// sequence only the truncated records held is taken again.
func TestReplicationTruncationRebuildsProducerState(t *testing.T) {
	c := newReplCluster(t)
	defer c.stop()
	a, b := c.start(1, nil, false, 1), c.start(2, nil, false, 1)
	a.lead(1, 1, []int32{1, 2}, []int32{1, 2})
	b.follow(1, 1, 1)
	a.produceWait(rec(t, 42, 0, 0, 3), 1)
	c.catchUp(b, a)
	// b leads epoch 2 alone and takes sequences 3-4, which a never gets.
	b.appendAs(2, rec(t, 42, 0, 3, 2))
	if e, _ := b.sync(), 0; e.LogEndOffset != 5 {
		t.Fatalf("b status %+v", e)
	}
	a.lead(3, 3, []int32{1}, []int32{1, 2})
	a.produceWait(plain(t, 1), 1)
	b.follow(1, 3, 3)
	b.lastEpoch = 2
	c.catchUp(b, a)
	if got, want := readAll(t, b.l), readAll(t, a.l); !slices.Equal(got, want) {
		t.Fatalf("follower log %v, leader log %v", got, want)
	}
	// b leads again: sequence 3 is new (the batch 3-4 was truncated away).
	b.lead(4, 4, []int32{2}, []int32{1, 2})
	if r := b.produceWait(rec(t, 42, 0, 3, 1), -1); r.ErrorCode != 0 || r.BaseOffset != 4 {
		t.Fatalf("sequence 3 after the truncation: %+v", r)
	}
	if r := b.produceWait(rec(t, 42, 0, 0, 3), -1); r.ErrorCode != 0 || r.BaseOffset != 0 {
		t.Fatalf("retry of the kept batch: %+v", r)
	}
}

// Replica reads go up to the log end, not the high watermark, and a
// LogEnd watch fires when the log end passes it.
func TestReplicaReadAndLogEndWatch(t *testing.T) {
	c := newReplCluster(t)
	defer c.stop()
	ld := c.start(1, nil, false, 1)
	ld.lead(1, 1, []int32{1, 2}, []int32{1, 2})
	ld.produceWait(plain(t, 3), 1)
	if res := ld.c.ReadNow(&ReadRecords{Offset: 0, MaxBytes: 1 << 20}); res.ErrorCode != 0 || len(res.Records) != 0 || res.HighWatermark != 0 {
		t.Fatalf("consumer read past the high watermark: %+v", res)
	}
	res := ld.c.ReadNow(&ReadRecords{Offset: 0, MaxBytes: 1 << 20, Replica: true})
	if bs, err := batch.Split(res.Records); res.ErrorCode != 0 || err != nil || len(bs) != 1 || batch.LastOffset(bs[0]) != 2 {
		t.Fatalf("replica read: %+v", res)
	}
	if res := ld.c.ReadNow(&ReadRecords{Offset: 0, MaxBytes: 1 << 20, Replica: true, MaxOffset: 0}); len(res.Records) == 0 {
		t.Fatal("MaxOffset 0 bounded the replica read")
	}
	in := NewInbox(c.system)
	defer in.Close()
	ld.c.SendWatch(&WatchHighWatermark{ID: 1, ReplyTo: in.PID(), Above: 2, LogEnd: true})
	if m := next(t, in).(*HighWatermarkReached); m.ID != 1 {
		t.Fatalf("watch %+v", m)
	}
	ld.c.SendWatch(&WatchHighWatermark{ID: 2, ReplyTo: in.PID(), Above: 3, LogEnd: true})
	ld.c.SendWatch(&WatchHighWatermark{ID: 3, ReplyTo: in.PID(), Above: 0})
	ld.sync()
	ld.produceWait(plain(t, 1), 1)
	if m := next(t, in).(*HighWatermarkReached); m.ID != 2 {
		t.Fatalf("watch %+v, want 2 (the high watermark watch must not fire)", m)
	}
	ld.c.SendCancelWatch(&CancelWatch{ID: 3, ReplyTo: in.PID()})
}

// A fetch that diverges from the leader's log says nothing of the
// follower's position.
func TestFollowerFetchDivergingIgnored(t *testing.T) {
	c := newReplCluster(t)
	defer c.stop()
	ld := c.start(1, nil, false, 1)
	ld.appendAs(1, plain(t, 4))
	ld.lead(3, 3, []int32{1, 2}, []int32{1, 2})
	ld.produceWait(plain(t, 2), 1)
	ld.c.ReportFollowerFetch(&FollowerFetched{ReplicaID: 2, BrokerEpoch: 1, FetchOffset: 6, LastFetchedEpoch: 2, NowMs: c.nowMs})
	if st := ld.sync(); st.HighWatermark != 4 {
		t.Fatalf("high watermark %d after a diverging fetch, want 4", st.HighWatermark)
	}
	ld.c.ReportFollowerFetch(&FollowerFetched{ReplicaID: 2, BrokerEpoch: 1, FetchOffset: 7, LastFetchedEpoch: 3, NowMs: c.nowMs})
	if st := ld.sync(); st.HighWatermark != 4 {
		t.Fatalf("high watermark %d after a fetch past the log end, want 4", st.HighWatermark)
	}
	ld.c.ReportFollowerFetch(&FollowerFetched{ReplicaID: 2, BrokerEpoch: 1, FetchOffset: 6, LastFetchedEpoch: 3, NowMs: c.nowMs})
	if st := ld.sync(); st.HighWatermark != 6 {
		t.Fatalf("high watermark %d, want 6", st.HighWatermark)
	}
}

// After a restart the high watermark is only the log start offset (no
// checkpoint says more): a leader with followers moves it up once they
// have fetched, a follower from its leader's.
func TestReplicationRestartHighWatermark(t *testing.T) {
	c := newReplCluster(t)
	defer c.stop()
	a, b := c.start(1, nil, false, 1), c.start(2, nil, false, 1)
	a.lead(1, 1, []int32{1, 2}, []int32{1, 2})
	b.follow(1, 1, 1)
	a.produceWait(plain(t, 3), 1)
	c.catchUp(b, a)
	c.fetchOnce(b, a)
	if st := b.sync(); st.HighWatermark != 3 {
		t.Fatalf("follower status %+v", st)
	}
	// Both restart.
	for _, n := range []*replNode{a, b} {
		n.stop()
		delete(c.nodes, n.id)
	}
	a, b = c.start(1, a.fsys, false, 1), c.start(2, b.fsys, false, 1)
	if st := b.sync(); st.HighWatermark != 0 || st.LogEndOffset != 3 || st.LatestEpoch != 1 {
		t.Fatalf("restarted follower status %+v", st)
	}
	a.lead(2, 2, []int32{1, 2}, []int32{1, 2})
	b.follow(1, 2, 2)
	if st := a.sync(); st.HighWatermark != 0 {
		t.Fatalf("restarted leader's high watermark %d before its follower fetched", st.HighWatermark)
	}
	b.lastEpoch = 1
	c.fetchOnce(b, a)
	if st := a.sync(); st.HighWatermark != 3 {
		t.Fatalf("leader high watermark %d, want 3", st.HighWatermark)
	}
	c.fetchOnce(b, a)
	if st := b.sync(); st.HighWatermark != 3 {
		t.Fatalf("follower high watermark %d, want 3", st.HighWatermark)
	}
}

// A stopped follower answers the fetcher's requests NOT_LEADER_OR_FOLLOWER.
func TestReplicationStoppedFollowerAnswers(t *testing.T) {
	c := newReplCluster(t)
	defer c.stop()
	f := c.start(2, nil, false, 1)
	f.follow(1, 1, 1)
	if err := f.c.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, send := range []func(*actor.PID){
		func(to *actor.PID) { f.c.SendAppendReplicated(&AppendReplicated{ID: 5, LeaderEpoch: 1}, to) },
		func(to *actor.PID) { f.c.SendTruncateDiverging(&TruncateDiverging{ID: 5, LeaderEpoch: 1}, to) },
		func(to *actor.PID) { f.c.SendResetToLeaderStart(&ResetToLeaderStart{ID: 5, LeaderEpoch: 1}, to) },
	} {
		if pos := f.ask(send).(*ReplicaPosition); pos.ID != 5 || pos.ErrorCode != kerr.NotLeaderForPartition.Code {
			t.Fatalf("position %+v", pos)
		}
	}
}
