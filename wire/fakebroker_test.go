package wire

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirmq/weir/actors/group"
	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/log"
)

// fakeBroker is a one-node Broker for the API handlers' tests: an
// in-memory metadata image changed by Metadata (the real controller's
// decisions, metadata.Controller, applied at once, no raft) and by the
// tests' Propose, and a partition
// actor, leading, for every partition of the image, over logs in a temporary
// directory. It stands in for package cluster, which wire cannot import.
type fakeBroker struct {
	t      testing.TB
	system *actor.ActorSystem
	logs   *log.Manager
	cfg    *config.Broker
	node   int32
	epoch  int64

	// leaseUntil, Unix ns, ends the lease (0: it never lapses).
	leaseUntil atomic.Int64

	mu       sync.Mutex // serializes Propose and the replica map
	img      *metadata.Image
	replicas map[replicaKey]*partition.Client
	// controller decides Metadata's requests; pids is the block
	// ProducerID hands ids from.
	controller metadata.Controller
	pids       metadata.ProducerIDBlock

	// groups are the group coordinators of the __consumer_offsets
	// partitions (all led here), ticked every groupTick until close.
	groups     *group.Coordinators
	groupParts map[replicaKey]bool // the replicas of __consumer_offsets
	tickerStop chan struct{}
	tickerDone chan struct{}
	// handler is the BrokerHandler startBroker serves over this broker.
	handler *BrokerHandler
	// quorum, if set, is what DescribeQuorum answers; else a writable
	// single voter at the image's offset.
	quorum *QuorumStatus
}

// groupTick is the fake broker's ticker period for the group
// coordinators (session timeouts, rebalance deadlines).
const groupTick = 10 * time.Millisecond

type replicaKey struct {
	id  metadata.UUID
	idx int32
}

// newFakeBroker returns a broker registered and unfenced as node 1,
// advertising addr, with the server.properties lines in props applied.
func newFakeBroker(t testing.TB, addr string, props map[string]string) *fakeBroker {
	t.Helper()
	return newFakeBrokerFS(t, addr, props, nil)
}

