package wire

// JoinGroup (key 11), versions 0-9.
//
// v0 has no rebalance timeout (the session timeout stands in). v1
// rebalance_timeout_ms (KIP-62). v2 throttle time. v4 MEMBER_ID_REQUIRED
// on a first join without member id (KIP-394); v0-3 get their id at
// once. v5 group_instance_id, static membership and FENCED_INSTANCE_ID
// (KIP-345). v6 flexible (KIP-482). v7 protocol_type in the response
// (KIP-559). v8 reason (KIP-800). v9 skip_assignment (KIP-814; the
// coordinator never sets it).
//
// The request is sent to the group's actor in Handle and the answer
// waited for in the Defer: a join is parked until the rebalance completes
// (every member rejoined, the rebalance timeout, or
// group.initial.rebalance.delay.ms for a new group). The protocol
// metadata is copied out of the frame first (detach.go), so a parked join
// holds it once.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/group"
)

func (h *BrokerHandler) handleJoinGroup(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.JoinGroupRequest)
	detachJoinGroup(req, r)
	op := &group.JoinGroup{Req: r, ClientID: req.ClientID, ClientHost: clientHost(req.Conn)}
	return h.callGroup(req, r.Group, op, rebalanceBackstop)
}
