package wire

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
)

// notLeaderAnswer is a Produce answer for partition 0 of topic:
// NOT_LEADER_OR_FOLLOWER naming leader at epoch.
func notLeaderAnswer(topic string, leader, epoch int32) *kmsg.ProduceResponse {
	resp := kmsg.NewPtrProduceResponse()
	rt := kmsg.NewProduceResponseTopic()
	rt.Topic = topic
	rp := newProducePartition(0)
	rp.ErrorCode = kerr.NotLeaderForPartition.Code
	rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = leader, epoch
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	return resp
}

// TestStaleProduceHints: a NOT_LEADER_OR_FOLLOWER answer whose hint names
// a leader this node saw go, or no leader while an election is under way,
// waits for the image to name a newer live leader and then hints it; one
// naming a live leader answers at once.
func TestStaleProduceHints(t *testing.T) {
	b := newFakeBroker(t, "127.0.0.1:9092", nil)
	regs, epoch2, err := metadata.RegisterBrokerRecords(b.Image(), metadata.BrokerRegistrationRecord{
		NodeID: 2, IncarnationID: metadata.UUID{2}, Host: "127.0.0.1", Port: 9093})
	if err != nil {
		t.Fatal(err)
	}
	b.apply(regs...)
	b.apply(metadata.BrokerUnfencedRecord{NodeID: 2, BrokerEpoch: epoch2})
	recs, err := metadata.NewTopicRecords(b.Image(), "orders", 1, 2, nil, nil, metadata.UUID{4, 2})
	if err != nil {
		t.Fatal(err)
	}
	b.apply(recs...)
	img := b.Image()
	p, _ := partitionNamed(img, "orders", 0)
	leader, other := p.Replicas[0], p.Replicas[1]
	none := func(int32) bool { return false }
	leaderDown := func(n int32) bool { return n == leader }

	if got := staleHints(img, notLeaderAnswer("orders", leader, p.LeaderEpoch), none); len(got) != 0 {
		t.Fatalf("a live leader's hint waits: %d partitions", len(got))
	}
	resp := notLeaderAnswer("orders", leader, p.LeaderEpoch)
	stale := staleHints(img, resp, leaderDown)
	if len(stale) != 1 {
		t.Fatalf("the hint of a leader seen going does not wait: %d partitions", len(stale))
	}
	// Still no newer leader: it keeps waiting.
	if stale = deleteSettled(img, stale, leaderDown); len(stale) != 1 {
		t.Fatal("settled with no new leader")
	}
	// The election moves leadership to the other replica.
	b.apply(metadata.PartitionChangeRecord{TopicID: p.TopicID, Partition: 0, Leader: other, ISR: []int32{other}})
	moved := b.Image()
	if stale = deleteSettled(moved, stale, leaderDown); len(stale) != 0 {
		t.Fatal("not settled once the image names a new leader")
	}
	hint := resp.Topics[0].Partitions[0].CurrentLeader
	np, _ := partitionNamed(moved, "orders", 0)
	if hint.LeaderID != other || hint.LeaderEpoch != np.LeaderEpoch || np.LeaderEpoch <= p.LeaderEpoch {
		t.Fatalf("hint %+v, want leader %d at epoch %d", hint, other, np.LeaderEpoch)
	}
	// An answer made from an older view gets the image's newer leader at
	// once, without waiting.
	resp = notLeaderAnswer("orders", leader, p.LeaderEpoch)
	if got := staleHints(moved, resp, leaderDown); len(got) != 0 {
		t.Fatal("waits although the image names a newer leader")
	}
	if hint := resp.Topics[0].Partitions[0].CurrentLeader; hint.LeaderID != other || hint.LeaderEpoch != np.LeaderEpoch {
		t.Fatalf("hint %+v, want the image's leader %d at %d", hint, other, np.LeaderEpoch)
	}
	// Leaderless with a clean candidate unfenced: an election is under way.
	b.apply(metadata.PartitionChangeRecord{TopicID: p.TopicID, Partition: 0, Leader: metadata.NoLeader, ISR: []int32{}, ELR: []int32{other}})
	if got := staleHints(b.Image(), notLeaderAnswer("orders", -1, -1), none); len(got) != 1 {
		t.Fatalf("a leaderless partition's answer does not wait for its election: %d", len(got))
	}
}
