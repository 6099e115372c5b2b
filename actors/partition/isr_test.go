package partition

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// leaderShell is a shell whose replica leads at epoch 3, partition epoch
// 10, with the given ISR and assignment, over a log as st describes.
func leaderShell(t *testing.T, mutate func(*Config), st Start, isr, replicas []int32) *shell {
	t.Helper()
	cfg := DefaultConfig()
	if mutate != nil {
		mutate(&cfg)
	}
	r, err := NewReplica(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	s := &shell{t: t, r: r, leo: st.LogEndOffset, replies: map[uint64]*AppendBatchesResult{},
		positions: map[uint64]*ReplicaPosition{}, now: 1000}
	s.handle(r.BecomeLeader(&BecomeLeader{LeaderEpoch: 3, PartitionEpoch: 10, ISR: isr, Replicas: replicas}))
	return s
}

// fetched reports a follower fetch at offset, broker epoch 1, at s.now.
func (s *shell) fetched(id int32, offset int64) {
	s.handle(s.r.OnFollowerFetched(&FollowerFetched{ReplicaID: id, BrokerEpoch: 1, FetchOffset: offset, LastFetchedEpoch: 3, NowMs: s.now}))
}

// tick ticks at s.now.
func (s *shell) tick() { s.handle(s.r.OnTick(&Tick{NowMs: s.now})) }

func (s *shell) wantHW(hw int64) {
	s.t.Helper()
	if got := s.r.Status().HighWatermark; got != hw {
		s.t.Fatalf("high watermark %d, want %d", got, hw)
	}
}

func (s *shell) wantProposals(want ...[]int32) {
	s.t.Helper()
	if len(s.proposals) != len(want) {
		s.t.Fatalf("proposals %+v, want ISRs %v", s.proposals, want)
	}
	for i, p := range s.proposals {
		if !slices.Equal(p.ISR, want[i]) || p.LeaderEpoch != s.r.Status().LeaderEpoch {
			s.t.Fatalf("proposal %d: %+v, want ISR %v", i, p, want[i])
		}
	}
}

func TestHighWatermarkOverMaximalISR(t *testing.T) {
	s := leaderShell(t, nil, Start{}, []int32{1, 2, 3}, []int32{1, 2, 3})
	id := s.produce(plain(t, 3), -1)
	s.produce(plain(t, 2), 1)
	s.wantHW(0)
	s.fetched(2, 5)
	s.wantHW(0) // 3's position is unknown
	s.fetched(3, 2)
	s.wantHW(2)
	if s.reply(id) != nil {
		t.Fatal("acks=all answered before every ISR member had the batch")
	}
	s.fetched(3, 3)
	s.wantHW(3)
	s.wantReply(id, 0, 0)
	s.fetched(3, 5)
	s.wantHW(5)
	// A follower going back (it truncated) never moves the high watermark
	// back.
	s.fetched(2, 1)
	s.wantHW(5)
	if len(s.proposals) != 0 {
		t.Fatalf("proposals %+v", s.proposals)
	}
}

func TestNewLeaderEpochForgetsPositions(t *testing.T) {
	s := leaderShell(t, nil, Start{}, []int32{1, 2}, []int32{1, 2})
	s.produce(plain(t, 2), 1)
	s.fetched(2, 2)
	s.wantHW(2)
	s.produce(plain(t, 2), 1)
	// The same leadership, a new partition epoch: positions kept.
	s.handle(s.r.BecomeLeader(&BecomeLeader{LeaderEpoch: 3, PartitionEpoch: 11, ISR: []int32{1, 2}, Replicas: []int32{1, 2}}))
	s.fetched(2, 3)
	s.wantHW(3)
	// A new leader epoch: 2's position is unknown until it fetches.
	s.handle(s.r.BecomeLeader(&BecomeLeader{LeaderEpoch: 4, PartitionEpoch: 12, ISR: []int32{1, 2}, Replicas: []int32{1, 2}}))
	s.produce(plain(t, 1), 1)
	s.wantHW(3)
	s.fetched(2, 5)
	s.wantHW(5)
}

func TestHighWatermarkFrozenBelowMinInsync(t *testing.T) {
	s := leaderShell(t, func(c *Config) { c.MinInSyncReplicas = 2 }, Start{}, []int32{1}, []int32{1, 2})
	s.produce(plain(t, 2), 1)
	s.wantHW(0)
	s.fetched(2, 0) // joins at once: its offset 0 is the HW and the epoch start
	s.wantProposals([]int32{1, 2})
	s.fetched(2, 2)
	s.wantHW(0) // committed ISR {1} is below min.insync.replicas
	s.wantReply(s.produce(plain(t, 1), -1), kerr.NotEnoughReplicas.Code, -1)
	s.handle(s.r.BecomeLeader(&BecomeLeader{LeaderEpoch: 3, PartitionEpoch: 11, ISR: []int32{1, 2}, Replicas: []int32{1, 2}}))
	s.wantHW(2)
	if st := s.r.Status(); !slices.Equal(st.ISR, []int32{1, 2}) || st.PartitionEpoch != 11 {
		t.Fatalf("status %+v", st)
	}
	id := s.produce(plain(t, 1), -1)
	s.fetched(2, 3)
	s.wantHW(3)
	s.wantReply(id, 0, 2)
}

// The join rule is max(high watermark, the start of the leader's epoch):
// a follower at or past the high watermark but short of the epoch start is
// not added (it may lack records of earlier epochs that this leader kept
// and will acknowledge).
func TestISRJoinNeedsLeaderEpochStart(t *testing.T) {
	// The leader's log ends at 5 from earlier epochs, the checkpointed high
	// watermark is 2; ISR member 3 has not fetched, so the high watermark
	// stays at 2.
	s := leaderShell(t, nil, Start{LogEndOffset: 5, FlushedOffset: 5, HighWatermark: 2}, []int32{1, 3}, []int32{1, 2, 3})
	s.wantHW(2)
	s.fetched(2, 4) // >= the high watermark, < the epoch start 5
	if len(s.proposals) != 0 {
		t.Fatalf("follower below the epoch start proposed: %+v", s.proposals)
	}
	s.fetched(2, 5)
	s.wantProposals([]int32{1, 3, 2})
	// The addition counts in the maximal ISR at once: 2 now holds the high
	// watermark back too.
	s.fetched(3, 5)
	s.wantHW(5)
	s.produce(plain(t, 1), 1)
	s.fetched(3, 6)
	s.wantHW(5)
	s.fetched(2, 6)
	s.wantHW(6)
}

func TestISRShrinkAfterLagTime(t *testing.T) {
	s := leaderShell(t, nil, Start{}, []int32{1, 2, 3}, []int32{1, 2, 3})
	s.tick() // starts the caught-up clocks at 1000
	s.fetched(2, 0)
	s.fetched(3, 0)
	s.produce(plain(t, 2), 1)
	id := s.produce(plain(t, 1), -1)
	s.now += 5000
	s.fetched(3, 3) // caught up at 6000
	s.wantHW(0)
	s.now = 1000 + 10000
	s.tick()
	if len(s.proposals) != 0 {
		t.Fatalf("shrunk at exactly the lag time: %+v", s.proposals)
	}
	s.now++
	s.tick()
	s.wantProposals([]int32{1, 3})
	// A shrink counts only once committed: 2 still holds the high watermark.
	s.wantHW(0)
	if s.reply(id) != nil {
		t.Fatal("acks=all answered on an uncommitted shrink")
	}
	s.handle(s.r.BecomeLeader(&BecomeLeader{LeaderEpoch: 3, PartitionEpoch: 11, ISR: []int32{1, 3}, Replicas: []int32{1, 2, 3}}))
	s.wantHW(3)
	s.wantReply(id, 0, 2)
	// 3 stays: it caught up at 6000, and fetching at the log end keeps it
	// in sync however long ago it last caught up.
	s.now = 100000
	s.fetched(3, 3)
	s.tick()
	s.wantProposals([]int32{1, 3})
}

// Kafka's second caught-up rule: a fetch at or past the leader's log end
// offset as of the follower's previous fetch shows it was caught up at the
// previous fetch's time.
func TestCaughtUpAsOfPreviousFetch(t *testing.T) {
	s := leaderShell(t, nil, Start{}, []int32{1, 2}, []int32{1, 2})
	s.tick()
	s.produce(plain(t, 2), 1)
	s.now = 2000
	s.fetched(2, 0) // behind; the leader's end is 2
	s.produce(plain(t, 2), 1)
	s.now = 9000
	s.fetched(2, 2) // reached the end as of 2000: caught up at 2000
	s.now = 2000 + 10000
	s.tick()
	if len(s.proposals) != 0 {
		t.Fatalf("proposals %+v", s.proposals)
	}
	s.now++
	s.tick()
	s.wantProposals([]int32{1})
}

func TestISRProposalResentThenSettled(t *testing.T) {
	s := leaderShell(t, nil, Start{}, []int32{1}, []int32{1, 2, 3})
	s.tick()
	s.fetched(2, 0)
	s.fetched(3, 0) // one proposal at a time
	s.wantProposals([]int32{1, 2})
	s.now += isrProposalRetryMs - 1
	s.tick()
	s.wantProposals([]int32{1, 2})
	s.now++
	s.tick()
	s.wantProposals([]int32{1, 2}, []int32{1, 2})
	if p := s.proposals[1]; p.PartitionEpoch != 10 {
		t.Fatalf("re-sent at partition epoch %d", p.PartitionEpoch)
	}
	// The image settles it; 3 is proposed at the next fetch.
	s.handle(s.r.BecomeLeader(&BecomeLeader{LeaderEpoch: 3, PartitionEpoch: 11, ISR: []int32{1, 2}, Replicas: []int32{1, 2, 3}}))
	s.wantProposals([]int32{1, 2}, []int32{1, 2}, []int32{1, 2, 3})
	if p := s.proposals[2]; p.PartitionEpoch != 11 {
		t.Fatalf("proposed at partition epoch %d", p.PartitionEpoch)
	}
	// A stale image (lower partition epoch) changes nothing.
	s.handle(s.r.BecomeLeader(&BecomeLeader{LeaderEpoch: 3, PartitionEpoch: 9, ISR: []int32{1}, Replicas: []int32{1, 2, 3}}))
	if st := s.r.Status(); !slices.Equal(st.ISR, []int32{1, 2}) {
		t.Fatalf("stale image applied: %+v", st)
	}
}

func TestFollowerFetchIgnored(t *testing.T) {
	s := leaderShell(t, nil, Start{}, []int32{1, 2}, []int32{1, 2})
	s.produce(plain(t, 4), 1)
	s.handle(s.r.OnFollowerFetched(&FollowerFetched{ReplicaID: 2, BrokerEpoch: 5, FetchOffset: 1, NowMs: s.now}))
	s.wantHW(1)
	// A previous incarnation of broker 2 (lower broker epoch) is ignored.
	s.handle(s.r.OnFollowerFetched(&FollowerFetched{ReplicaID: 2, BrokerEpoch: 4, FetchOffset: 4, NowMs: s.now}))
	s.wantHW(1)
	s.handle(s.r.OnFollowerFetched(&FollowerFetched{ReplicaID: 2, BrokerEpoch: 6, FetchOffset: 3, NowMs: s.now}))
	s.wantHW(3)
	// Not a replica of the partition.
	s.handle(s.r.OnFollowerFetched(&FollowerFetched{ReplicaID: 9, BrokerEpoch: 1, FetchOffset: 4, NowMs: s.now}))
	if len(s.proposals) != 0 {
		t.Fatalf("proposals %+v", s.proposals)
	}
	// A follower ignores follower fetches.
	s.handle(s.r.BecomeFollower(&BecomeFollower{Leader: 2, LeaderEpoch: 4, PartitionEpoch: 11}))
	s.handle(s.r.OnFollowerFetched(&FollowerFetched{ReplicaID: 2, BrokerEpoch: 7, FetchOffset: 4, NowMs: s.now}))
	if st := s.r.Status(); st.HighWatermark != 3 || st.ISR != nil || st.PartitionEpoch != 11 {
		t.Fatalf("status %+v", st)
	}
}

func TestAcksAllAfterISRShrinksBelowMinInsync(t *testing.T) {
	s := leaderShell(t, func(c *Config) { c.MinInSyncReplicas = 2 }, Start{}, []int32{1, 2, 3}, []int32{1, 2, 3})
	s.fetched(2, 0)
	s.fetched(3, 0)
	first := s.produce(plain(t, 1), -1)
	second := s.produce(plain(t, 1), -1)
	s.fetched(2, 2)
	s.fetched(3, 1)
	s.wantReply(first, 0, 0)
	if s.reply(second) != nil {
		t.Fatal("answered before 3 had it")
	}
	// The image drops 3 and 2: the ISR is below min.insync.replicas; the
	// batch every remaining member has is answered at once.
	s.handle(s.r.BecomeLeader(&BecomeLeader{LeaderEpoch: 3, PartitionEpoch: 11, ISR: []int32{1}, Replicas: []int32{1, 2, 3}}))
	s.wantReply(second, kerr.NotEnoughReplicasAfterAppend.Code, -1)
	s.wantHW(1)
	s.wantReply(s.produce(plain(t, 1), -1), kerr.NotEnoughReplicas.Code, -1)
}

// An ISR member that never fetches after the election is removed once the
// lag time has passed since the leader's first clock reading.
func TestISRShrinkSilentFollower(t *testing.T) {
	s := leaderShell(t, nil, Start{}, []int32{1, 2}, []int32{1, 2})
	s.now = 50000
	s.tick() // the first reading after the election starts 2's clock
	s.now += 10000
	s.tick()
	if len(s.proposals) != 0 {
		t.Fatalf("proposals %+v", s.proposals)
	}
	s.now++
	s.tick()
	s.wantProposals([]int32{1})
	if !s.r.HasWaiters() {
		t.Fatal("an outstanding proposal needs ticks")
	}
}
