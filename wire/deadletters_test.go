package wire

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"
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

// TestQueuedRequestsAnsweredWhenPartitionActorStops holds a partition
// actor's mailbox (suspended, as a busy actor would hold it), queues a
// Produce with acks=1 and with acks=all, a DeleteRecords, a ListOffsets
// and a long-poll Fetch's watch in it, stops the actor and releases the
// mailbox: each is answered NOT_LEADER_OR_FOLLOWER at once. protoactor
// drops such messages, so before, each waited for its backstop (30 s,
// the request timeout or the fetch's 20 s max wait), past ioTimeout.
func TestQueuedRequestsAnsweredWhenPartitionActorStops(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "q", 1)
	rc := replica(t, b, "q", 0)
	proc, _ := b.system.ProcessRegistry.Get(rc.PID())
	proc.SendSystemMessage(rc.PID(), &actor.SuspendMailbox{})

	conns := make([]*client, 5)
	for i := range conns {
		conns[i] = dial(t, s)
	}
	for i, acks := range []int16{1, -1} {
		req := produceReq(9, acks)
		req.TimeoutMillis = 20000
		req.Topics[0].Topic = "q"
		req.Topics[0].Partitions[0].Records = makeBatch(t, batchOpts(), 1, 10)
		conns[i].send(req, 1)
	}
	del := kmsg.NewPtrDeleteRecordsRequest()
	del.TimeoutMillis = 20000
	dt := kmsg.NewDeleteRecordsRequestTopic()
	dt.Topic = "q"
	dt.Partitions = []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: -1}}
	del.Topics = []kmsg.DeleteRecordsRequestTopic{dt}
	conns[2].send(del, 1)
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Version, lo.ReplicaID = 7, -1
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "q"
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Partition, lp.Timestamp, lp.CurrentLeaderEpoch = 0, -1, -1
	lt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{lp}
	lo.Topics = []kmsg.ListOffsetsRequestTopic{lt}
	conns[3].send(lo, 1)
	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version, fetch.ReplicaID, fetch.MaxWaitMillis, fetch.MinBytes, fetch.MaxBytes = 11, -1, 20000, 1, 1<<20
	fetch.SessionEpoch = -1
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "q"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch, fp.LogStartOffset = 0, 0, 1<<20, -1, -1
	ft.Partitions = []kmsg.FetchRequestTopicPartition{fp}
	fetch.Topics = []kmsg.FetchRequestTopic{ft}
	conns[4].send(fetch, 1)

	waitFor(t, func() bool { return rc.Queued() == 5 })
	if err := rc.Stop(); err != nil {
		t.Fatal(err)
	}
	proc.SendSystemMessage(rc.PID(), &actor.ResumeMailbox{})

	notLeader := kerr.NotLeaderForPartition.Code
	for i, what := range []string{"acks=1", "acks=all"} {
		r := kmsg.NewPtrProduceResponse()
		r.Version = 9
		conns[i].expectCorr(r, 1)
		if code := r.Topics[0].Partitions[0].ErrorCode; code != notLeader {
			t.Errorf("queued produce %s: %v, want NOT_LEADER_OR_FOLLOWER", what, kerr.ErrorForCode(code))
		}
	}
	dr := kmsg.NewPtrDeleteRecordsResponse()
	conns[2].expectCorr(dr, 1)
	if code := dr.Topics[0].Partitions[0].ErrorCode; code != notLeader {
		t.Errorf("queued delete records: %v, want NOT_LEADER_OR_FOLLOWER", kerr.ErrorForCode(code))
	}
	lr := kmsg.NewPtrListOffsetsResponse()
	lr.Version = 7
	conns[3].expectCorr(lr, 1)
	if code := lr.Topics[0].Partitions[0].ErrorCode; code != notLeader {
		t.Errorf("queued list offsets: %v, want NOT_LEADER_OR_FOLLOWER", kerr.ErrorForCode(code))
	}
	fr := kmsg.NewPtrFetchResponse()
	fr.Version = 11
	conns[4].expectCorr(fr, 1)
	if code := fr.Topics[0].Partitions[0].ErrorCode; code != notLeader {
		t.Errorf("long-poll fetch whose watch was queued: %v, want NOT_LEADER_OR_FOLLOWER", kerr.ErrorForCode(code))
	}
}
