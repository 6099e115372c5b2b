package wire

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
)

// exchange sends req on c with correlation id corr and decodes the
// answer.
func exchange[R kmsg.Response](c *client, req kmsg.Request, corr int32) R {
	c.t.Helper()
	c.send(req, corr)
	resp := req.ResponseKind()
	c.expectCorr(resp, corr)
	return resp.(R)
}

// findCoordinatorV0 looks up a group with FindCoordinator v0, as kafka-go
// and kafka-python do, until the coordinator is there.
func findCoordinatorV0(t *testing.T, c *client, group string) *kmsg.FindCoordinatorResponse {
	t.Helper()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version, req.CoordinatorKey = 0, group
	return exchange[*kmsg.FindCoordinatorResponse](c, req, 1)
}

// TestFindCoordinator creates __consumer_offsets on the first lookup (v0,
// librdkafka's gate) and answers every version, batched keys in v4, and
// the transactional and unknown key types.
func TestFindCoordinator(t *testing.T) {
	s, b := startBroker(t, groupTestProps)
	c := dial(t, s)
	resp := findCoordinatorV0(t, c, "g")
	br, _ := b.Image().Broker(1)
	if resp.ErrorCode != 0 || resp.NodeID != 1 || resp.Host != br.Host || resp.Port != br.Port {
		t.Fatalf("v0: %+v, want node 1 at %s:%d", resp, br.Host, br.Port)
	}
	top, ok := b.Image().Topic(metadata.ConsumerOffsetsTopic)
	if !ok || top.NumPartitions() != 50 || !top.Internal() {
		t.Fatalf("__consumer_offsets: found %v, %d partitions", ok, top.NumPartitions())
	}
	if cfg := b.Image().Config(metadata.TopicResource(metadata.ConsumerOffsetsTopic)); cfg["cleanup.policy"] != "compact" {
		t.Fatalf("__consumer_offsets configs %v, want compacted", cfg)
	}
	for v := int16(1); v <= 3; v++ {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorKey = v, "g"
		r := exchange[*kmsg.FindCoordinatorResponse](c, req, int32(10+v))
		if r.ErrorCode != 0 || r.NodeID != 1 || r.Port != br.Port {
			t.Errorf("v%d: %+v", v, r)
		}
		req.CoordinatorType = 1
		r = exchange[*kmsg.FindCoordinatorResponse](c, req, int32(20+v))
		if r.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code || r.NodeID != -1 ||
			deref(r.ErrorMessage) != errTransactionsUnsupported {
			t.Errorf("v%d transactional key: %+v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED", v, r)
		}
	}
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version, req.CoordinatorKeys = 4, []string{"a", "b", "c"}
	r := exchange[*kmsg.FindCoordinatorResponse](c, req, 30)
	if len(r.Coordinators) != 3 {
		t.Fatalf("v4: %d coordinators, want 3", len(r.Coordinators))
	}
	for i, co := range r.Coordinators {
		if co.Key != req.CoordinatorKeys[i] || co.ErrorCode != 0 || co.NodeID != 1 {
			t.Errorf("v4 key %d: %+v", i, co)
		}
	}
	req.CoordinatorType = 1
	r = exchange[*kmsg.FindCoordinatorResponse](c, req, 32)
	for _, co := range r.Coordinators {
		if co.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code || deref(co.ErrorMessage) != errTransactionsUnsupported {
			t.Errorf("v4 transactional key %s: %+v", co.Key, co)
		}
	}
	req.CoordinatorType = 7
	r = exchange[*kmsg.FindCoordinatorResponse](c, req, 31)
	if len(r.Coordinators) != 3 || r.Coordinators[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("unknown key type: %+v, want INVALID_REQUEST", r.Coordinators)
	}
}

