package wire

// DescribeGroups (key 15), versions 0-5.
//
// v1 throttle time. v3 include_authorized_operations (KIP-430). v4
// group_instance_id of members (KIP-345). v5 flexible (KIP-482). v6
// (GROUP_ID_NOT_FOUND for unknown groups, KIP-1043) is not served:
// unknown groups are Dead with no error, as Kafka answers v0-5.
//
// Each group is asked of its own coordinator; a group whose coordinator
// is elsewhere gets NOT_COORDINATOR.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/group"
)

// groupAuthorizedOps is READ, DELETE and DESCRIBE on a group (KIP-430):
// weir has no authorizer, so every operation a group supports is allowed.
const groupAuthorizedOps = 1<<3 | 1<<6 | 1<<8

func (h *BrokerHandler) handleDescribeGroups(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.DescribeGroupsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeGroupsResponse)
	resp.Groups = make([]kmsg.DescribeGroupsResponseGroup, len(r.Groups))
	var calls []groupCall
	for i, id := range r.Groups {
		if code := group.ValidateGroupID(req.Key, id); code != 0 {
			h.log.Info("describe groups: invalid group id", "client", req.ClientID, "group_bytes", len(id))
			resp.Groups[i] = group.DescribeError(id, code)
			continue
		}
		calls = append(calls, groupCall{group: id, op: &group.DescribeGroup{Version: r.Version},
			done: func(res kmsg.Response, code int16) {
				if d, ok := res.(*kmsg.DescribeGroupsResponse); ok && len(d.Groups) == 1 {
					resp.Groups[i] = d.Groups[0]
					return
				}
				resp.Groups[i] = group.DescribeError(id, code)
			}})
	}
	return h.callGroups(calls, groupBackstop, func() Response {
		for i := range resp.Groups {
			resp.Groups[i].AuthorizedOperations = authorizedOpsOmitted
			if r.IncludeAuthorizedOperations {
				resp.Groups[i].AuthorizedOperations = groupAuthorizedOps
			}
		}
		return Reply(resp)
	})
}
