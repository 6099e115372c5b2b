package group

import (
	"context"
	"encoding/binary"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/log/batch"
)

// waitFor bounds every wait of these tests; it fires only when one fails.
const waitFor = 5 * time.Second

// memPartition is an in-memory __consumer_offsets partition replica: a
// list of batches with offsets assigned, a settable role, and appends that
// can be failed or held.
type memPartition struct {
	system *actor.ActorSystem

	mu       sync.Mutex
	status   partition.Status
	batches  [][]byte
	failCode int16 // answer appends with this code (0: append)
	gone     bool  // answer appends as a stopped actor would
	hold     bool  // leave appends unanswered
	appends  int
}

func newMemPartition(system *actor.ActorSystem, leaderEpoch int32) *memPartition {
	return &memPartition{system: system, status: partition.Status{Role: partition.Leader, LeaderEpoch: leaderEpoch}}
}

func (p *memPartition) Status() partition.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

func (p *memPartition) setStatus(fn func(*partition.Status)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fn(&p.status)
}

func (p *memPartition) ReadNow(m *partition.ReadRecords) *partition.ReadRecordsResult {
	p.mu.Lock()
	defer p.mu.Unlock()
	res := &partition.ReadRecordsResult{HighWatermark: p.status.HighWatermark, LogStartOffset: p.status.LogStartOffset}
	for _, b := range p.batches {
		if batch.LastOffset(b) < m.Offset || batch.BaseOffset(b) >= p.status.HighWatermark {
			continue
		}
		if len(res.Records) > 0 && len(res.Records)+len(b) > m.MaxBytes {
			break
		}
		res.Records = append(res.Records, b...)
	}
	return res
}

func (p *memPartition) SendAppend(req *partition.AppendBatches, replyTo *actor.PID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.appends++
	switch {
	case p.hold:
		return
	case p.gone:
		p.system.Root.Send(replyTo, &actor.DeadLetterResponse{})
		return
	case p.failCode != 0:
		p.system.Root.Send(replyTo, &partition.AppendBatchesResult{ID: req.ID, ErrorCode: p.failCode, BaseOffset: -1})
		return
	case !req.CheckLeaderEpoch || req.LeaderEpoch != p.status.LeaderEpoch:
		// As the real replica does for a conditional append; the
		// coordinator must always make its appends conditional.
		p.system.Root.Send(replyTo, &partition.AppendBatchesResult{ID: req.ID, ErrorCode: kerr.NotLeaderForPartition.Code, BaseOffset: -1})
		return
	}
	base := p.status.LogEndOffset
	binary.BigEndian.PutUint64(req.Records, uint64(base))
	p.batches = append(p.batches, req.Records)
	p.status.LogEndOffset = batch.LastOffset(req.Records) + 1
	p.status.HighWatermark = p.status.LogEndOffset
	p.system.Root.Send(replyTo, &partition.AppendBatchesResult{ID: req.ID, BaseOffset: base})
}

func (p *memPartition) set(fn func(p *memPartition)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fn(p)
}

// harness runs Coordinators over memPartitions with a settable clock.
type harness struct {
	t      *testing.T
	system *actor.ActorSystem
	coords *Coordinators
	nowMs  atomic.Int64
}

func newHarness(t *testing.T, adjust func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, system: actor.NewActorSystem()}
	h.nowMs.Store(1_000_000)
	cfg := DefaultShellConfig()
	cfg.Group.GroupInitialRebalanceDelayMs = 0
	if adjust != nil {
		adjust(&cfg.Group)
	}
	cfg.Now = func() time.Time { return time.UnixMilli(h.nowMs.Load()) }
	cfg.Logger = slog.New(slog.DiscardHandler)
	var err error
	if h.coords, err = NewCoordinators(h.system, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.coords.Stop(); err != nil {
			t.Error(err)
		}
		h.system.Shutdown()
	})
	return h
}

// send routes op to group g of partition 0's coordinator and returns the
// inbox the answer arrives in.
func (h *harness) send(g string, op Op) *partition.Inbox {
	h.t.Helper()
	co := h.coords.Get(0)
	if co == nil {
		h.t.Fatal("no coordinator for partition 0")
	}
	in := partition.NewInbox(h.system)
	h.t.Cleanup(in.Close)
	co.Send(&Route{ID: 7, Group: g, Op: op}, in.PID())
	return in
}

