package replicafetcher_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/group"
	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/actors/replicafetcher"
	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
	"github.com/weirmq/weir/wire"
)

// waitTimeout bounds every wait; it only passes when a test is failing.
const waitTimeout = 10 * time.Second

const (
	leaderNode   = 1
	followerNode = 2
	topicName    = "rep"
)

var topicID = metadata.UUID{7, 7}

// leaderBroker is the smallest wire.Broker that serves Fetch: node 1, an
// image with one topic, and its leader replicas.
type leaderBroker struct {
	img *metadata.Image
	cfg *config.Broker

	mu       sync.Mutex
	replicas map[int32]*partition.Client
}

func (b *leaderBroker) NodeID() int32          { return leaderNode }
func (b *leaderBroker) BrokerEpoch() int64     { return 1 }
func (b *leaderBroker) Image() *metadata.Image { return b.img }
func (b *leaderBroker) Config() *config.Broker { return b.cfg }
func (b *leaderBroker) Replica(id metadata.UUID, idx int32) *partition.Client {
	b.mu.Lock()
	defer b.mu.Unlock()
	if id != topicID {
		return nil
	}
	return b.replicas[idx]
}
func (b *leaderBroker) Metadata(context.Context, metadata.Request) (metadata.Result, error) {
	return nil, errors.New("leaderBroker: no controller")
}
func (b *leaderBroker) ProducerID(context.Context) (int64, error) {
	return 0, errors.New("leaderBroker: no producer ids")
}
func (b *leaderBroker) GroupCoordinators() *group.Coordinators { return nil }
func (b *leaderBroker) LeaseValid() bool                       { return true }
func (b *leaderBroker) PeerDown(int32) bool                    { return false }
func (b *leaderBroker) DescribeQuorum(context.Context) (wire.QuorumStatus, error) {
	return wire.QuorumStatus{}, errors.New("leaderBroker: no quorum")
}

// pair is a leader replica served over a real wire.Server on loopback and
// a follower replica in an actor system of its own, with the fetcher of
// the follower's node.
type pair struct {
	t                  *testing.T
	leader, follower   *partition.Client
	leaderLog, follLog *log.Log
	leaderSys, follSys *actor.ActorSystem
	addr               string
	fetcher            *replicafetcher.Fetcher
	// dials counts the fetcher's connections; breakNext fails the next
	// request on one as a connection the leader closed.
	dials     atomic.Int32
	breakNext atomic.Bool

	mu sync.Mutex
	// incremental counts the fetches sent in a session that carried no
	// partition; proposals are the leader's ISR proposals.
	incremental int
	proposals   []partition.ISRChange
}

// recordingConn counts the pair's incremental, empty fetches.
type recordingConn struct {
	replicafetcher.Conn
	p *pair
}

func (c recordingConn) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	if c.p.breakNext.CompareAndSwap(true, false) {
		// As if the leader's process had closed the connection while it
		// sat in the fetcher.
		_ = c.Conn.Close()
		return nil, io.EOF
	}
	if f, ok := req.(*kmsg.FetchRequest); ok && f.SessionID != 0 && f.SessionEpoch > 0 && len(f.Topics) == 0 {
		c.p.mu.Lock()
		c.p.incremental++
		c.p.mu.Unlock()
	}
	return c.Conn.Request(ctx, req)
}

// newPair starts both replicas of partition 0 at epoch 0 (the leader's
// ISR is isr) and the fetcher, following nothing yet.
func newPair(t *testing.T, isr []int32) *pair { return newPairWith(t, isr, nil) }

