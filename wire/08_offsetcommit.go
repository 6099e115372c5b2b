package wire

// OffsetCommit (key 8), versions 2-9.
//
// v2-4 carry a retention time, ignored (docs/clients.md rule 19: offsets
// expire by offsets.retention.minutes, KIP-211). v3 throttle time. v5 drops the
// retention time. v6 committed leader epoch (KIP-320). v7
// group_instance_id (KIP-345). v8 flexible (KIP-482). v9 is KIP-848's,
// served as v8 for classic groups. v10 (topic ids) is not served.
//
// Partitions missing from the metadata image get
// UNKNOWN_TOPIC_OR_PARTITION; the rest are written to __consumer_offsets
// with acks=all and acknowledged once durable under the topic's policy.
// A commit with generation -1 and no member is a "simple" commit, allowed
// while the group has no members.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/group"
)

func (h *BrokerHandler) handleOffsetCommit(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.OffsetCommitRequest)
	errs := partitionErrors(h.broker.Image(), func(yield func(string, int32) bool) {
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if !yield(t.Topic, p.Partition) {
					return
				}
			}
		}
	})
	return h.callGroup(req, r.Group, &group.OffsetCommit{Req: r, PartitionErrors: errs}, groupBackstop)
}
