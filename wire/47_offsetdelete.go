package wire

// OffsetDelete (key 47), version 0 (KIP-496).
//
// Deletes committed offsets of an Empty group, or of the topics no member
// of a consumer group subscribes to (GROUP_SUBSCRIBED_TO_TOPIC for the
// others); any other group gets NON_EMPTY_GROUP. Partitions missing from
// the metadata image get UNKNOWN_TOPIC_OR_PARTITION. The answer waits for
// the tombstones' write. v1 (KIP-848) is not served.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/group"
)

func (h *BrokerHandler) handleOffsetDelete(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.OffsetDeleteRequest)
	errs := partitionErrors(h.broker.Image(), func(yield func(string, int32) bool) {
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if !yield(t.Topic, p.Partition) {
					return
				}
			}
		}
	})
	return h.callGroup(req, r.Group, &group.OffsetDelete{Req: r, PartitionErrors: errs}, groupBackstop)
}
