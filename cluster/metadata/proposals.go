package metadata

import (
	"fmt"
	"slices"
)

// RegisterBrokerRecords returns the records that register reg, a new
// process of node reg.NodeID, and the broker epoch they give it (any
// reg.BrokerEpoch is replaced). The epoch is above both the node's current
// epoch and img's offset, so epochs grow across unregistrations too. If the
// node's previous registration is unfenced, the records first fence it as
// FenceBrokerRecords does: a new registration fences the old one. The new
// registration starts fenced; unfence it with a BrokerUnfencedRecord once
// the broker has caught up.
//
// Deciding whether a registration may replace a live one (a duplicate
// node id) is the controller's job, not this function's.
func RegisterBrokerRecords(img *Image, reg BrokerRegistrationRecord) ([]Record, int64, error) {
	reg.BrokerEpoch = max(img.offset+1, 0)
	var recs []Record
	if old, ok := img.brokers.get(reg.NodeID); ok {
		reg.BrokerEpoch = max(reg.BrokerEpoch, old.Epoch+1)
		recs = img.fenceRecords(old)
	}
	if err := validateRegistration(reg); err != nil {
		return nil, 0, fmt.Errorf("register node %d: %w", reg.NodeID, err)
	}
	return append(recs, reg), reg.BrokerEpoch, nil
}

// FenceBrokerRecords returns the batch that fences node's registration of
// epoch: a BrokerFencedRecord, then for every partition the node leads or
// is in the ISR of, a PartitionChangeRecord that removes it from the ISR
// (unless it is the last member, which stays, as in Kafka) and, where it
// led, leaves the partition leaderless for an election. Propose the batch
// as one entry. A fenced broker gives no records.
func FenceBrokerRecords(img *Image, node int32, epoch int64) ([]Record, error) {
	br, err := img.currentBroker(node, epoch)
	if err != nil {
		return nil, fmt.Errorf("fence node %d: %w", node, err)
	}
	return img.fenceRecords(br), nil
}

func (img *Image) fenceRecords(br Broker) []Record {
	if br.Fenced {
		return nil
	}
	recs := []Record{BrokerFencedRecord{NodeID: br.NodeID, BrokerEpoch: br.Epoch}}
	for _, t := range img.Topics() {
		for p := range t.partitions.all() {
			if change, ok := withoutBroker(p, br.NodeID); ok {
				recs = append(recs, change)
			}
		}
	}
	return recs
}

// withoutBroker returns the change that takes node out of p's leadership
// and ISR, if there is anything to change.
func withoutBroker(p *Partition, node int32) (PartitionChangeRecord, bool) {
	change := PartitionChangeRecord{TopicID: p.TopicID, Partition: p.Index, Leader: LeaderNoChange}
	if p.Leader == node {
		change.Leader = NoLeader
	}
	if len(p.ISR) > 1 && slices.Contains(p.ISR, node) {
		change.ISR = slices.DeleteFunc(slices.Clone(p.ISR), func(r int32) bool { return r == node })
	}
	return change, change.Leader != LeaderNoChange || change.ISR != nil
}

// LeaderProposal is a replica's proposal to lead a leaderless partition,
// made against the partition epoch it saw.
type LeaderProposal struct {
	TopicID   UUID  // the partition's topic
	Partition int32 // the partition index
	// Candidate is the node that proposes itself.
	Candidate int32
	// BrokerEpoch is the epoch of the candidate's registration.
	BrokerEpoch int64
	// PartitionEpoch is the epoch of the leaderless partition it saw.
	PartitionEpoch int32
}

// ElectLeader returns the record that makes the candidate leader, if the
// proposal still holds in img: the partition epoch is current
// (ErrStalePartitionEpoch), the partition has no leader (ErrLeaderExists),
// the candidate's registration is current (ErrUnknownBroker,
// ErrStaleBrokerEpoch) and unfenced, and it is in the ISR
// (ErrIneligibleReplica). The first valid proposal wins; the later ones
// then fail as stale. Unclean election is not handled here.
func ElectLeader(img *Image, prop LeaderProposal) (Record, error) {
	p, err := img.proposalPartition(prop.TopicID, prop.Partition)
	if err != nil {
		return nil, fmt.Errorf("elect %d: %w", prop.Candidate, err)
	}
	if err := checkEligible(img, p, prop); err != nil {
		return nil, fmt.Errorf("elect %d for partition %d of %s: %w", prop.Candidate, prop.Partition, prop.TopicID, err)
	}
	return PartitionChangeRecord{TopicID: prop.TopicID, Partition: prop.Partition, Leader: prop.Candidate}, nil
}

func checkEligible(img *Image, p Partition, prop LeaderProposal) error {
	if prop.PartitionEpoch != p.PartitionEpoch {
		return fmt.Errorf("%w: proposed at epoch %d, current %d", ErrStalePartitionEpoch, prop.PartitionEpoch, p.PartitionEpoch)
	}
	if p.HasLeader() {
		return fmt.Errorf("%w: node %d leads", ErrLeaderExists, p.Leader)
	}
	br, err := img.currentBroker(prop.Candidate, prop.BrokerEpoch)
	if err != nil {
		return err
	}
	if br.Fenced {
		return fmt.Errorf("%w: %w: node %d", ErrIneligibleReplica, ErrBrokerFenced, br.NodeID)
	}
	if !p.InISR(prop.Candidate) {
		return fmt.Errorf("%w: node %d is not in the ISR %v", ErrIneligibleReplica, prop.Candidate, p.ISR)
	}
	return nil
}

// proposalPartition returns the partition a proposal is about.
func (img *Image) proposalPartition(id UUID, partition int32) (Partition, error) {
	t, err := img.topicForPartition(id, partition)
	if err != nil {
		return Partition{}, err
	}
	p, ok := t.Partition(partition)
	if !ok {
		return Partition{}, fmt.Errorf("%w: partition %d of topic %q", ErrUnknownPartition, partition, t.name)
	}
	return p, nil
}