// answer waits for the answer in in: the response, or nil when the
// coordinator was gone (dead letter).
func (h *harness) answer(in *partition.Inbox) kmsg.Response {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	m, err := in.Receive(ctx)
	if err != nil {
		h.t.Fatalf("no answer: %v", err)
	}
	switch m := m.(type) {
	case *RouteResult:
		if m.ID != 7 {
			h.t.Fatalf("answer to request %d, want 7", m.ID)
		}
		return m.Response
	case *actor.DeadLetterResponse:
		return nil
	}
	h.t.Fatalf("unexpected answer %T", m)
	return nil
}

func (h *harness) call(g string, op Op) kmsg.Response {
	h.t.Helper()
	return h.answer(h.send(g, op))
}

func commitReq(group string, offset int64) *kmsg.OffsetCommitRequest {
	r := kmsg.NewPtrOffsetCommitRequest()
	r.Version, r.Group, r.Generation = 8, group, -1
	p := kmsg.NewOffsetCommitRequestTopicPartition()
	p.Partition, p.Offset = 0, offset
	t := kmsg.NewOffsetCommitRequestTopic()
	t.Topic, t.Partitions = "orders", []kmsg.OffsetCommitRequestTopicPartition{p}
	r.Topics = []kmsg.OffsetCommitRequestTopic{t}
	return r
}

// commitCode returns the code of the commit's one partition.
func commitCode(t *testing.T, resp kmsg.Response) int16 {
	t.Helper()
	r, ok := resp.(*kmsg.OffsetCommitResponse)
	if !ok || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		t.Fatalf("commit answer %#v", resp)
	}
	return r.Topics[0].Partitions[0].ErrorCode
}

// fetched returns the committed offset of orders-0 and the group's code.
func (h *harness) fetched(g string) (int64, int16) {
	h.t.Helper()
	resp := h.call(g, &FetchOffsets{Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "orders", Partitions: []int32{0}}}})
	r, ok := resp.(*kmsg.OffsetFetchResponse)
	if !ok || len(r.Groups) != 1 {
		h.t.Fatalf("fetch answer %#v", resp)
	}
	gr := r.Groups[0]
	if gr.ErrorCode != 0 {
		return -1, gr.ErrorCode
	}
	p := gr.Topics[0].Partitions[0]
	if p.Metadata == nil {
		h.t.Fatal("null metadata in OffsetFetch")
	}
	return p.Offset, p.ErrorCode
}

