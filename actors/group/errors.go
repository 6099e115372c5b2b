package group

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// MaxGroupIDBytes is the longest group id accepted: the most a
// __consumer_offsets key (an int16-length string) can hold. Kafka has no
// explicit limit but cannot write a longer id's records either.
const MaxGroupIDBytes = 32767

// ValidateGroupID returns INVALID_GROUP_ID for a group id the API cannot
// take, else 0 (Kafka's isValidGroupId): OffsetCommit, OffsetFetch,
// DescribeGroups and DeleteGroups accept the empty id, the other group
// APIs do not; no API takes one above MaxGroupIDBytes. Shells check it
// before routing: Kafka answers it before NOT_COORDINATOR.
func ValidateGroupID(apiKey int16, id string) int16 {
	if len(id) > MaxGroupIDBytes {
		return kerr.InvalidGroupID.Code
	}
	if id != "" {
		return 0
	}
	switch kmsg.Key(apiKey) {
	case kmsg.OffsetCommit, kmsg.OffsetFetch, kmsg.DescribeGroups, kmsg.DeleteGroups:
		return 0
	}
	return kerr.InvalidGroupID.Code
}

// groupAppendError maps the error of a group metadata append to what the
// members are told, as Kafka's GroupMetadataManager.storeGroup does.
func groupAppendError(code int16) int16 {
	switch code {
	case 0:
		return 0
	case kerr.UnknownTopicOrPartition.Code, kerr.NotEnoughReplicas.Code, kerr.NotEnoughReplicasAfterAppend.Code:
		return kerr.CoordinatorNotAvailable.Code
	case kerr.NotLeaderForPartition.Code, kerr.KafkaStorageError.Code:
		return kerr.NotCoordinator.Code
	case kerr.RequestTimedOut.Code:
		return kerr.RebalanceInProgress.Code
	case kerr.MessageTooLarge.Code, kerr.RecordListTooLarge.Code, kerr.InvalidFetchSize.Code:
		return kerr.UnknownServerError.Code
	}
	return code
}

// commitAppendError maps the error of an offset commit append, as Kafka's
// GroupMetadataManager.maybeConvertOffsetCommitError does.
func commitAppendError(code int16) int16 {
	switch code {
	case 0:
		return 0
	case kerr.NetworkException.Code:
		return kerr.CoordinatorLoadInProgress.Code
	case kerr.UnknownTopicOrPartition.Code, kerr.NotEnoughReplicas.Code, kerr.NotEnoughReplicasAfterAppend.Code:
		return kerr.CoordinatorNotAvailable.Code
	case kerr.NotLeaderForPartition.Code, kerr.KafkaStorageError.Code:
		return kerr.NotCoordinator.Code
	case kerr.MessageTooLarge.Code, kerr.RecordListTooLarge.Code, kerr.InvalidFetchSize.Code:
		return kerr.InvalidCommitOffsetSize.Code
	}
	return code
}

// CoordinatorError answers a whole group request that the coordinator
// rejects before any group sees it: INVALID_GROUP_ID, NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS or COORDINATOR_NOT_AVAILABLE, in the shape
// of the request's version, with Kafka's substitutions: a SyncGroup during
// a load gets REBALANCE_IN_PROGRESS, a Heartbeat during a load gets no
// error. It returns nil for a request that is not a group request.
func CoordinatorError(req kmsg.Request, code int16) kmsg.Response {
	load := code == kerr.CoordinatorLoadInProgress.Code
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		return joinResponse(r.Version, joinError(r.MemberID, code)).Response
	case *kmsg.SyncGroupRequest:
		if load {
			code = kerr.RebalanceInProgress.Code
		}
		return syncResponse(r.Version, syncError(code)).Response
	case *kmsg.HeartbeatRequest:
		resp := kmsg.NewPtrHeartbeatResponse()
		resp.Version = r.Version
		if !load {
			resp.ErrorCode = code
		}
		return resp
	case *kmsg.LeaveGroupRequest:
		resp := kmsg.NewPtrLeaveGroupResponse()
		resp.Version, resp.ErrorCode = r.Version, code
		return resp
	case *kmsg.OffsetCommitRequest:
		entries := make([]commitEntry, 0)
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				entries = append(entries, commitEntry{tp: TopicPartition{t.Topic, p.Partition}})
			}
		}
		return commitResponse(r, entries, func(commitEntry) int16 { return code }).Response
	case *kmsg.OffsetFetchRequest:
		groups := OffsetFetchGroups(r)
		out := make([]kmsg.OffsetFetchResponseGroup, len(groups))
		for i, g := range groups {
			out[i] = OffsetFetchError(g.Group, code)
		}
		return OffsetFetchResponse(r, out)
	case *kmsg.OffsetDeleteRequest:
		resp := kmsg.NewPtrOffsetDeleteResponse()
		resp.Version, resp.ErrorCode = r.Version, code
		return resp
	case *kmsg.DescribeGroupsRequest:
		resp := kmsg.NewPtrDescribeGroupsResponse()
		resp.Version = r.Version
		for _, id := range r.Groups {
			resp.Groups = append(resp.Groups, DescribeError(id, code))
		}
		return resp
	case *kmsg.DeleteGroupsRequest:
		resp := kmsg.NewPtrDeleteGroupsResponse()
		resp.Version = r.Version
		for _, id := range r.Groups {
			resp.Groups = append(resp.Groups, DeleteError(id, code))
		}
		return resp
	case *kmsg.ListGroupsRequest:
		resp := kmsg.NewPtrListGroupsResponse()
		resp.Version, resp.ErrorCode = r.Version, code
		return resp
	}
	return nil
}

// DescribeError is a DescribeGroups entry for a group the coordinator
// cannot describe (Kafka's EmptyGroup summary: no state).
func DescribeError(id string, code int16) kmsg.DescribeGroupsResponseGroup {
	d := kmsg.NewDescribeGroupsResponseGroup()
	d.Group, d.ErrorCode = id, code
	return d
}

// DeleteError is a DeleteGroups entry with an error code.
func DeleteError(id string, code int16) kmsg.DeleteGroupsResponseGroup {
	d := kmsg.NewDeleteGroupsResponseGroup()
	d.Group, d.ErrorCode = id, code
	return d
}

// OffsetFetchError is an OffsetFetch group entry with an error code.
func OffsetFetchError(id string, code int16) kmsg.OffsetFetchResponseGroup {
	g := kmsg.NewOffsetFetchResponseGroup()
	g.Group, g.ErrorCode = id, code
	return g
}
