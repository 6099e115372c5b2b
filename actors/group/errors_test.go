package group

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestValidateGroupID(t *testing.T) {
	long := strings.Repeat("g", MaxGroupIDBytes+1)
	for _, tc := range []struct {
		key  kmsg.Key
		id   string
		want int16
	}{
		{kmsg.JoinGroup, "", kerr.InvalidGroupID.Code},
		{kmsg.SyncGroup, "", kerr.InvalidGroupID.Code},
		{kmsg.Heartbeat, "", kerr.InvalidGroupID.Code},
		{kmsg.LeaveGroup, "", kerr.InvalidGroupID.Code},
		{kmsg.OffsetDelete, "", kerr.InvalidGroupID.Code},
		{kmsg.OffsetCommit, "", 0},
		{kmsg.OffsetFetch, "", 0},
		{kmsg.DescribeGroups, "", 0},
		{kmsg.DeleteGroups, "", 0},
		{kmsg.OffsetFetch, long, kerr.InvalidGroupID.Code},
		{kmsg.JoinGroup, "ok", 0},
	} {
		if got := ValidateGroupID(tc.key.Int16(), tc.id); got != tc.want {
			t.Errorf("ValidateGroupID(%v, %d bytes) = %d, want %d", tc.key, len(tc.id), got, tc.want)
		}
	}
}

func TestAppendErrorMappings(t *testing.T) {
	for _, tc := range []struct {
		in          *kerr.Error
		group, comm *kerr.Error
	}{
		{kerr.NotLeaderForPartition, kerr.NotCoordinator, kerr.NotCoordinator},
		{kerr.KafkaStorageError, kerr.NotCoordinator, kerr.NotCoordinator},
		{kerr.UnknownTopicOrPartition, kerr.CoordinatorNotAvailable, kerr.CoordinatorNotAvailable},
		{kerr.NotEnoughReplicas, kerr.CoordinatorNotAvailable, kerr.CoordinatorNotAvailable},
		{kerr.NotEnoughReplicasAfterAppend, kerr.CoordinatorNotAvailable, kerr.CoordinatorNotAvailable},
		{kerr.RequestTimedOut, kerr.RebalanceInProgress, kerr.RequestTimedOut},
		{kerr.MessageTooLarge, kerr.UnknownServerError, kerr.InvalidCommitOffsetSize},
		{kerr.RecordListTooLarge, kerr.UnknownServerError, kerr.InvalidCommitOffsetSize},
		{kerr.InvalidFetchSize, kerr.UnknownServerError, kerr.InvalidCommitOffsetSize},
		{kerr.NetworkException, kerr.NetworkException, kerr.CoordinatorLoadInProgress},
		{kerr.CorruptMessage, kerr.CorruptMessage, kerr.CorruptMessage},
	} {
		if got := groupAppendError(tc.in.Code); got != tc.group.Code {
			t.Errorf("group mapping of %s = %d, want %s", tc.in.Message, got, tc.group.Message)
		}
		if got := commitAppendError(tc.in.Code); got != tc.comm.Code {
			t.Errorf("commit mapping of %s = %d, want %s", tc.in.Message, got, tc.comm.Message)
		}
	}
	if groupAppendError(0) != 0 || commitAppendError(0) != 0 {
		t.Error("success mapped to an error")
	}
}

