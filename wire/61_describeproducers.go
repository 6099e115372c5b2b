package wire

// DescribeProducers (key 61), version 0 (KIP-664).
//
// Lists the active producers of each partition from its leader's producer
// state: producer id and epoch, the last sequence of the latest retained
// batch (-1 if none), its last timestamp, the coordinator epoch (-1 without
// transaction markers) and the first offset of its open transaction (-1 if
// none). Handle asks each partition actor for a snapshot; the Defer
// collects them.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/partition"
)

// describeProducersWait bounds the wait for the actors; they always
// answer, so it fires only on a bug.
const describeProducersWait = 30 * time.Second

// handleDescribeProducers serves DescribeProducers v0.
func (h *BrokerHandler) handleDescribeProducers(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.DescribeProducersRequest)
	resp := r.ResponseKind().(*kmsg.DescribeProducersResponse)
	img := h.broker.Image()
	inbox := partition.NewInbox(h.cfg.System)
	slots := map[uint64]*kmsg.DescribeProducersResponseTopicPartition{}
	resp.Topics = make([]kmsg.DescribeProducersResponseTopic, len(r.Topics))
	for ti, t := range r.Topics {
		rt := &resp.Topics[ti]
		rt.Default()
		rt.Topic = t.Topic
		rt.Partitions = make([]kmsg.DescribeProducersResponseTopicPartition, len(t.Partitions))
		for pi, idx := range t.Partitions {
			rp := &rt.Partitions[pi]
			rp.Default()
			rp.Partition = idx
			rp.ActiveProducers = []kmsg.DescribeProducersResponseTopicPartitionActiveProducer{}
			c, _, code := h.localReplica(img, t.Topic, idx)
			if code != 0 {
				rp.ErrorCode = code
				continue
			}
			id := inbox.NextID()
			slots[id] = rp
			c.SendDescribeProducers(&partition.DescribeProducers{ID: id}, inbox.PID())
		}
	}
	return Defer(func(ctx context.Context) Response {
		defer inbox.Close()
		awaitAnswers(ctx, inbox, describeProducersWait, slots,
			func(m any) (uint64, bool) {
				r, ok := m.(*partition.DescribeProducersResult)
				if !ok {
					return 0, false
				}
				return r.ID, true
			},
			func(rp *kmsg.DescribeProducersResponseTopicPartition, m any) {
				fillProducers(rp, m.(*partition.DescribeProducersResult))
			},
			func(rp *kmsg.DescribeProducersResponseTopicPartition, code int16) { rp.ErrorCode = code })
		return Reply(resp)
	})
}

// fillProducers copies one partition's producer snapshot.
func fillProducers(rp *kmsg.DescribeProducersResponseTopicPartition, m *partition.DescribeProducersResult) {
	rp.ErrorCode = m.ErrorCode
	for _, e := range m.Producers {
		ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
		ap.ProducerID, ap.ProducerEpoch = e.ProducerID, int32(e.Epoch)
		ap.LastSequence = -1
		if n := len(e.Batches); n > 0 {
			ap.LastSequence = e.Batches[n-1].LastSeq
		}
		ap.LastTimestamp, ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = e.LastTimestamp, e.CoordinatorEpoch, e.CurrentTxnFirstOffset
		rp.ActiveProducers = append(rp.ActiveProducers, ap)
	}
}