// newPairWith is newPair with the fetcher's config changed by set.
func newPairWith(t *testing.T, isr []int32, set func(*replicafetcher.Config)) *pair {
	t.Helper()
	p := &pair{t: t, leaderSys: actor.NewActorSystem(), follSys: actor.NewActorSystem()}
	img, err := buildImage()
	if err != nil {
		t.Fatal(err)
	}
	p.leaderLog = openLog(t)
	p.follLog = openLog(t)
	rc := partition.DefaultConfig()
	rc.NodeID, rc.ReplicaLagTimeMaxMs = leaderNode, 300
	p.leader = partition.Spawn(p.leaderSys, partition.ActorConfig{Log: p.leaderLog, Replica: rc, ProposeISR: func(c partition.ISRChange) {
		p.mu.Lock()
		p.proposals = append(p.proposals, c)
		p.mu.Unlock()
	}})
	p.follower = spawnReplica(p.follSys, p.follLog, followerNode)
	p.leader.BecomeLeader(&partition.BecomeLeader{LeaderEpoch: 0, ISR: isr, Replicas: []int32{leaderNode, followerNode}})
	p.follower.BecomeFollower(&partition.BecomeFollower{Leader: leaderNode, LeaderEpoch: 0})
	waitUntil(t, "roles", func() bool {
		return p.leader.Status().Role == partition.Leader && p.follower.Status().Role == partition.Follower
	})
	b := &leaderBroker{img: img, cfg: config.NewBroker(), replicas: map[int32]*partition.Client{0: p.leader}}
	h, err := wire.NewBrokerHandler(wire.BrokerHandlerConfig{Broker: b, System: p.leaderSys})
	if err != nil {
		t.Fatal(err)
	}
	s, err := wire.NewServer(wire.TestConfig(), h)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	go func() { _ = s.Serve(ln) }()
	stopTicks := tick(p.leader, p.follower)
	fc := replicafetcher.Config{
		NodeID: followerNode, Leader: leaderNode, MaxWaitMs: 200, BackoffMs: 20,
		Dial: func(ctx context.Context, leader int32) (replicafetcher.Conn, error) {
			if leader != leaderNode {
				return nil, fmt.Errorf("no node %d", leader)
			}
			c, err := wire.DialBroker(ctx, p.addr, "replica-2")
			if err != nil {
				return nil, err
			}
			p.dials.Add(1)
			return recordingConn{Conn: c, p: p}, nil
		},
	}
	if set != nil {
		set(&fc)
	}
	p.fetcher = replicafetcher.Spawn(p.follSys, fc)
	t.Cleanup(func() {
		if err := p.fetcher.Stop(); err != nil {
			t.Errorf("stop fetcher: %v", err)
		}
		stopTicks()
		_ = s.Close()
		_ = h.Close()
		for _, c := range []*partition.Client{p.leader, p.follower} {
			if err := c.Stop(); err != nil {
				t.Errorf("stop replica: %v", err)
			}
		}
		p.leaderSys.Shutdown()
		p.follSys.Shutdown()
	})
	return p
}

// buildImage is an image with brokers 1 and 2 and topic rep, partition 0
// assigned to both and led by 1.
func buildImage() (*metadata.Image, error) {
	bl := metadata.NewBuilder(metadata.Empty())
	recs := []metadata.Record{
		metadata.TopicRecord{Name: topicName, TopicID: topicID},
		metadata.PartitionRecord{TopicID: topicID, Partition: 0, Replicas: []int32{leaderNode, followerNode},
			ISR: []int32{leaderNode, followerNode}, Leader: leaderNode},
	}
	for _, r := range recs {
		if err := bl.Apply(r, 0); err != nil {
			return nil, err
		}
	}
	return bl.Image(), nil
}

func openLog(t *testing.T) *log.Log {
	t.Helper()
	m, err := log.OpenManager(log.ManagerConfig{Dir: t.TempDir(), NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("close logs: %v", err)
		}
	})
	l, err := m.OpenLog(log.TopicPartition{Topic: topicName, Partition: 0}, log.DefaultConfig(), topicID)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func spawnReplica(system *actor.ActorSystem, l *log.Log, node int32) *partition.Client {
	rc := partition.DefaultConfig()
	rc.NodeID = node
	return partition.Spawn(system, partition.ActorConfig{Log: l, Replica: rc})
}

// tick drives the replicas' timers (acks=all timeouts, watch deadlines)
// until the returned func is called.
func tick(cs ...*partition.Client) func() {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(10 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				for _, c := range cs {
					c.Tick(0)
				}
			}
		}
	}()
	return func() { close(stop); <-done }
}

// follow has the fetcher follow partition 0 at epoch.
func (p *pair) follow(epoch int32) {
	p.fetcher.Follow([]replicafetcher.Followed{{TopicID: topicID, Topic: topicName, Partition: 0, LeaderEpoch: epoch, Replica: p.follower}})
}

// produce appends a batch of n records to the leader with acks and
// returns the result.
func (p *pair) produce(n int, acks int16, timeoutMs int32) *partition.AppendBatchesResult {
	p.t.Helper()
	return appendTo(p.t, p.leader, n, acks, timeoutMs)
}