// retryLoading repeats a request while the coordinator loads.
func retryLoading[R kmsg.Response](t *testing.T, c *client, req kmsg.Request, code func(R) int16) R {
	t.Helper()
	deadline := time.Now().Add(groupWait)
	for corr := int32(100); ; corr++ {
		r := exchange[R](c, req, corr)
		if code(r) != kerr.CoordinatorLoadInProgress.Code || time.Now().After(deadline) {
			return r
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestGroupOldVersions runs one member through the versions kafka-go and
// kafka-python hard-code (JoinGroup v2, SyncGroup/Heartbeat/LeaveGroup v0,
// OffsetCommit v2, OffsetFetch v1), then the admin APIs: DescribeGroups,
// ListGroups with a state filter, OffsetFetch v8 with two groups,
// OffsetDelete and DeleteGroups.
func TestGroupOldVersions(t *testing.T) {
	s, b := startBroker(t, groupTestProps)
	createTopic(t, b, "old", 2)
	c := dial(t, s)
	findCoordinatorV0(t, c, "kg")

	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.Group, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 2, "kg", 6000, 6000
	join.ProtocolType = "consumer"
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Topics = []string{"old"}
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: meta.AppendTo(nil)}}
	jr := retryLoading(t, c, join, func(r *kmsg.JoinGroupResponse) int16 { return r.ErrorCode })
	if jr.ErrorCode != 0 || jr.Generation != 1 || jr.MemberID == "" || jr.LeaderID != jr.MemberID || len(jr.Members) != 1 {
		t.Fatalf("join v2: %+v", jr)
	}

	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Version, sync.Group, sync.Generation, sync.MemberID = 0, "kg", 1, jr.MemberID
	assignment := []byte{0, 0, 0, 0, 0, 1, 0, 3, 'o', 'l', 'd', 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}
	sync.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: jr.MemberID, MemberAssignment: assignment}}
	if sr := exchange[*kmsg.SyncGroupResponse](c, sync, 2); sr.ErrorCode != 0 || string(sr.MemberAssignment) != string(assignment) {
		t.Fatalf("sync v0: %+v", sr)
	}

	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.Generation, hb.MemberID = 0, "kg", 1, jr.MemberID
	if r := exchange[*kmsg.HeartbeatResponse](c, hb, 3); r.ErrorCode != 0 {
		t.Fatalf("heartbeat v0: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	hb.Generation = 5
	if r := exchange[*kmsg.HeartbeatResponse](c, hb, 4); r.ErrorCode != kerr.IllegalGeneration.Code {
		t.Fatalf("heartbeat with a stale generation: %v, want ILLEGAL_GENERATION", kerr.ErrorForCode(r.ErrorCode))
	}

	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version, commit.Group, commit.Generation, commit.MemberID, commit.RetentionTimeMillis = 2, "kg", 1, jr.MemberID, -1
	commit.Topics = []kmsg.OffsetCommitRequestTopic{
		{Topic: "old", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 17}, {Partition: 9, Offset: 1}}},
	}
	cr := exchange[*kmsg.OffsetCommitResponse](c, commit, 5)
	if p := cr.Topics[0].Partitions; p[0].ErrorCode != 0 || p[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("commit v2: %+v, want ok and UNKNOWN_TOPIC_OR_PARTITION", p)
	}
	commit.Generation = 3
	cr = exchange[*kmsg.OffsetCommitResponse](c, commit, 6)
	if p := cr.Topics[0].Partitions[0]; p.ErrorCode != kerr.IllegalGeneration.Code {
		t.Fatalf("commit with a stale generation: %v, want ILLEGAL_GENERATION", kerr.ErrorForCode(p.ErrorCode))
	}

	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Version, fetch.Group = 1, "kg"
	fetch.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "old", Partitions: []int32{0, 1}}}
	fr := exchange[*kmsg.OffsetFetchResponse](c, fetch, 7)
	ps := fr.Topics[0].Partitions
	if ps[0].Offset != 17 || ps[1].Offset != -1 || ps[1].Metadata == nil || *ps[1].Metadata != "" {
		t.Fatalf("fetch v1: %+v, want 17 and -1 with metadata \"\"", ps)
	}

	describe := kmsg.NewPtrDescribeGroupsRequest()
	describe.Version, describe.Groups = 0, []string{"kg", "nobody"}
	dr := exchange[*kmsg.DescribeGroupsResponse](c, describe, 8)
	if dr.Groups[0].State != "Stable" || len(dr.Groups[0].Members) != 1 || dr.Groups[0].Protocol != "range" ||
		dr.Groups[1].State != "Dead" || dr.Groups[1].ErrorCode != 0 {
		t.Fatalf("describe v0: %+v", dr.Groups)
	}

	list := kmsg.NewPtrListGroupsRequest()
	list.Version, list.StatesFilter = 4, []string{"stable"}
	if lr := exchange[*kmsg.ListGroupsResponse](c, list, 9); len(lr.Groups) != 1 || lr.Groups[0].Group != "kg" || lr.Groups[0].GroupState != "Stable" {
		t.Fatalf("list v4 stable: %+v", lr.Groups)
	}
	list.StatesFilter = []string{"Empty"}
	if lr := exchange[*kmsg.ListGroupsResponse](c, list, 10); len(lr.Groups) != 0 {
		t.Fatalf("list v4 empty: %+v", lr.Groups)
	}

	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Version, del.Groups = 2, []string{"kg"}
	if r := exchange[*kmsg.DeleteGroupsResponse](c, del, 11); r.Groups[0].ErrorCode != kerr.NonEmptyGroup.Code {
		t.Fatalf("delete a live group: %v, want NON_EMPTY_GROUP", kerr.ErrorForCode(r.Groups[0].ErrorCode))
	}

	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version, leave.Group, leave.MemberID = 0, "kg", jr.MemberID
	if r := exchange[*kmsg.LeaveGroupResponse](c, leave, 12); r.ErrorCode != 0 {
		t.Fatalf("leave v0: %v", kerr.ErrorForCode(r.ErrorCode))
	}

	// A second group through a simple commit (generation -1), then both
	// read with one OffsetFetch v8.
	simple := kmsg.NewPtrOffsetCommitRequest()
	simple.Version, simple.Group, simple.Generation = 8, "other", -1
	simple.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "old", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 1, Offset: 3, Metadata: kmsg.StringPtr("m")}}}}
	findCoordinatorV0(t, c, "other")
	if r := retryLoading(t, c, simple, func(r *kmsg.OffsetCommitResponse) int16 { return r.Topics[0].Partitions[0].ErrorCode }); r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("simple commit: %v", kerr.ErrorForCode(r.Topics[0].Partitions[0].ErrorCode))
	}
	f8 := kmsg.NewPtrOffsetFetchRequest()
	f8.Version = 8
	f8.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "kg"}, {Group: "other", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "old", Partitions: []int32{1}}}}}
	r8 := exchange[*kmsg.OffsetFetchResponse](c, f8, 13)
	if len(r8.Groups) != 2 || r8.Groups[0].Topics[0].Partitions[0].Offset != 17 ||
		r8.Groups[1].Topics[0].Partitions[0].Offset != 3 || *r8.Groups[1].Topics[0].Partitions[0].Metadata != "m" {
		t.Fatalf("fetch v8: %+v", r8.Groups)
	}

	// kg (Empty now) gets a simple commit on partition 1 too, so that it
	// keeps an offset after the OffsetDelete below (an Empty group left
	// without offsets is removed, as in Kafka).
	simple.Group = "kg"
	if r := exchange[*kmsg.OffsetCommitResponse](c, simple, 18); r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("simple commit to kg: %v", kerr.ErrorForCode(r.Topics[0].Partitions[0].ErrorCode))
	}
	odel := kmsg.NewPtrOffsetDeleteRequest()
	odel.Group = "kg"
	odel.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "old", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
	if r := exchange[*kmsg.OffsetDeleteResponse](c, odel, 14); r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("offset delete: %+v", r)
	}
	if fr := exchange[*kmsg.OffsetFetchResponse](c, fetch, 15); fr.Topics[0].Partitions[0].Offset != -1 {
		t.Fatalf("offset %d after OffsetDelete, want -1", fr.Topics[0].Partitions[0].Offset)
	}
	if r := exchange[*kmsg.DeleteGroupsResponse](c, del, 16); r.Groups[0].ErrorCode != 0 {
		t.Fatalf("delete an empty group: %v", kerr.ErrorForCode(r.Groups[0].ErrorCode))
	}
	if r := exchange[*kmsg.DeleteGroupsResponse](c, del, 17); r.Groups[0].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("delete a deleted group: %v, want GROUP_ID_NOT_FOUND", kerr.ErrorForCode(r.Groups[0].ErrorCode))
	}
}

