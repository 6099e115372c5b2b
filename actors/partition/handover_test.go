package partition

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/log"
)

// handOverShell leads (node 1, epoch 3, partition epoch 10) with ISR and
// replicas 1, 2, 3, has appended 3 records and both followers fetched
// them all.
func handOverShell(t *testing.T) *shell {
	t.Helper()
	s := leaderShell(t, nil, Start{}, []int32{1, 2, 3}, []int32{1, 2, 3})
	s.wantReply(s.produce(plain(t, 3), 1), 0, 0)
	s.fetched(2, 3)
	s.fetched(3, 3)
	return s
}

// step performs out and returns its HandOverReady.
func (s *shell) step(out Output) *HandOverReady {
	h := out.HandOverReady
	out.HandOverReady = nil
	s.handle(out)
	return h
}

func TestRebalanceHandOverHoldsAppendsUntilMoved(t *testing.T) {
	s := handOverShell(t)
	s.produce(plain(t, 2), 1) // offsets 3-4: only 3 has fetched them below
	if h := s.step(s.r.OnHandOver(&HandOver{ID: 7, Rebalance: true, To: 2})); h != nil {
		t.Fatalf("ready before the successor had the log end: %+v", h)
	}
	held := s.produce(plain(t, 1), 1)
	if s.reply(held) != nil {
		t.Fatalf("append during a rebalance answered: %+v", s.reply(held))
	}
	// Another in-sync follower catching up is not the successor asked for.
	s.step(s.r.OnFollowerFetched(&FollowerFetched{ReplicaID: 3, BrokerEpoch: 1, FetchOffset: 5, LastFetchedEpoch: 3, NowMs: s.now}))
	h := s.step(s.r.OnFollowerFetched(&FollowerFetched{ReplicaID: 2, BrokerEpoch: 1, FetchOffset: 5, LastFetchedEpoch: 3, NowMs: s.now}))
	if h == nil || h.ID != 7 || h.Successor != 2 || h.LogEndOffset != 5 || h.LeaderEpoch != 3 || h.PartitionEpoch != 10 {
		t.Fatalf("hand-over ready %+v, want successor 2 at offset 5, epochs 3/10", h)
	}
	if s.reply(held) != nil {
		t.Fatal("held append answered before the move")
	}
	// The move applied: the held append goes to the new leader.
	s.handle(s.r.BecomeFollower(&BecomeFollower{Leader: 2, LeaderEpoch: 4, PartitionEpoch: 11}))
	rep := s.reply(held)
	if rep == nil || rep.ErrorCode != kerr.NotLeaderForPartition.Code || rep.CurrentLeader != (LeaderHint{LeaderID: 2, LeaderEpoch: 4}) {
		t.Fatalf("held append answered %+v, want NOT_LEADER_OR_FOLLOWER naming leader 2 at epoch 4", rep)
	}
	if got := s.r.Status().LogEndOffset; got != 5 {
		t.Fatalf("log end %d: the held append was written", got)
	}
}

func TestRebalanceHandOverCancelRunsHeldAppends(t *testing.T) {
	s := handOverShell(t)
	s.step(s.r.OnHandOver(&HandOver{ID: 7, Rebalance: true, To: 2}))
	a, b := s.produce(plain(t, 2), 1), s.produce(plain(t, 1), 1)
	// A stale cancel changes nothing.
	s.handle(s.r.OnHandOverCancel(&HandOverCancel{ID: 6}))
	if s.reply(a) != nil {
		t.Fatal("a cancel of another hand-over resumed writes")
	}
	s.handle(s.r.OnHandOverCancel(&HandOverCancel{ID: 7}))
	s.wantReply(a, 0, 3)
	s.wantReply(b, 0, 5)
	s.wantReply(s.produce(plain(t, 1), 1), 0, 6)
}

func TestRebalanceHandOverEndsWhenThePartitionChanges(t *testing.T) {
	s := handOverShell(t)
	if h := s.step(s.r.OnHandOver(&HandOver{ID: 7, Rebalance: true, To: 2})); h == nil || h.Successor != 2 {
		t.Fatalf("hand-over ready %+v", h)
	}
	held := s.produce(plain(t, 1), 1)
	// The same partition epoch seen again (a reconcile of an unchanged
	// image) keeps the hand-over: the move may still apply.
	s.handle(s.r.BecomeLeader(&BecomeLeader{LeaderEpoch: 3, PartitionEpoch: 10, ISR: []int32{1, 2, 3}, Replicas: []int32{1, 2, 3}}))
	if s.reply(held) != nil {
		t.Fatal("held append answered at an unchanged partition")
	}
	// The ISR changed at epoch 11 with this replica still leading: the
	// move, made at 10, can never apply; writes resume.
	s.handle(s.r.BecomeLeader(&BecomeLeader{LeaderEpoch: 3, PartitionEpoch: 11, ISR: []int32{1, 2}, Replicas: []int32{1, 2, 3}}))
	s.wantReply(held, 0, 3)
}

