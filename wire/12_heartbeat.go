package wire

// Heartbeat (key 12), versions 0-4.
//
// v1 throttle time. v3 group_instance_id (KIP-345). v4 flexible
// (KIP-482). Errors clients act on: REBALANCE_IN_PROGRESS (rejoin),
// ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID (fatal); a
// heartbeat while the coordinator loads gets no error, as in Kafka.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/group"
)

func (h *BrokerHandler) handleHeartbeat(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.HeartbeatRequest)
	return h.callGroup(req, r.Group, &group.Heartbeat{Req: r}, groupBackstop)
}