// TestGroupBadInput answers bad group requests with Kafka's codes and
// keeps serving.
func TestGroupBadInput(t *testing.T) {
	s, b := startBroker(t, groupTestProps)
	createTopic(t, b, "bad", 1)
	c := dial(t, s)

	// Before __consumer_offsets exists nothing is coordinated here.
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID = 4, "g", "m"
	if r := exchange[*kmsg.HeartbeatResponse](c, hb, 1); r.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("heartbeat without __consumer_offsets: %v, want NOT_COORDINATOR", kerr.ErrorForCode(r.ErrorCode))
	}
	findCoordinatorV0(t, c, "g")

	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis, join.ProtocolType = 5, 6000, 6000, "consumer"
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 0, 0, 0, 0, 0}}}
	if r := exchange[*kmsg.JoinGroupResponse](c, join, 2); r.ErrorCode != kerr.InvalidGroupID.Code {
		t.Fatalf("join with an empty group id: %v, want INVALID_GROUP_ID", kerr.ErrorForCode(r.ErrorCode))
	}
	join.Group = "g"
	join.SessionTimeoutMillis = 10 // below group.min.session.timeout.ms 100
	r := retryLoading(t, c, join, func(r *kmsg.JoinGroupResponse) int16 { return r.ErrorCode })
	if r.ErrorCode != kerr.InvalidSessionTimeout.Code {
		t.Fatalf("join with a 10ms session: %v, want INVALID_SESSION_TIMEOUT", kerr.ErrorForCode(r.ErrorCode))
	}
	join.SessionTimeoutMillis = 6000
	if r := exchange[*kmsg.JoinGroupResponse](c, join, 3); r.ErrorCode != kerr.MemberIDRequired.Code || r.MemberID == "" {
		t.Fatalf("join v5 without member id: %v, want MEMBER_ID_REQUIRED with an id", kerr.ErrorForCode(r.ErrorCode))
	}
	long := kmsg.NewPtrOffsetFetchRequest()
	long.Version, long.Group = 6, string(make([]byte, 40000)) // flexible: a compact string can be that long
	if r := exchange[*kmsg.OffsetFetchResponse](c, long, 4); r.ErrorCode != kerr.InvalidGroupID.Code {
		t.Fatalf("offset fetch with a 40000-byte group id: %v, want INVALID_GROUP_ID", kerr.ErrorForCode(r.ErrorCode))
	}
	// The connection still serves.
	findCoordinatorV0(t, c, "g")
}