func appendTo(t *testing.T, c *partition.Client, n int, acks int16, timeoutMs int32) *partition.AppendBatchesResult {
	t.Helper()
	recs := make([]kmsg.Record, n)
	for i := range recs {
		recs[i] = kmsg.Record{OffsetDelta: int32(i), Key: fmt.Appendf(nil, "k%d", i), Value: bytes.Repeat([]byte{'v'}, 100)}
	}
	b, err := batch.Build(batch.Options{ProducerID: batch.NoProducerID, ProducerEpoch: batch.NoProducerEpoch,
		BaseSequence: batch.NoSequence, PartitionLeaderEpoch: batch.NoPartitionLeaderEpoch, BaseTimestamp: time.Now().UnixMilli()}, recs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	res, err := c.Append(ctx, &partition.AppendBatches{Records: b, Acks: acks, TimeoutMs: timeoutMs, NowMs: time.Now().UnixMilli()})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// logBytes returns every batch of l, as stored.
func logBytes(t *testing.T, l *log.Log) []byte {
	t.Helper()
	var out []byte
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		b, err := l.Read(off, log.ReadOptions{MaxBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		bs, err := batch.Split(b)
		if err != nil || len(bs) == 0 {
			t.Fatalf("reading the log at %d: %d batches, %v", off, len(bs), err)
		}
		for _, one := range bs {
			h, err := batch.ParseHeader(one)
			if err != nil {
				t.Fatal(err)
			}
			off = h.FirstOffset + int64(h.LastOffsetDelta) + 1
		}
		out = append(out, b...)
	}
	return out
}

// waitSame waits until the follower's log holds the leader's batches,
// byte for byte, from the same log start, with the same epochs.
func (p *pair) waitSame() {
	p.t.Helper()
	waitUntil(p.t, "the follower's log equal to the leader's", func() bool {
		return p.follLog.LogEndOffset() == p.leaderLog.LogEndOffset() && p.follLog.LogStartOffset() == p.leaderLog.LogStartOffset()
	})
	if !bytes.Equal(logBytes(p.t, p.follLog), logBytes(p.t, p.leaderLog)) {
		p.t.Fatal("the follower's batches differ from the leader's")
	}
	if le, fe := p.leaderLog.Epochs(), p.follLog.Epochs(); fmt.Sprint(le) != fmt.Sprint(fe) {
		p.t.Fatalf("epochs: leader %v, follower %v", le, fe)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// position returns the fetcher's one published position.
func (p *pair) position() replicafetcher.Position {
	ps := p.fetcher.Positions()
	if len(ps) != 1 {
		return replicafetcher.Position{FetchOffset: -2}
	}
	return ps[0]
}

// Records produced on the leader reach the follower with the same offsets
// and bytes; an acks=all produce completes only once the follower fetched
// past it.
func TestReplication(t *testing.T) {
	p := newPair(t, []int32{leaderNode, followerNode})
	for range 3 {
		if res := p.produce(5, 1, 1000); res.ErrorCode != 0 {
			t.Fatalf("acks=1 produce: %v", kerr.ErrorForCode(res.ErrorCode))
		}
	}
	// acks=all waits while nobody fetches.
	done := make(chan *partition.AppendBatchesResult, 1)
	go func() { done <- appendTo(t, p.leader, 2, -1, 30000) }()
	select {
	case res := <-done:
		t.Fatalf("acks=all completed before the follower fetched: %+v", res)
	case <-time.After(100 * time.Millisecond): // a negative check: it can only fail when something is wrong
	}
	p.follow(0)
	select {
	case res := <-done:
		if res.ErrorCode != 0 || res.BaseOffset != 15 {
			t.Fatalf("acks=all produce: %+v", res)
		}
	case <-time.After(waitTimeout):
		t.Fatal("acks=all did not complete once the follower fetched")
	}
	p.waitSame()
	// More, each acknowledged by the follower.
	for i := range 5 {
		if res := p.produce(3, -1, 10000); res.ErrorCode != 0 || res.BaseOffset != int64(17+3*i) {
			t.Fatalf("acks=all produce %d: %+v", i, res)
		}
	}
	p.waitSame()
	waitUntil(t, "the follower's high watermark", func() bool { return p.follower.Status().HighWatermark == 32 })
	waitUntil(t, "the published position", func() bool {
		pos := p.position()
		return pos.FetchOffset == 32 && pos.LastFetchedEpoch == 0 && pos.LeaderEpoch == 0 && pos.LastError == "" && !pos.Paused
	})
}

// A leader epoch change on the leader fences the fetcher's partition,
// which pauses; the follower's newer epoch resumes it.
func TestLeaderEpochChange(t *testing.T) {
	p := newPair(t, []int32{leaderNode, followerNode})
	p.follow(0)
	if res := p.produce(4, -1, 10000); res.ErrorCode != 0 {
		t.Fatalf("produce: %+v", res)
	}
	p.waitSame()
	p.leader.BecomeLeader(&partition.BecomeLeader{LeaderEpoch: 1, PartitionEpoch: 1, ISR: []int32{leaderNode, followerNode}, Replicas: []int32{leaderNode, followerNode}})
	waitUntil(t, "the fetcher paused", func() bool {
		pos := p.position()
		return pos.Paused && strings.Contains(pos.LastError, "FENCED_LEADER_EPOCH")
	})
	if res := p.produce(3, 1, 1000); res.ErrorCode != 0 {
		t.Fatalf("produce at epoch 1: %+v", res)
	}
	p.follower.BecomeFollower(&partition.BecomeFollower{Leader: leaderNode, LeaderEpoch: 1, PartitionEpoch: 1})
	p.follow(1)
	p.waitSame()
	if res := p.produce(2, -1, 10000); res.ErrorCode != 0 {
		t.Fatalf("acks=all produce after the resume: %+v", res)
	}
	p.waitSame()
	waitUntil(t, "the resumed position", func() bool {
		pos := p.position()
		return !pos.Paused && pos.LeaderEpoch == 1 && pos.LastFetchedEpoch == 1 && pos.FetchOffset == 9 && pos.LastError == ""
	})
}

// A follower holding records of an epoch the new leader does not have
// gets the diverging epoch, truncates, and copies the leader's records.
func TestDivergingFollowerTruncates(t *testing.T) {
	p := newPair(t, []int32{leaderNode, followerNode})
	p.follow(0)
	if res := p.produce(2, -1, 10000); res.ErrorCode != 0 {
		t.Fatalf("produce: %+v", res)
	}
	p.waitSame()
	// The follower leads epoch 1 for a while and writes what nobody
	// copies, then the old leader takes over at epoch 2.
	p.fetcher.Unfollow([]replicafetcher.PartitionRef{{TopicID: topicID, Partition: 0}})
	waitUntil(t, "unfollowed", func() bool { return len(p.fetcher.Positions()) == 0 })
	p.follower.BecomeLeader(&partition.BecomeLeader{LeaderEpoch: 1, PartitionEpoch: 1, ISR: []int32{followerNode}, Replicas: []int32{leaderNode, followerNode}})
	waitUntil(t, "the follower leading", func() bool { return p.follower.Status().Role == partition.Leader })
	for range 2 {
		if res := appendTo(t, p.follower, 3, 1, 1000); res.ErrorCode != 0 {
			t.Fatalf("append on the follower: %+v", res)
		}
	}
	p.leader.BecomeLeader(&partition.BecomeLeader{LeaderEpoch: 2, PartitionEpoch: 2, ISR: []int32{leaderNode}, Replicas: []int32{leaderNode, followerNode}})
	if res := p.produce(1, 1, 1000); res.ErrorCode != 0 {
		t.Fatalf("produce at epoch 2: %+v", res)
	}
	p.follower.BecomeFollower(&partition.BecomeFollower{Leader: leaderNode, LeaderEpoch: 2, PartitionEpoch: 2})
	p.follow(2)
	p.waitSame()
	if got := p.follLog.LogEndOffset(); got != 3 {
		t.Fatalf("follower's log end %d, want 3", got)
	}
}

// A follower below the leader's log start restarts its log there.
func TestFollowerBelowLogStartResets(t *testing.T) {
	p := newPair(t, []int32{leaderNode}) // the high watermark moves without the follower
	for range 3 {
		if res := p.produce(2, 1, 1000); res.ErrorCode != 0 {
			t.Fatalf("produce: %+v", res)
		}
	}
	waitUntil(t, "the leader's high watermark", func() bool { return p.leader.Status().HighWatermark == 6 })
	deleteRecords(t, p.leaderSys, p.leader, 4)
	p.follow(0)
	p.waitSame()
	if got := p.follLog.LogStartOffset(); got != 4 {
		t.Fatalf("follower's log start %d, want 4", got)
	}
}

// deleteRecords moves c's log start offset to offset; c lives in sys.
func deleteRecords(t *testing.T, sys *actor.ActorSystem, c *partition.Client, offset int64) {
	t.Helper()
	in := partition.NewInbox(sys)
	defer in.Close()
	c.SendDeleteRecords(&partition.DeleteRecords{ID: 1, Offset: offset}, in.PID())
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	m, err := in.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := m.(*partition.DeleteRecordsResult); !ok || r.ErrorCode != 0 || r.LowWatermark != offset {
		t.Fatalf("delete records: %#v", m)
	}
}

// A leader that is not there yet is dialed again after the backoff.
func TestRedialAfterConnectionFailure(t *testing.T) {
	sys := actor.NewActorSystem()
	defer sys.Shutdown()
	follower := spawnReplica(sys, openLog(t), followerNode)
	defer follower.Stop()
	follower.BecomeFollower(&partition.BecomeFollower{Leader: leaderNode, LeaderEpoch: 0})
	var mu sync.Mutex
	dials := 0
	f := replicafetcher.Spawn(sys, replicafetcher.Config{
		NodeID: followerNode, Leader: leaderNode, MaxWaitMs: 50, BackoffMs: 10,
		Dial: func(ctx context.Context, leader int32) (replicafetcher.Conn, error) {
			mu.Lock()
			defer mu.Unlock()
			dials++
			return nil, errors.New("connection refused")
		},
	})
	f.Follow([]replicafetcher.Followed{{TopicID: topicID, Topic: topicName, Partition: 0, LeaderEpoch: 0, Replica: follower}})
	waitUntil(t, "three dials", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return dials >= 3
	})
	ps := f.Positions()
	if len(ps) != 1 || !strings.Contains(ps[0].LastError, "connection refused") || ps[0].FetchOffset != 0 {
		t.Fatalf("positions: %+v", ps)
	}
	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
}

// Under an incremental fetch session the follower's fetches leave the
// partition out while its position stays put; its position still reaches
// the leader when it moves (acks=all completes, the high watermark
// advances on both sides), and idle spells far longer than
// replica.lag.time.max.ms (300 ms here), in which the leader hears no
// report for the partition, do not make the caught-up follower lag: the
// leader proposes no ISR shrink.
func TestIncrementalSessionKeepsPositions(t *testing.T) {
	p := newPair(t, []int32{leaderNode, followerNode})
	p.follow(0)
	for i := range 3 {
		if res := p.produce(4, -1, 10000); res.ErrorCode != 0 || res.BaseOffset != int64(4*i) {
			t.Fatalf("acks=all produce %d: %+v", i, res)
		}
		waitUntil(t, "the follower's high watermark", func() bool { return p.follower.Status().HighWatermark == int64(4*(i+1)) })
		// Idle: at least three empty incremental fetches, and twice the
		// lag limit.
		p.mu.Lock()
		from := p.incremental
		p.mu.Unlock()
		idleFrom := time.Now()
		waitUntil(t, "empty incremental fetches", func() bool {
			p.mu.Lock()
			defer p.mu.Unlock()
			return p.incremental >= from+3 && time.Since(idleFrom) > 600*time.Millisecond
		})
	}
	p.waitSame()
	if st := p.leader.Status(); st.HighWatermark != 12 || len(st.ISR) != 2 {
		t.Fatalf("leader: %+v", st)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.proposals) != 0 {
		t.Fatalf("the leader proposed ISR changes for a caught-up follower: %+v", p.proposals)
	}
}

// A kept connection the leader closed while it sat idle (the leader's
// process restarted) is dialed again at once, not after the backoff
// (a minute here): an acks=all write completes within the test's wait.
func TestStaleConnectionRedialedAtOnce(t *testing.T) {
	p := newPairWith(t, []int32{leaderNode, followerNode}, func(c *replicafetcher.Config) { c.BackoffMs = 60_000 })
	p.follow(0)
	if res := p.produce(2, -1, 30_000); res.ErrorCode != 0 {
		t.Fatalf("acks=all produce: %+v", res)
	}
	p.breakNext.Store(true)
	if res := p.produce(2, -1, 30_000); res.ErrorCode != 0 {
		t.Fatalf("acks=all produce after the connection broke: %+v", res)
	}
	if p.breakNext.Load() {
		t.Fatal("no fetch used the broken connection")
	}
	if n := p.dials.Load(); n != 2 {
		t.Fatalf("%d dials, want 2", n)
	}
	p.waitSame()
}
