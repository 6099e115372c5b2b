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
// Handle asks each partition actor for its status behind whatever this
// connection sent it before (SyncStatus), as Kafka serves one connection's
// requests one after another: a ListOffsets right after an acks=0 produce
// on the same connection sees that produce. The Defer then reads the log
// (safe for concurrent use) with those statuses.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/partition"
)

// listOffsetsWait bounds the wait for the actors' statuses; they always
// answer, so it fires only on a bug.
const listOffsetsWait = 30 * time.Second

// listOffsetsSlot is one partition's lookup, waiting for its status.
type listOffsetsSlot struct {
	rp    *kmsg.ListOffsetsResponseTopicPartition
	c     *partition.Client
	ts    int64
	epoch int32
}

// handleListOffsets serves ListOffsets v1-7.
func (h *BrokerHandler) handleListOffsets(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.ListOffsetsRequest)
	resp := r.ResponseKind().(*kmsg.ListOffsetsResponse)
	img := h.broker.Image()
	var inbox *partition.Inbox
	slots := map[uint64]listOffsetsSlot{}
	resp.Topics = make([]kmsg.ListOffsetsResponseTopic, len(r.Topics))
	for ti, t := range r.Topics {
		rt := &resp.Topics[ti]
		rt.Default()
		rt.Topic = t.Topic
		rt.Partitions = make([]kmsg.ListOffsetsResponseTopicPartition, len(t.Partitions))
		for pi, p := range t.Partitions {
			rp := &rt.Partitions[pi]
			rp.Default()
			rp.Partition = p.Partition
			rp.Timestamp, rp.Offset, rp.LeaderEpoch = -1, -1, -1
			c, _, code := h.localReplica(img, t.Topic, p.Partition)
			if code != 0 {
				rp.ErrorCode = code
				continue
			}
			epoch := partition.NoLeaderEpochCheck
			if r.Version >= 4 {
				epoch = p.CurrentLeaderEpoch
			}
			if inbox == nil {
				inbox = partition.NewInbox(h.cfg.System)
			}
			id := inbox.NextID()
			slots[id] = listOffsetsSlot{rp: rp, c: c, ts: p.Timestamp, epoch: epoch}
			c.SendSyncStatus(&partition.SyncStatus{ID: id}, inbox.PID())
		}
	}
	if inbox == nil {
		return Reply(resp)
	}
	return Defer(func(ctx context.Context) Response {
		defer inbox.Close()
		awaitAnswers(ctx, inbox, listOffsetsWait, slots,
			func(m any) (uint64, bool) {
				r, ok := m.(*partition.StatusSynced)
				if !ok {
					return 0, false
				}
				return r.ID, true
			},
			func(s listOffsetsSlot, m any) {
				res := s.c.ListOffsetAt(m.(*partition.StatusSynced).Status, s.ts, s.epoch)
				s.rp.ErrorCode = res.ErrorCode
				if res.ErrorCode == 0 {
					s.rp.Timestamp, s.rp.Offset, s.rp.LeaderEpoch = res.Timestamp, res.Offset, res.LeaderEpoch
				}
			},
			func(s listOffsetsSlot, code int16) { s.rp.ErrorCode = code })
		return Reply(resp)
	})
}
