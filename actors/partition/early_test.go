package partition

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// produceAwaiting sends an append whose node's image makes this replica
// leader at epoch.
func (s *shell) produceAwaiting(records []byte, epoch int32) uint64 {
	s.nextID++
	s.handle(s.r.OnAppendBatches(&AppendBatches{ID: s.nextID, Records: records, Acks: 1, TimeoutMs: 30000, NowMs: s.now,
		AwaitLeader: true, AwaitLeaderEpoch: epoch}))
	return s.nextID
}

func TestAppendWaitsForTheLeadershipTheImageNames(t *testing.T) {
	s := followerShell(t, nil) // node 2, following 1 at epoch 3
	a, b := s.produceAwaiting(plain(t, 2), 4), s.produceAwaiting(plain(t, 1), 4)
	if s.reply(a) != nil || s.reply(b) != nil {
		t.Fatal("an append for a leadership not taken yet was answered")
	}
	// Without the image's word it is refused as before.
	s.wantReply(s.produce(plain(t, 1), 1), kerr.NotLeaderForPartition.Code, -1)
	if !s.r.HasWaiters() {
		t.Fatal("waiting appends do not get ticks")
	}
	s.handle(s.r.BecomeLeader(&BecomeLeader{LeaderEpoch: 4, PartitionEpoch: 8, ISR: []int32{2}, Replicas: []int32{2, 1}}))
	s.wantReply(a, 0, 0)
	s.wantReply(b, 0, 2)
}

func TestAppendForAPassedLeadershipIsRefused(t *testing.T) {
	s := followerShell(t, nil) // node 2, following 1 at epoch 3
	// The image is older than the replica: refused at once.
	s.wantReply(s.produceAwaiting(plain(t, 1), 3), kerr.NotLeaderForPartition.Code, -1)
	a := s.produceAwaiting(plain(t, 1), 4)
	// Leadership at 4 went elsewhere: refused, naming the leader.
	s.handle(s.r.BecomeFollower(&BecomeFollower{Leader: 3, LeaderEpoch: 4, PartitionEpoch: 8}))
	if rep := s.reply(a); rep == nil || rep.ErrorCode != kerr.NotLeaderForPartition.Code || rep.CurrentLeader.LeaderID != 3 {
		t.Fatalf("answer %+v, want NOT_LEADER_OR_FOLLOWER naming 3", rep)
	}
	// A wait outlasting earlyWaitMs is refused.
	b := s.produceAwaiting(plain(t, 1), 5)
	s.now += earlyWaitMs - 1
	s.tick()
	if s.reply(b) != nil {
		t.Fatal("refused before earlyWaitMs")
	}
	s.now++
	s.tick()
	s.wantReply(b, kerr.NotLeaderForPartition.Code, -1)
	// A stopping replica refuses every wait.
	c := s.produceAwaiting(plain(t, 1), 9)
	s.handle(s.r.BecomeFollower(&BecomeFollower{Leader: -1, LeaderEpoch: 4, PartitionEpoch: 8}))
	s.wantReply(c, kerr.NotLeaderForPartition.Code, -1)
}

func TestAppendWaitingForLeadershipRefusedOnceTheLeaseLapsed(t *testing.T) {
	s := followerShell(t, nil)
	a := s.produceAwaiting(plain(t, 1), 4)
	if !s.r.holdsAppends() {
		t.Fatal("a waiting append does not count as held: the actor would not check the lease")
	}
	s.handle(s.r.OnLeaseLapsed(&LeaseLapsed{}))
	s.wantReply(a, kerr.NotLeaderForPartition.Code, -1)
	s.handle(s.r.BecomeLeader(&BecomeLeader{LeaderEpoch: 4, PartitionEpoch: 8, ISR: []int32{2}, Replicas: []int32{2, 1}}))
	if got := s.r.Status().LogEndOffset; got != 0 {
		t.Fatalf("log end %d: the refused append was written", got)
	}
}
