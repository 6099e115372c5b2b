package wire

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/group"
	"github.com/weirmq/weir/cluster/metadata"
)

// Requests to actors that are gone are answered at once with the
// retriable code Kafka gives, not after a backstop. Each response is read
// within ioTimeout (10 s), far below the backstops (JoinGroup's is an
// hour, Produce's and DeleteRecords' 30 s), so a pass means the answer
// did not wait for one.

// TestStoppedGroupCoordinatorAnswersNotCoordinator stops a loaded group
// coordinator actor behind the routing table's back (as when it stops
// between the lookup and the Route) and checks that JoinGroup, then
// OffsetCommit and a batched OffsetFetch, get NOT_COORDINATOR.
func TestStoppedGroupCoordinatorAnswersNotCoordinator(t *testing.T) {
	s, b := startBroker(t, groupTestProps)
	createTopic(t, b, "dl", 1)
	c := dial(t, s)
	findCoordinatorV0(t, c, "dl")
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = "dl", 6000, 6000
	join.ProtocolType, join.MemberID = "consumer", ""
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Topics = []string{"dl"}
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: meta.AppendTo(nil)}}
	join.Version = 3 // no member id round trip (KIP-394 starts at v4)
	if jr := retryLoading(t, c, join, func(r *kmsg.JoinGroupResponse) int16 { return r.ErrorCode }); jr.ErrorCode != 0 {
		t.Fatalf("join: %v", kerr.ErrorForCode(jr.ErrorCode))
	}

	top, _ := b.Image().Topic(metadata.ConsumerOffsetsTopic)
	co := b.groups.Get(group.PartitionFor("dl", top.NumPartitions()))
	if err := b.system.Root.StopFuture(co.PID()).Wait(); err != nil {
		t.Fatal(err)
	}

	if r := exchange[*kmsg.JoinGroupResponse](c, join, 1000); r.ErrorCode != kerr.NotCoordinator.Code {
		t.Errorf("join to a stopped coordinator: %v, want NOT_COORDINATOR", kerr.ErrorForCode(r.ErrorCode))
	}
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version, commit.Group, commit.Generation = 8, "dl", -1
	ct := kmsg.NewOffsetCommitRequestTopic()
	ct.Topic = "dl"
	ct.Partitions = []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}
	commit.Topics = []kmsg.OffsetCommitRequestTopic{ct}
	if r := exchange[*kmsg.OffsetCommitResponse](c, commit, 1001); r.Topics[0].Partitions[0].ErrorCode != kerr.NotCoordinator.Code {
		t.Errorf("commit to a stopped coordinator: %v, want NOT_COORDINATOR", kerr.ErrorForCode(r.Topics[0].Partitions[0].ErrorCode))
	}
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Version = 8
	fetch.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "dl"}}
	if r := exchange[*kmsg.OffsetFetchResponse](c, fetch, 1002); r.Groups[0].ErrorCode != kerr.NotCoordinator.Code {
		t.Errorf("offset fetch from a stopped coordinator: %v, want NOT_COORDINATOR", kerr.ErrorForCode(r.Groups[0].ErrorCode))
	}
}

// TestStoppedPartitionActorAnswersNotLeader stops a partition actor that
// the broker still routes to and checks that Produce (acks=1, whose
// backstop is 30 s) and DeleteRecords get NOT_LEADER_OR_FOLLOWER.
func TestStoppedPartitionActorAnswersNotLeader(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "t", 1)
	if err := replica(t, b, "t", 0).Stop(); err != nil {
		t.Fatal(err)
	}
	c := dial(t, s)
	req := produceReq(9, 1)
	req.Topics[0].Partitions[0].Records = makeBatch(t, batchOpts(), 1, 10)
	if r := exchange[*kmsg.ProduceResponse](c, req, 1); r.Topics[0].Partitions[0].ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Errorf("produce to a stopped partition actor: %v, want NOT_LEADER_OR_FOLLOWER", kerr.ErrorForCode(r.Topics[0].Partitions[0].ErrorCode))
	}
	del := kmsg.NewPtrDeleteRecordsRequest()
	del.TimeoutMillis = 1000
	dt := kmsg.NewDeleteRecordsRequestTopic()
	dt.Topic = "t"
	dt.Partitions = []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: 0}}
	del.Topics = []kmsg.DeleteRecordsRequestTopic{dt}
	if r := exchange[*kmsg.DeleteRecordsResponse](c, del, 2); r.Topics[0].Partitions[0].ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Errorf("delete records on a stopped partition actor: %v, want NOT_LEADER_OR_FOLLOWER", kerr.ErrorForCode(r.Topics[0].Partitions[0].ErrorCode))
	}
}