// loaded waits until partition 0's coordinator has loaded.
func (h *harness) loaded(g string) {
	h.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		if _, code := h.fetched(g); code != kerr.CoordinatorLoadInProgress.Code {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatal("coordinator still loading")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestCoordinatorCommitReloadFromRecords commits through the actors, then
// loads the partition's records into a new coordinator (a new leader
// epoch) and finds the commit; a partition still led elsewhere keeps the
// coordinator loading.
func TestCoordinatorCommitReloadFromRecords(t *testing.T) {
	h := newHarness(t, nil)
	p := newMemPartition(h.system, 1)
	h.coords.Load(0, p, 1)
	h.loaded("g")
	if code := commitCode(t, h.call("g", &OffsetCommit{Req: commitReq("g", 42)})); code != 0 {
		t.Fatalf("commit: %v", kerr.ErrorForCode(code))
	}
	if off, code := h.fetched("g"); off != 42 || code != 0 {
		t.Fatalf("fetched %d (%v), want 42", off, kerr.ErrorForCode(code))
	}
	if p.appends != 1 || len(p.batches) != 1 {
		t.Fatalf("%d appends, %d batches; want 1 each", p.appends, len(p.batches))
	}

	// A new epoch: the replica is not leader at it yet.
	p.setStatus(func(s *partition.Status) { s.Role = partition.Follower })
	h.coords.Load(0, p, 2)
	if _, code := h.fetched("g"); code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("fetch while the partition is not led: %v, want COORDINATOR_LOAD_IN_PROGRESS", kerr.ErrorForCode(code))
	}
	p.setStatus(func(s *partition.Status) { s.Role, s.LeaderEpoch = partition.Leader, 2 })
	h.loaded("g")
	if off, code := h.fetched("g"); off != 42 || code != 0 {
		t.Fatalf("after reload: %d (%v), want 42", off, kerr.ErrorForCode(code))
	}
	listed := h.list()
	if len(listed) != 1 || listed[0].GroupID != "g" || listed[0].State != Empty {
		t.Fatalf("listed %+v, want g Empty", listed)
	}
}

// list asks partition 0's coordinator for its groups.
func (h *harness) list() []Overview {
	h.t.Helper()
	in := partition.NewInbox(h.system)
	defer in.Close()
	h.coords.Get(0).SendListGroups(&ListGroups{ID: 3}, in.PID())
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	m, err := in.Receive(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	l := m.(*GroupsListed)
	if l.ErrorCode != 0 {
		h.t.Fatalf("list: %v", kerr.ErrorForCode(l.ErrorCode))
	}
	return l.Groups
}

// TestCoordinatorUnknownGroupNotKept answers reads of unknown groups
// without keeping them.
func TestCoordinatorUnknownGroupNotKept(t *testing.T) {
	h := newHarness(t, nil)
	h.coords.Load(0, newMemPartition(h.system, 0), 0)
	h.loaded("nobody")
	r := kmsg.NewPtrHeartbeatRequest()
	r.Version, r.Group, r.MemberID, r.Generation = 4, "nobody", "m", 1
	hb := h.call("nobody", &Heartbeat{Req: r}).(*kmsg.HeartbeatResponse)
	if hb.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("heartbeat to an unknown group: %v, want UNKNOWN_MEMBER_ID", kerr.ErrorForCode(hb.ErrorCode))
	}
	d := h.call("nobody", &DescribeGroup{Version: 5}).(*kmsg.DescribeGroupsResponse)
	if d.Groups[0].State != "Dead" {
		t.Fatalf("describe unknown group: state %q, want Dead", d.Groups[0].State)
	}
	if l := h.list(); len(l) != 0 {
		t.Fatalf("listed %+v, want nothing", l)
	}
}

// TestCoordinatorUnloadAnswersNotCoordinator unloads a coordinator with a
// parked join and a commit waiting for its append: both are answered
// NOT_COORDINATOR, and later requests find no coordinator.
func TestCoordinatorUnloadAnswersNotCoordinator(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.GroupInitialRebalanceDelayMs = 60_000 })
	p := newMemPartition(h.system, 3)
	h.coords.Load(0, p, 3)
	h.loaded("g")
	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.Group, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 3, "g", 10_000, 60_000
	join.ProtocolType = "consumer"
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 0, 0, 0, 0, 0}}}
	joinIn := h.send("g", &JoinGroup{Req: join})

	p.set(func(p *memPartition) { p.hold = true })
	commitIn := h.send("h", &OffsetCommit{Req: commitReq("h", 5)})
	deadline := time.Now().Add(waitFor)
	for func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.appends == 0 }() {
		if time.Now().After(deadline) {
			t.Fatal("commit never appended")
		}
		time.Sleep(time.Millisecond)
	}

	h.coords.Unload(0)
	if j := h.answer(joinIn).(*kmsg.JoinGroupResponse); j.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("parked join: %v, want NOT_COORDINATOR", kerr.ErrorForCode(j.ErrorCode))
	}
	if code := commitCode(t, h.answer(commitIn)); code != kerr.NotCoordinator.Code {
		t.Fatalf("waiting commit: %v, want NOT_COORDINATOR", kerr.ErrorForCode(code))
	}
	if h.coords.Get(0) != nil {
		t.Fatal("coordinator still registered after Unload")
	}
}

