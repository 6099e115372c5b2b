package metadata

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AlterPartitionRequest carries a partition leader's ISR changes (Kafka's
// AlterPartition): the changes of every partition the broker leads,
// batched. Each change is decided as ChangeISR decides it, against the
// controller's image plus the changes before it in the request.
type AlterPartitionRequest struct {
	_msgpack struct{} `msgpack:",as_array"`
	// BrokerID and BrokerEpoch are the sending broker's registration;
	// every change's Leader and BrokerEpoch must be these.
	BrokerID    int32
	BrokerEpoch int64
	Changes     []ISRProposal
}

// AlterPartitionResult answers an AlterPartitionRequest: one item per
// change, in request order.
type AlterPartitionResult struct {
	_msgpack   struct{} `msgpack:",as_array"`
	Partitions []AlterPartitionItem
}

// AlterPartitionItem is the outcome of one change: without Error, the
// partition's state once the change applied (as Kafka's AlterPartition
// response gives it; the state as it was if the ISR already was the
// proposed one). The codes, as Kafka's controller answers AlterPartition:
//
//   - STALE_BROKER_EPOCH: the request's broker is not registered with
//     that epoch (every change);
//   - INVALID_REQUEST: the change names another leader or broker epoch
//     than the request, or an ISR that is not distinct replicas holding
//     the leader;
//   - UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION: no such topic id, or
//     no such partition of it;
//   - NOT_LEADER_OR_FOLLOWER (kerr.NotLeaderForPartition, code 6): the
//     broker does not lead the partition;
//   - FENCED_LEADER_EPOCH: another leader epoch than the partition's;
//   - INVALID_UPDATE_VERSION: a stale partition epoch (the partition
//     changed since, maybe by an earlier change of the same request);
//   - INELIGIBLE_REPLICA: a joining member is fenced or not registered;
//   - REQUEST_TIMED_OUT (retriable): not decided: past the bounds of one
//     operation (OpBudget), or the batch did not apply; propose again.
type AlterPartitionItem struct {
	_msgpack       struct{} `msgpack:",as_array"`
	TopicID        UUID
	Partition      int32
	Error          APIError
	LeaderEpoch    int32
	PartitionEpoch int32
	ISR            []int32
}

func (*AlterPartitionRequest) kind() requestKind { return kindAlterPartition }
func (*AlterPartitionResult) kind() requestKind  { return kindAlterPartition }

// Refused implements Request.
func (r *AlterPartitionRequest) Refused(e APIError) Result {
	out := &AlterPartitionResult{Partitions: make([]AlterPartitionItem, len(r.Changes))}
	for i, ch := range r.Changes {
		out.Partitions[i] = AlterPartitionItem{TopicID: ch.TopicID, Partition: ch.Partition, Error: e}
	}
	return out
}

// Fail implements Result: a failed item loses the state of a changed one.
func (r *AlterPartitionResult) Fail(e APIError) {
	for i, it := range r.Partitions {
		if !it.Error.Failed() {
			r.Partitions[i] = AlterPartitionItem{TopicID: it.TopicID, Partition: it.Partition, Error: e}
		}
	}
}

// alterPartition decides an AlterPartitionRequest (see AlterPartitionItem
// for the codes), with the ELR rules for the controller's
// min.insync.replicas default.
func (c *Controller) alterPartition(img *Image, r *AlterPartitionRequest) (*AlterPartitionResult, []Record) {
	if _, err := img.currentBroker(r.BrokerID, r.BrokerEpoch); err != nil {
		return r.Refused(errorIn(kmsg.AlterPartition, err)).(*AlterPartitionResult), nil
	}
	res := &AlterPartitionResult{Partitions: make([]AlterPartitionItem, len(r.Changes))}
	b := NewBuilder(img)
	off := max(img.Offset(), 0)
	var recs []Record
	var budget OpBudget
	full := false
	for i, ch := range r.Changes {
		item := &res.Partitions[i]
		item.TopicID, item.Partition = ch.TopicID, ch.Partition
		if full {
			item.Error = notDecided()
			continue
		}
		if ch.Leader != r.BrokerID || ch.BrokerEpoch != r.BrokerEpoch {
			item.Error = apiErr(kerr.InvalidRequest, "The change of partition %d of %s names leader %d at broker epoch %d, the request broker %d at broker epoch %d.",
				ch.Partition, ch.TopicID, ch.Leader, ch.BrokerEpoch, r.BrokerID, r.BrokerEpoch)
			continue
		}
		// b.img is the image plus the changes before this one.
		rs, err := changeISR(&b.img, ch, c.minISRDefault())
		if err == nil && !budget.Add(rs) {
			full = true
			item.Error = notDecided()
			continue
		}
		for _, rec := range rs {
			if err == nil {
				err = b.Apply(rec, off)
			}
		}
		if err != nil {
			item.Error = errorIn(kmsg.AlterPartition, err)
			continue
		}
		recs = append(recs, rs...)
		p, _ := b.img.Partition(ch.TopicID, ch.Partition)
		item.LeaderEpoch, item.PartitionEpoch, item.ISR = p.LeaderEpoch, p.PartitionEpoch, slices.Clone(p.ISR)
	}
	return res, recs
}
