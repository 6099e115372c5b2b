package metadata

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// MoveLeadersRequest hands leaderships a broker holds to the successors
// its partition leaders chose (each an in-sync follower holding the
// leader's whole log, writes stopped): a controlled shutdown
// (docs/DESIGN.md "Controlled shutdown"), which with LeaveISR also leaves
// the ISR of the partitions it follows, or a rebalance to the preferred
// replicas ("Preferred leaders"), in which, with KeepISR, the broker stays
// in the ISR of the partitions it hands over (it holds their whole log).
// Each move and each departure is decided in order against the image plus
// the records before it.
type MoveLeadersRequest struct {
	_msgpack    struct{} `msgpack:",as_array"`
	BrokerID    int32
	BrokerEpoch int64
	Moves       []LeaderMove
	LeaveISR    bool
	KeepISR     bool
}

// LeaderMove is one partition's planned move, made against the epochs its
// leader held when it chose the successor.
type LeaderMove struct {
	_msgpack       struct{} `msgpack:",as_array"`
	TopicID        UUID
	Partition      int32
	LeaderEpoch    int32
	PartitionEpoch int32
	To             int32
}

// MoveLeadersResult answers a MoveLeadersRequest: one error per move, in
// order: none (To leads once the batch applied, and the broker left the
// ISR), FENCED_LEADER_EPOCH or INVALID_UPDATE_VERSION (the partition
// changed since the choice), NOT_LEADER_OR_FOLLOWER (the broker does not
// lead it), INELIGIBLE_REPLICA (To is fenced or outside the ISR),
// STALE_BROKER_EPOCH, UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION, or
// REQUEST_TIMED_OUT (past one operation's bounds: send again). LeftISR
// counts the partitions whose ISR the broker left.
type MoveLeadersResult struct {
	_msgpack struct{} `msgpack:",as_array"`
	Errors   []APIError
	LeftISR  int32
}

func (*MoveLeadersRequest) kind() requestKind { return kindMoveLeaders }
func (*MoveLeadersResult) kind() requestKind  { return kindMoveLeaders }

// Refused implements Request.
func (r *MoveLeadersRequest) Refused(e APIError) Result {
	out := &MoveLeadersResult{Errors: make([]APIError, len(r.Moves))}
	for i := range out.Errors {
		out.Errors[i] = e
	}
	return out
}

// Fail implements Result.
func (r *MoveLeadersResult) Fail(e APIError) {
	for i := range r.Errors {
		if !r.Errors[i].Failed() {
			r.Errors[i] = e
		}
	}
	r.LeftISR = 0
}

// moveError is a move's Kafka error: AlterPartition's codes, as a planned
// move changes a partition's leader and ISR as AlterPartition does.
func moveError(err error) APIError { return errorIn(kmsg.AlterPartition, err) }

// moveLeaders decides a MoveLeadersRequest.
func (c *Controller) moveLeaders(img *Image, r *MoveLeadersRequest) (*MoveLeadersResult, []Record) {
	res := &MoveLeadersResult{Errors: make([]APIError, len(r.Moves))}
	if _, err := img.currentBroker(r.BrokerID, r.BrokerEpoch); err != nil {
		return r.Refused(moveError(err)).(*MoveLeadersResult), nil
	}
	b := NewBuilder(img)
	off := max(img.Offset(), 0)
	var recs []Record
	var budget OpBudget
	full := false
	minISR := c.minISRDefault()
	for i, m := range r.Moves {
		if full {
			res.Errors[i] = notDecided()
			continue
		}
		rec, err := moveRecord(&b.img, r.BrokerID, m, minISR, r.KeepISR)
		if err == nil && !budget.Add([]Record{rec}) {
			full = true
			res.Errors[i] = notDecided()
			continue
		}
		if err == nil {
			err = b.Apply(rec, off)
		}
		if err != nil {
			res.Errors[i] = moveError(err)
			continue
		}
		recs = append(recs, rec)
	}
	if r.LeaveISR && !full {
		for _, t := range b.img.Topics() {
			for i := range t.NumPartitions() {
				p, _ := t.Partition(i)
				if p.Leader == r.BrokerID || !p.InISR(r.BrokerID) || len(p.ISR) < 2 {
					continue
				}
				rec, _ := changeTo(p, LeaderNoChange,
					slices.DeleteFunc(slices.Clone(p.ISR), func(id int32) bool { return id == r.BrokerID }),
					minInSync(&b.img, t.Name(), minISR), -1)
				if !budget.Add([]Record{rec}) {
					return res, recs // the next request takes the rest
				}
				if err := b.Apply(rec, off); err != nil {
					continue
				}
				recs = append(recs, rec)
				res.LeftISR++
			}
		}
	}
	return res, recs
}

// moveRecord returns the record that makes m.To leader in place of from,
// if the move still holds in img. Unless keepISR, from leaves the ISR (to
// join the ELR if that leaves the ISR below min.insync.replicas: it shut
// down cleanly, with every committed record). minISR is
// min.insync.replicas for a topic without an override.
func moveRecord(img *Image, from int32, m LeaderMove, minISR int, keepISR bool) (Record, error) {
	p, err := img.proposalPartition(m.TopicID, m.Partition)
	if err != nil {
		return nil, err
	}
	switch {
	case p.Leader != from:
		return nil, fmt.Errorf("%w: node %d does not lead partition %d of %s", ErrNotLeader, from, m.Partition, m.TopicID)
	case p.LeaderEpoch != m.LeaderEpoch:
		return nil, fmt.Errorf("%w: leader epoch %d, the move was made at %d", ErrFencedLeaderEpoch, p.LeaderEpoch, m.LeaderEpoch)
	case p.PartitionEpoch != m.PartitionEpoch:
		return nil, fmt.Errorf("%w: partition epoch %d, the move was made at %d", ErrStalePartitionEpoch, p.PartitionEpoch, m.PartitionEpoch)
	case m.To == from || !p.InISR(m.To):
		return nil, fmt.Errorf("%w: node %d is not an in-sync follower", ErrIneligibleReplica, m.To)
	}
	if br, ok := img.Broker(m.To); !ok || br.Fenced {
		return nil, fmt.Errorf("%w: node %d is fenced or not registered", ErrIneligibleReplica, m.To)
	}
	isr := p.ISR
	if !keepISR {
		isr = slices.DeleteFunc(slices.Clone(p.ISR), func(id int32) bool { return id == from })
	}
	rec, _ := changeTo(p, m.To, isr, partitionMinISR(img, p, minISR), -1)
	return rec, nil
}