// TestCoordinatorAppendErrors maps the partition's append errors to what
// committers are told (Kafka's maybeConvertOffsetCommitError), and a
// partition actor that is gone to NOT_COORDINATOR.
func TestCoordinatorAppendErrors(t *testing.T) {
	h := newHarness(t, nil)
	p := newMemPartition(h.system, 0)
	h.coords.Load(0, p, 0)
	h.loaded("g")
	for _, tc := range []struct {
		append, want int16
		gone         bool
	}{
		{append: kerr.NotEnoughReplicas.Code, want: kerr.CoordinatorNotAvailable.Code},
		{append: kerr.NotEnoughReplicasAfterAppend.Code, want: kerr.CoordinatorNotAvailable.Code},
		{append: kerr.NotLeaderForPartition.Code, want: kerr.NotCoordinator.Code},
		{append: kerr.KafkaStorageError.Code, want: kerr.NotCoordinator.Code},
		{append: kerr.MessageTooLarge.Code, want: kerr.InvalidCommitOffsetSize.Code},
		{append: kerr.RequestTimedOut.Code, want: kerr.RequestTimedOut.Code},
		{gone: true, want: kerr.NotCoordinator.Code},
		{want: 0},
	} {
		p.set(func(p *memPartition) { p.failCode, p.gone = tc.append, tc.gone })
		if code := commitCode(t, h.call("g", &OffsetCommit{Req: commitReq("g", 9)})); code != tc.want {
			t.Errorf("append error %v (gone %v): commit got %v, want %v", kerr.ErrorForCode(tc.append), tc.gone,
				kerr.ErrorForCode(code), kerr.ErrorForCode(tc.want))
		}
	}
	if off, _ := h.fetched("g"); off != 9 {
		t.Fatalf("committed %d after the successful commit, want 9", off)
	}
}

// TestCoordinatorTickExpiresMember joins and syncs one member, then moves
// the clock past its session timeout: the coordinator's tick removes it
// and the group is Empty.
func TestCoordinatorTickExpiresMember(t *testing.T) {
	h := newHarness(t, nil)
	h.coords.Load(0, newMemPartition(h.system, 0), 0)
	h.loaded("g")
	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.Group, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 3, "g", 6000, 10_000
	join.ProtocolType = "consumer"
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 0, 0, 0, 0, 0}}}
	jr := h.call("g", &JoinGroup{Req: join}).(*kmsg.JoinGroupResponse)
	if jr.ErrorCode != 0 || jr.Generation != 1 {
		t.Fatalf("join: %v generation %d", kerr.ErrorForCode(jr.ErrorCode), jr.Generation)
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Version, sync.Group, sync.Generation, sync.MemberID = 3, "g", 1, jr.MemberID
	sync.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: jr.MemberID, MemberAssignment: []byte{0, 0}}}
	if sr := h.call("g", &SyncGroup{Req: sync}).(*kmsg.SyncGroupResponse); sr.ErrorCode != 0 {
		t.Fatalf("sync: %v", kerr.ErrorForCode(sr.ErrorCode))
	}
	if l := h.list(); len(l) != 1 || l[0].State != Stable {
		t.Fatalf("listed %+v, want g Stable", l)
	}
	h.nowMs.Add(6001)
	h.coords.Tick()
	deadline := time.Now().Add(waitFor)
	for {
		l := h.list()
		if len(l) == 1 && l[0].State == Empty {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("listed %+v after the session timeout, want g Empty", l)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestCoordinatorTickExpiresOffsets: an Empty group's offsets expire
// offsets.retention.minutes after the commit, found by the tick after the
// next offsets.retention.check.interval.ms, and their tombstones are
// appended.
func TestCoordinatorTickExpiresOffsets(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.OffsetsRetentionMs, c.OffsetsRetentionCheckIntervalMs = 60_000, 1000 })
	p := newMemPartition(h.system, 0)
	h.coords.Load(0, p, 0)
	h.loaded("g")
	if code := commitCode(t, h.call("g", &OffsetCommit{Req: commitReq("g", 5)})); code != 0 {
		t.Fatalf("commit: %v", kerr.ErrorForCode(code))
	}
	h.nowMs.Add(30_000)
	h.coords.Tick()
	if off, _ := h.fetched("g"); off != 5 {
		t.Fatalf("offset %d half way through retention, want 5", off)
	}
	h.nowMs.Add(31_000)
	h.coords.Tick()
	deadline := time.Now().Add(waitFor)
	for {
		if off, _ := h.fetched("g"); off == -1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("offset not expired after the retention")
		}
		time.Sleep(2 * time.Millisecond)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.appends != 2 {
		t.Fatalf("%d appends, want the commit and the expiry's tombstones", p.appends)
	}
}
