package wire

// DeleteGroups (key 42), versions 0-2 (KIP-229).
//
// v1 same as v0. v2 flexible (KIP-482). An Empty group is deleted with
// its offsets (tombstones written to __consumer_offsets before the
// answer); a group with members gets NON_EMPTY_GROUP, an unknown one
// GROUP_ID_NOT_FOUND. Each group is sent to its own coordinator.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/group"
)

func (h *BrokerHandler) handleDeleteGroups(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.DeleteGroupsRequest)
	resp := r.ResponseKind().(*kmsg.DeleteGroupsResponse)
	resp.Groups = make([]kmsg.DeleteGroupsResponseGroup, len(r.Groups))
	var calls []groupCall
	for i, id := range r.Groups {
		if code := group.ValidateGroupID(req.Key, id); code != 0 {
			h.log.Info("delete groups: invalid group id", "client", req.ClientID, "group_bytes", len(id))
			resp.Groups[i] = group.DeleteError(id, code)
			continue
		}
		calls = append(calls, groupCall{group: id, op: &group.DeleteGroup{Version: r.Version},
			done: func(res kmsg.Response, code int16) {
				if d, ok := res.(*kmsg.DeleteGroupsResponse); ok && len(d.Groups) == 1 {
					resp.Groups[i] = d.Groups[0]
					return
				}
				resp.Groups[i] = group.DeleteError(id, code)
			}})
	}
	return h.callGroups(calls, groupBackstop, func() Response { return Reply(resp) })
}
