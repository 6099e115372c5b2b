package wire

// OffsetFetch (key 9), versions 1-8.
//
// v1 reads offsets from __consumer_offsets (v0, ZooKeeper storage, is not
// served). v2 a null topic array asks for every committed partition, and
// a top-level error code (KIP-88). v3 throttle time. v5 committed leader
// epoch (KIP-320). v6 flexible (KIP-482). v7 require_stable: partitions
// with a commit in flight get UNSTABLE_OFFSET_COMMIT (KIP-447). v8
// batched groups[] (KIP-709), each routed to its own coordinator. v9
// (KIP-848) and v10 (topic ids) are not served.
//
// A partition without a commit answers offset -1, leader epoch -1 and
// metadata "" (never null: docs/clients.md rule 8). In v0-1, which have no
// top-level error, a group error is put on every requested partition.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/group"
)

func (h *BrokerHandler) handleOffsetFetch(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.OffsetFetchRequest)
	groups := group.OffsetFetchGroups(r)
	answers := make([]kmsg.OffsetFetchResponseGroup, len(groups))
	stable := group.RequireStable(r)
	var calls []groupCall
	for i, g := range groups {
		if code := group.ValidateGroupID(req.Key, g.Group); code != 0 {
			h.log.Info("offset fetch refused", "client", req.ClientID, "reason", "invalid group id", "group_bytes", len(g.Group))
			answers[i] = group.OffsetFetchError(g.Group, code)
			continue
		}
		calls = append(calls, groupCall{
			group: g.Group, op: &group.FetchOffsets{Topics: g.Topics, RequireStable: stable},
			done: func(resp kmsg.Response, code int16) {
				if f, ok := resp.(*kmsg.OffsetFetchResponse); ok && len(f.Groups) == 1 {
					answers[i] = f.Groups[0]
					return
				}
				answers[i] = group.OffsetFetchError(g.Group, code)
			},
		})
	}
	return h.callGroups(calls, groupBackstop, func() Response { return Reply(group.OffsetFetchResponse(r, answers)) })
}