// newFakeBrokerFS is newFakeBroker with its logs on fs (nil: the OS's).
func newFakeBrokerFS(t testing.TB, addr string, props map[string]string, fs log.FS) *fakeBroker {
	t.Helper()
	cfg := config.NewBroker()
	for k, v := range props {
		if err := cfg.Override(k, v); err != nil {
			t.Fatalf("config %s=%s: %v", k, v, err)
		}
	}
	m, err := log.OpenManager(log.ManagerConfig{Dir: t.TempDir(), FS: fs, NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	b := &fakeBroker{
		t: t, system: actor.NewActorSystem(), logs: m, cfg: cfg, node: 1,
		img: metadata.Empty(), replicas: map[replicaKey]*partition.Client{},
		controller: metadata.Controller{Config: cfg, Rand: rand.Reader},
	}
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(portStr)
	b.apply(metadata.ClusterCreatedRecord{ClusterID: metadata.UUID{9, 9, 9}.String()})
	b.apply(metadata.ControllerChangedRecord{ControllerID: 1, Term: 1})
	regs, epoch, err := metadata.RegisterBrokerRecords(b.img, metadata.BrokerRegistrationRecord{
		NodeID: 1, IncarnationID: metadata.UUID{1}, Host: host, Port: int32(port),
	})
	if err != nil {
		t.Fatal(err)
	}
	b.epoch = epoch
	b.apply(regs...)
	b.apply(metadata.BrokerUnfencedRecord{NodeID: 1, BrokerEpoch: epoch})
	gcfg, err := group.ShellConfigFromBroker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if b.groups, err = group.NewCoordinators(b.system, gcfg); err != nil {
		t.Fatal(err)
	}
	b.groupParts = map[replicaKey]bool{}
	b.tickerStop, b.tickerDone = make(chan struct{}), make(chan struct{})
	go b.tickGroups()
	t.Cleanup(b.close)
	return b
}

// tickGroups is the fake broker's ticker.
func (b *fakeBroker) tickGroups() {
	defer close(b.tickerDone)
	tk := time.NewTicker(groupTick)
	defer tk.Stop()
	for {
		select {
		case <-b.tickerStop:
			return
		case <-tk.C:
			b.groups.Tick()
		}
	}
}

func (b *fakeBroker) GroupCoordinators() *group.Coordinators { return b.groups }

// LeaseValid holds until leaseUntil, when set (0: a lease that never
// lapses).
func (b *fakeBroker) LeaseValid() bool {
	v := b.leaseUntil.Load()
	return v == 0 || time.Now().UnixNano() < v
}

// LeaseUntil is leaseUntil, zero when unset.
func (b *fakeBroker) LeaseUntil() time.Time {
	if v := b.leaseUntil.Load(); v != 0 {
		return time.Unix(0, v)
	}
	return time.Time{}
}

func (b *fakeBroker) PeerDown(int32) bool { return false }

func (b *fakeBroker) apply(recs ...metadata.Record) {
	bl := metadata.NewBuilder(b.img)
	off := b.img.Offset() + 1
	for _, r := range recs {
		if err := bl.Apply(r, off); err != nil {
			b.t.Fatalf("fake broker: apply %v: %v", r, err)
		}
	}
	b.img = bl.Image()
}

func (b *fakeBroker) close() {
	close(b.tickerStop)
	<-b.tickerDone
	if err := b.groups.Stop(); err != nil {
		b.t.Errorf("stop group coordinators: %v", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, c := range b.replicas {
		if err := c.Stop(); err != nil {
			b.t.Errorf("stop replica: %v", err)
		}
		delete(b.replicas, k)
	}
	b.system.Shutdown()
	if err := b.logs.Close(); err != nil {
		b.t.Errorf("close logs: %v", err)
	}
}

func (b *fakeBroker) NodeID() int32          { return b.node }
func (b *fakeBroker) BrokerEpoch() int64     { return b.epoch }
func (b *fakeBroker) Config() *config.Broker { return b.cfg }

func (b *fakeBroker) DescribeQuorum(context.Context) (QuorumStatus, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.quorum != nil {
		return *b.quorum, nil
	}
	end := b.img.Offset() + 1
	return QuorumStatus{Leader: true, LeaderID: b.node, LeaderEpoch: 1, HighWatermark: end, Writable: true, Now: time.Now(),
		Voters: []QuorumReplica{{ID: b.node, LogEndOffset: end}}}, nil
}

func (b *fakeBroker) Image() *metadata.Image {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.img
}

func (b *fakeBroker) Replica(id metadata.UUID, idx int32) *partition.Client {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.replicas[replicaKey{id, idx}]
}

// Metadata decides req as the controller does and applies its records at
// once.
func (b *fakeBroker) Metadata(ctx context.Context, req metadata.Request) (metadata.Result, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	res, recs := b.controller.Evaluate(b.img, req)
	if err := b.applyLocked(recs); err != nil {
		res.Fail(metadata.ErrorOf(err))
	}
	return res, nil
}

// ProducerID hands ids out of a block the controller allocates.
func (b *fakeBroker) ProducerID(ctx context.Context) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if id, ok := b.pids.Take(); ok {
		return id, nil
	}
	res, recs := b.controller.Evaluate(b.img, &metadata.AllocateProducerIDsRequest{BrokerID: b.node, BrokerEpoch: b.epoch})
	if err := b.applyLocked(recs); err != nil {
		return 0, err
	}
	if err := b.pids.Fill(res.(*metadata.AllocateProducerIDsResult)); err != nil {
		return 0, err
	}
	id, _ := b.pids.Take()
	return id, nil
}

// Propose applies build's records at once, then starts (leading) or stops
// replicas to match the image: the tests' way to set the image up.
func (b *fakeBroker) Propose(ctx context.Context, build func(img *metadata.Image) ([]metadata.Record, error)) (*metadata.Image, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	recs, err := build(b.img)
	if err != nil {
		return nil, err
	}
	if err := b.applyLocked(recs); err != nil {
		return nil, err
	}
	return b.img, nil
}

// applyLocked applies recs as one batch and reconciles the replicas; mu is
// held.
func (b *fakeBroker) applyLocked(recs []metadata.Record) error {
	if len(recs) == 0 {
		return nil
	}
	bl := metadata.NewBuilder(b.img)
	off := b.img.Offset() + 1
	for _, r := range recs {
		if err := bl.Apply(r, off); err != nil {
			return fmt.Errorf("fake broker: apply %v: %w", r, err)
		}
	}
	b.img = bl.Image()
	return b.reconcile()
}

// reconcile runs with mu held.
func (b *fakeBroker) reconcile() error {
	live := map[replicaKey]bool{}
	for _, t := range b.img.Topics() {
		for i := range t.NumPartitions() {
			p, _ := t.Partition(i)
			k := replicaKey{t.ID(), i}
			live[k] = true
			if _, ok := b.replicas[k]; ok || p.Leader != b.node {
				continue
			}
			resolved, err := b.cfg.ResolveTopic(b.img.Config(metadata.TopicResource(t.Name())))
			if err != nil {
				return err
			}
			lc, err := config.ToLogConfig(resolved)
			if err != nil {
				return err
			}
			l, err := b.logs.OpenLog(log.TopicPartition{Topic: t.Name(), Partition: i}, lc, t.ID())
			if err != nil {
				return err
			}
			rc := partition.DefaultConfig()
			rc.NodeID = b.node
			rc.Compacted = lc.CleanupCompact
			for _, r := range resolved {
				switch r.Name {
				case "message.timestamp.type":
					rc.LogAppendTime = r.Value == "LogAppendTime"
				case "message.timestamp.before.max.ms":
					_, err = fmt.Sscan(r.Value, &rc.TimestampBeforeMaxMs)
				case "message.timestamp.after.max.ms":
					_, err = fmt.Sscan(r.Value, &rc.TimestampAfterMaxMs)
				}
				if err != nil {
					return err
				}
			}
			c := partition.Spawn(b.system, partition.ActorConfig{Log: l, Replica: rc})
			c.BecomeLeader(&partition.BecomeLeader{LeaderEpoch: p.LeaderEpoch, ISR: p.ISR})
			b.replicas[k] = c
			if t.Name() == metadata.ConsumerOffsetsTopic {
				b.groupParts[k] = true
				b.groups.Load(i, c, p.LeaderEpoch)
			}
		}
	}
	for k, c := range b.replicas {
		if live[k] {
			continue
		}
		if b.groupParts[k] {
			delete(b.groupParts, k)
			b.groups.Unload(k.idx)
		}
		if err := c.Stop(); err != nil {
			return err
		}
		delete(b.replicas, k)
	}
	return nil
}

// startBroker serves the real API table with a BrokerHandler over a
// fakeBroker on a loopback port and returns the server and the broker.
func startBroker(t *testing.T, props map[string]string) (*Server, *fakeBroker) {
	t.Helper()
	return startBrokerFS(t, props, nil)
}

// startBrokerFS is startBroker with the broker's logs on fs (nil: the
// OS's).
func startBrokerFS(t *testing.T, props map[string]string, fs log.FS) (*Server, *fakeBroker) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := newFakeBrokerFS(t, ln.Addr().String(), props, fs)
	h, err := NewBrokerHandler(BrokerHandlerConfig{Broker: b, System: b.system})
	if err != nil {
		t.Fatal(err)
	}
	b.handler = h
	cfg := TestConfig()
	s, err := NewServer(cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() {
		_ = s.Close()
		_ = h.Close()
	})
	// Let Serve take the listener before the test dials.
	deadline := time.Now().Add(5 * time.Second)
	for s.Addr() == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return s, b
}