// While the node's lease has lapsed, FindCoordinator names no
// coordinator for the groups it would coordinate and every group request
// gets NOT_COORDINATOR; once renewed, it coordinates again.
func TestGroupsWithoutLease(t *testing.T) {
	s, b := startBroker(t, groupTestProps)
	c := dial(t, s)
	if resp := findCoordinatorV0(t, c, "g"); resp.ErrorCode != 0 || resp.NodeID != 1 {
		t.Fatalf("with the lease: %+v", resp)
	}
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Version, fetch.Group = 3, "g"
	code := func(r *kmsg.OffsetFetchResponse) int16 { return r.ErrorCode }
	if r := retryLoading(t, c, fetch, code); r.ErrorCode != 0 {
		t.Fatalf("offset fetch with the lease: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	b.leaseUntil.Store(time.Now().Add(-time.Second).UnixNano())
	if resp := findCoordinatorV0(t, c, "g"); resp.ErrorCode != kerr.CoordinatorNotAvailable.Code || resp.NodeID != -1 {
		t.Fatalf("without the lease: %+v", resp)
	}
	if r := exchange[*kmsg.OffsetFetchResponse](c, fetch, 50); r.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("offset fetch without the lease: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	b.leaseUntil.Store(0)
	if r := exchange[*kmsg.OffsetFetchResponse](c, fetch, 51); r.ErrorCode != 0 {
		t.Fatalf("offset fetch with the lease renewed: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}
