package wire

// ListOffsets (key 2), versions 1-7.
//
// v1 one offset per partition with its timestamp (KIP-79; v0's
// max_num_offsets and old-style offsets are not served). v2
// isolation_level (KIP-98; without transactions both levels see up to the
// high watermark). v3 same as v2. v4 current_leader_epoch
// (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH, -1 means no check) and the
// leader epoch of the answer (KIP-320). v5 same as v4. v6 flexible
// (KIP-482). v7 max timestamp, -3 (KIP-734). -2 is the log start offset,
// -1 the high watermark; a timestamp finds the first offset at or after
// it below the high watermark, or -1 when none.
//
// The lookups read the log (safe for concurrent use) and the partition
// actor's published status, in the Defer goroutine.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/partition"
)

// handleListOffsets serves ListOffsets v1-7.
func (h *BrokerHandler) handleListOffsets(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.ListOffsetsRequest)
	return Defer(func(ctx context.Context) Response {
		resp := r.ResponseKind().(*kmsg.ListOffsetsResponse)
		img := h.broker.Image()
		for _, t := range r.Topics {
			rt := kmsg.NewListOffsetsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewListOffsetsResponseTopicPartition()
				rp.Partition = p.Partition
				rp.Timestamp, rp.Offset, rp.LeaderEpoch = -1, -1, -1
				c, _, code := h.localReplica(img, t.Topic, p.Partition)
				if code == 0 {
					epoch := partition.NoLeaderEpochCheck
					if r.Version >= 4 {
						epoch = p.CurrentLeaderEpoch
					}
					res := c.ListOffset(p.Timestamp, epoch)
					code = res.ErrorCode
					if code == 0 {
						rp.Timestamp, rp.Offset, rp.LeaderEpoch = res.Timestamp, res.Offset, res.LeaderEpoch
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
