package wire

// DeleteRecords (key 21), versions 0-2.
//
// v0 (KIP-107) moves each partition's log start offset up to the offset
// given: -1 means the high watermark, an offset past the high watermark
// (or negative) is OFFSET_OUT_OF_RANGE, one at or below the log start
// offset changes nothing; the answer is the new low watermark (the log
// start offset). v1 same as v0. v2 flexible (KIP-482). timeout_ms would
// bound the wait for followers' log start offsets; a single replica
// answers at once.
//
// Handle sends one DeleteRecords to each partition actor (it owns the log's
// start); the Defer collects the answers.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/partition"
)

// deleteRecordsBackstop bounds the wait for the actors beyond the
// request's timeout; they always answer, so it fires only on a bug.
const deleteRecordsBackstop = 30 * time.Second

// handleDeleteRecords serves DeleteRecords v0-2.
func (h *BrokerHandler) handleDeleteRecords(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.DeleteRecordsRequest)
	resp := r.ResponseKind().(*kmsg.DeleteRecordsResponse)
	img := h.broker.Image()
	inbox := partition.NewInbox(h.cfg.System)
	slots := map[uint64]*kmsg.DeleteRecordsResponseTopicPartition{}
	resp.Topics = make([]kmsg.DeleteRecordsResponseTopic, len(r.Topics))
	for ti, t := range r.Topics {
		rt := &resp.Topics[ti]
		rt.Default()
		rt.Topic = t.Topic
		rt.Partitions = make([]kmsg.DeleteRecordsResponseTopicPartition, len(t.Partitions))
		for pi, p := range t.Partitions {
			rp := &rt.Partitions[pi]
			rp.Default()
			rp.Partition, rp.LowWatermark = p.Partition, -1
			c, _, code := h.localReplica(img, t.Topic, p.Partition)
			if code != 0 {
				rp.ErrorCode = code
				continue
			}
			id := inbox.NextID()
			slots[id] = rp
			c.SendDeleteRecords(&partition.DeleteRecords{ID: id, Offset: p.Offset}, inbox.PID())
		}
	}
	return Defer(func(ctx context.Context) Response {
		defer inbox.Close()
		awaitAnswers(ctx, inbox, deleteRecordsBackstop, slots,
			func(m any) (uint64, bool) {
				r, ok := m.(*partition.DeleteRecordsResult)
				if !ok {
					return 0, false
				}
				return r.ID, true
			},
			func(rp *kmsg.DeleteRecordsResponseTopicPartition, m any) {
				r := m.(*partition.DeleteRecordsResult)
				rp.ErrorCode, rp.LowWatermark = r.ErrorCode, r.LowWatermark
			},
			func(rp *kmsg.DeleteRecordsResponseTopicPartition, code int16) { rp.ErrorCode = code })
		return Reply(resp)
	})
}
