package wire

// OffsetForLeaderEpoch (key 23), versions 3-4.
//
// v0-1 (KIP-101, KIP-279) are not served: clients that detect truncation
// (KIP-320: Java, kgo, librdkafka >= 2.1) send v3+, and Java skips the
// check when the broker's max is below 3. v2 current_leader_epoch
// (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH, -1 means no check). v3
// replica_id (KIP-392; consumers send -1; not acted on). v4 flexible
// (KIP-482).
//
// The answer is the largest epoch <= the one asked for that the leader's
// log holds and the offset where it ends (the log end offset for the
// latest epoch), or -1 and -1 when the log knows no such epoch. It reads
// the log's epoch cache (safe for concurrent use) in the Defer goroutine.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleOffsetForLeaderEpoch serves OffsetForLeaderEpoch v3-4.
func (h *BrokerHandler) handleOffsetForLeaderEpoch(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.OffsetForLeaderEpochRequest)
	return Defer(func(ctx context.Context) Response {
		resp := r.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
		img := h.broker.Image()
		for _, t := range r.Topics {
			rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
				rp.Partition, rp.LeaderEpoch, rp.EndOffset = p.Partition, -1, -1
				c, _, code := h.localReplica(img, t.Topic, p.Partition)
				if code == 0 {
					res := c.EndOffsetForEpoch(p.LeaderEpoch, p.CurrentLeaderEpoch)
					code = res.ErrorCode
					if code == 0 {
						rp.LeaderEpoch, rp.EndOffset = res.LeaderEpoch, res.EndOffset
					}
				}
				rp.ErrorCode = code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return Reply(resp)
	})
}
