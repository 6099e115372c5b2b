package wire

// LeaveGroup (key 13), versions 0-5.
//
// v1 throttle time. v3 batched members[] with group_instance_id, each
// answered in the response (KIP-345). v4 flexible (KIP-482). v5 reason
// (KIP-800).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/group"
)

func (h *BrokerHandler) handleLeaveGroup(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.LeaveGroupRequest)
	return h.callGroup(req, r.Group, &group.LeaveGroup{Req: r}, groupBackstop)
}