func TestCoordinatorError(t *testing.T) {
	load := kerr.CoordinatorLoadInProgress.Code
	nc := kerr.NotCoordinator.Code

	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.MemberID = 6, "m"
	jr := CoordinatorError(join, nc).(*kmsg.JoinGroupResponse)
	if jr.ErrorCode != nc || jr.MemberID != "m" || jr.Generation != -1 || jr.Protocol == nil || jr.Version != 6 {
		t.Errorf("join = %+v", jr)
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	if sr := CoordinatorError(sync, load).(*kmsg.SyncGroupResponse); sr.ErrorCode != kerr.RebalanceInProgress.Code {
		t.Errorf("sync during load = %d, want REBALANCE_IN_PROGRESS", sr.ErrorCode)
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	if hr := CoordinatorError(hb, load).(*kmsg.HeartbeatResponse); hr.ErrorCode != 0 {
		t.Errorf("heartbeat during load = %d, want none", hr.ErrorCode)
	}
	if hr := CoordinatorError(hb, nc).(*kmsg.HeartbeatResponse); hr.ErrorCode != nc {
		t.Errorf("heartbeat = %d", hr.ErrorCode)
	}
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0}, {Partition: 3}}}}
	cr := CoordinatorError(commit, load).(*kmsg.OffsetCommitResponse)
	if len(cr.Topics[0].Partitions) != 2 || cr.Topics[0].Partitions[1].Partition != 3 || cr.Topics[0].Partitions[1].ErrorCode != load {
		t.Errorf("commit = %+v", cr)
	}

	// OffsetFetch: v0-1 per partition, v2-7 top level, v8 per group.
	f := kmsg.NewPtrOffsetFetchRequest()
	f.Version, f.Group = 1, "g"
	f.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}}
	fr := CoordinatorError(f, nc).(*kmsg.OffsetFetchResponse)
	if fr.ErrorCode != 0 || len(fr.Topics[0].Partitions) != 2 || fr.Topics[0].Partitions[1].ErrorCode != nc || deref(fr.Topics[0].Partitions[0].Metadata) != "" || fr.Topics[0].Partitions[0].Metadata == nil {
		t.Errorf("fetch v1 = %+v", fr)
	}
	f.Version = 5
	if fr := CoordinatorError(f, nc).(*kmsg.OffsetFetchResponse); fr.ErrorCode != nc || len(fr.Topics) != 0 {
		t.Errorf("fetch v5 = %+v", fr)
	}
	f.Version = 8
	f.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "a"}, {Group: "b"}}
	if fr := CoordinatorError(f, nc).(*kmsg.OffsetFetchResponse); len(fr.Groups) != 2 || fr.Groups[1].Group != "b" || fr.Groups[1].ErrorCode != nc {
		t.Errorf("fetch v8 = %+v", fr)
	}

	d := kmsg.NewPtrDescribeGroupsRequest()
	d.Groups = []string{"a", "b"}
	if dr := CoordinatorError(d, nc).(*kmsg.DescribeGroupsResponse); len(dr.Groups) != 2 || dr.Groups[0].ErrorCode != nc || dr.Groups[0].State != "" {
		t.Errorf("describe = %+v", dr)
	}
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"a"}
	if dr := CoordinatorError(del, nc).(*kmsg.DeleteGroupsResponse); dr.Groups[0].ErrorCode != nc {
		t.Errorf("delete = %+v", dr)
	}
	for _, req := range []kmsg.Request{kmsg.NewPtrLeaveGroupRequest(), kmsg.NewPtrOffsetDeleteRequest(), kmsg.NewPtrListGroupsRequest()} {
		if CoordinatorError(req, nc) == nil {
			t.Errorf("%T: no answer", req)
		}
	}
	if CoordinatorError(kmsg.NewPtrProduceRequest(), nc) != nil {
		t.Error("a Produce request got a group answer")
	}
}

func TestOffsetFetchAssembly(t *testing.T) {
	cfg := DefaultConfig()
	g, _ := NewGroup(cfg, "g", 0)
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group = 2, "g"
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 9}}}}
	out := g.OffsetCommit(&OffsetCommit{ID: 1, Req: req})
	g.AppendCompleted(&AppendCompleted{ID: out.Appends[0].ID, BaseOffset: 0})

	// v1 with explicit partitions; v3 with null topics (all offsets).
	f := kmsg.NewPtrOffsetFetchRequest()
	f.Version, f.Group = 1, "g"
	f.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}}
	parts := OffsetFetchGroups(f)
	resp := OffsetFetchResponse(f, []kmsg.OffsetFetchResponseGroup{g.FetchOffsets(parts[0].Topics, RequireStable(f))})
	if p := resp.Topics[0].Partitions; p[0].Offset != 9 || p[1].Offset != -1 || p[1].Metadata == nil {
		t.Fatalf("v1 = %+v", resp.Topics)
	}
	f.Version, f.Topics = 3, nil
	parts = OffsetFetchGroups(f)
	if parts[0].Topics != nil {
		t.Fatal("null topics became a list")
	}
	resp = OffsetFetchResponse(f, []kmsg.OffsetFetchResponseGroup{g.FetchOffsets(parts[0].Topics, false)})
	if len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].Offset != 9 {
		t.Fatalf("v3 all = %+v", resp.Topics)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, mut := range []func(*Config){
		func(c *Config) { c.GroupMinSessionTimeoutMs = -1 },
		func(c *Config) { c.GroupMaxSessionTimeoutMs = 1 },
		func(c *Config) { c.GroupMaxSize = 0 },
		func(c *Config) { c.GroupInitialRebalanceDelayMs = -1 },
		func(c *Config) { c.OffsetMetadataMaxBytes = -1 },
		func(c *Config) { c.OffsetsRetentionMs = 0 },
		func(c *Config) { c.OffsetsRetentionCheckIntervalMs = 0 },
	} {
		c := DefaultConfig()
		mut(&c)
		if _, err := NewGroup(c, "g", 0); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
	if id := randomUUID(); len(id) != 36 || id[14] != '4' {
		t.Errorf("random UUID %q", id)
	}
}