func TestRebalanceHandOverHeldAppendTimesOut(t *testing.T) {
	s := handOverShell(t)
	s.step(s.r.OnHandOver(&HandOver{ID: 7, Rebalance: true, To: 2}))
	held := s.produce(plain(t, 1), 1) // TimeoutMs 30000
	if !s.r.HasWaiters() {
		t.Fatal("a held append is not a waiter: the replica would not be ticked")
	}
	s.now += 29999
	s.tick()
	if s.reply(held) != nil {
		t.Fatal("held append timed out early")
	}
	s.now++
	s.tick()
	s.wantReply(held, kerr.RequestTimedOut.Code, -1)
}

func TestShutdownHandOverRefusesWhatARebalanceHeld(t *testing.T) {
	s := handOverShell(t)
	s.step(s.r.OnHandOver(&HandOver{ID: 7, Rebalance: true, To: 2}))
	held := s.produce(plain(t, 1), 1)
	h := s.step(s.r.OnHandOver(&HandOver{ID: 8}))
	if h == nil || h.ID != 8 || h.Successor < 0 {
		t.Fatalf("shutdown hand-over ready %+v", h)
	}
	s.wantReply(held, kerr.NotLeaderForPartition.Code, -1)
	s.wantReply(s.produce(plain(t, 1), 1), kerr.NotLeaderForPartition.Code, -1)
	// A rebalance's cancel does not end a shutdown's hand-over.
	s.handle(s.r.OnHandOverCancel(&HandOverCancel{ID: 8}))
	s.wantReply(s.produce(plain(t, 1), 1), kerr.NotLeaderForPartition.Code, -1)
}

func TestRebalanceHandOverRefusesHeldAppendsOnceTheLeaseLapsed(t *testing.T) {
	s := handOverShell(t)
	if h := s.step(s.r.OnHandOver(&HandOver{ID: 7, Rebalance: true, To: 2})); h == nil || h.Successor != 2 {
		t.Fatalf("hand-over ready %+v", h)
	}
	a, b := s.produce(plain(t, 2), 1), s.produce(plain(t, 1), -1)
	s.handle(s.r.OnLeaseLapsed(&LeaseLapsed{}))
	s.wantReply(a, kerr.NotLeaderForPartition.Code, -1)
	s.wantReply(b, kerr.NotLeaderForPartition.Code, -1)
	// The hand-over goes on: the next append is held, and the partition
	// changing while this replica leads runs only that one.
	c := s.produce(plain(t, 1), 1)
	if s.reply(c) != nil {
		t.Fatalf("append after the lapse answered during the hand-over: %+v", s.reply(c))
	}
	s.handle(s.r.BecomeLeader(&BecomeLeader{LeaderEpoch: 3, PartitionEpoch: 11, ISR: []int32{1, 2, 3}, Replicas: []int32{1, 2, 3}}))
	s.wantReply(c, 0, 3)
	if got := s.r.Status().LogEndOffset; got != 4 {
		t.Fatalf("log end %d, want 4: only the append held after the lapse is written", got)
	}
}

// The actor checks the lease again before it runs held appends: they
// waited for the hand-over, and another node may lead by the time it is
// called off.
func TestActorRefusesHeldAppendsOnceTheLeaseLapsed(t *testing.T) {
	var lease atomic.Bool
	lease.Store(true)
	e := startActorWith(t, log.NewMemFS(), false, func(c *ActorConfig) { c.LeaseValid = lease.Load })
	defer e.stop()
	e.append(plain(t, 1), 1, 0, 0)
	in := NewInbox(e.system)
	defer in.Close()
	held := func(id uint64) {
		// No follower holds the log: the hand-over waits, holding appends.
		e.c.SendHandOver(&HandOver{ID: id, Rebalance: true, To: 2}, in.PID())
		e.c.SendAppend(&AppendBatches{ID: id, Records: plain(t, 1), Acks: 1, TimeoutMs: 30000}, in.PID())
		e.c.SendSyncStatus(&SyncStatus{ID: id}, in.PID())
		if m := receive(t, in); m.(*StatusSynced).Status.LogEndOffset != 1 {
			t.Fatalf("status %+v: the append was not held", m.(*StatusSynced).Status)
		}
	}
	refused := func(id uint64) {
		r, ok := receive(t, in).(*AppendBatchesResult)
		if !ok || r.ID != id || r.ErrorCode != kerr.NotLeaderForPartition.Code {
			t.Fatalf("held append %d answered %+v, want NOT_LEADER_OR_FOLLOWER", id, r)
		}
	}
	held(1)
	lease.Store(false)
	e.c.CancelHandOver(1)
	refused(1)
	lease.Store(true)
	held(2)
	lease.Store(false)
	e.c.Tick(e.nowMs)
	refused(2)
	e.c.SendSyncStatus(&SyncStatus{ID: 3}, in.PID())
	if st := receive(t, in).(*StatusSynced).Status; st.LogEndOffset != 1 {
		t.Fatalf("log end %d: a held append was written without the lease", st.LogEndOffset)
	}
	lease.Store(true)
	e.c.CancelHandOver(2)
	e.append(plain(t, 1), 1, 0, 1)
}

// receive returns the next message of in, failing after 5 s.
func receive(t *testing.T, in *Inbox) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := in.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
