package wire

// SyncGroup (key 14), versions 0-5.
//
// v1 throttle time. v3 group_instance_id (KIP-345). v4 flexible
// (KIP-482). v5 protocol_type and protocol_name, checked against the
// group's (INCONSISTENT_GROUP_PROTOCOL) and echoed (KIP-559).
//
// A follower's sync is parked until the leader's assignment is written to
// __consumer_offsets; the leader's is answered once that write is
// durable. The assignments are copied out of the frame first
// (detach.go).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/group"
)

func (h *BrokerHandler) handleSyncGroup(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.SyncGroupRequest)
	detachSyncGroup(req, r)
	return h.callGroup(req, r.Group, &group.SyncGroup{Req: r}, rebalanceBackstop)
}
