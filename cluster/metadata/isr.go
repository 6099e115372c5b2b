package metadata

import (
	"fmt"
	"slices"
)

// ISRProposal is a partition leader's proposal to change the ISR (Kafka's
// AlterPartition), made against the epochs it holds.
type ISRProposal struct {
	_msgpack  struct{} `msgpack:",as_array"`
	TopicID   UUID     // the partition's topic
	Partition int32    // the partition index
	// Leader is the node that proposes, the partition's leader.
	Leader int32
	// BrokerEpoch is the epoch of the leader's registration.
	BrokerEpoch int64
	// LeaderEpoch is the leader epoch the leader holds.
	LeaderEpoch int32
	// PartitionEpoch is the partition epoch the leader holds.
	PartitionEpoch int32
	// ISR is the proposed ISR; it contains the leader.
	ISR []int32
}

// ChangeISR returns the record that sets the proposed ISR, or no records
// if the ISR already is the proposed one. The proposal must hold in img:
// the leader's registration is current (ErrUnknownBroker,
// ErrStaleBrokerEpoch), it leads the partition (ErrNotLeader) at the same
// leader epoch (ErrFencedLeaderEpoch) and partition epoch
// (ErrStalePartitionEpoch); the ISR holds the leader and distinct replicas
// (ErrInvalidRecord); members joining it are registered, unfenced replicas
// (ErrIneligibleReplica). The leader epoch does not change. The ELR rules
// apply (KIP-966): members a shrink below min.insync.replicas (the topic's
// override, else 1) takes out join the ELR, members joining the ISR leave
// it, and an ISR back at min.insync.replicas empties it.
func ChangeISR(img *Image, prop ISRProposal) ([]Record, error) {
	return changeISR(img, prop, defaultMinISR)
}

// changeISR is ChangeISR with minISR as min.insync.replicas for a topic
// without an override.
func changeISR(img *Image, prop ISRProposal, minISR int) ([]Record, error) {
	p, err := img.proposalPartition(prop.TopicID, prop.Partition)
	if err == nil {
		err = checkISRProposal(img, p, prop)
	}
	if err != nil {
		return nil, fmt.Errorf("change ISR of partition %d of %s to %v: %w", prop.Partition, prop.TopicID, prop.ISR, err)
	}
	if slices.Equal(p.ISR, prop.ISR) {
		return nil, nil
	}
	rec, _ := changeTo(p, LeaderNoChange, prop.ISR, partitionMinISR(img, p, minISR), -1)
	return []Record{rec}, nil
}

func checkISRProposal(img *Image, p Partition, prop ISRProposal) error {
	if _, err := img.currentBroker(prop.Leader, prop.BrokerEpoch); err != nil {
		return err
	}
	switch {
	case p.Leader != prop.Leader:
		return fmt.Errorf("%w: node %d proposed, node %d leads", ErrNotLeader, prop.Leader, p.Leader)
	case prop.LeaderEpoch != p.LeaderEpoch:
		return fmt.Errorf("%w: proposed at leader epoch %d, current %d", ErrFencedLeaderEpoch, prop.LeaderEpoch, p.LeaderEpoch)
	case prop.PartitionEpoch != p.PartitionEpoch:
		return fmt.Errorf("%w: proposed at epoch %d, current %d", ErrStalePartitionEpoch, prop.PartitionEpoch, p.PartitionEpoch)
	}
	if err := checkAssignment(p.Replicas, prop.ISR, prop.Leader); err != nil {
		return err
	}
	for _, r := range prop.ISR {
		if p.InISR(r) {
			continue
		}
		if br, ok := img.brokers.get(r); !ok || br.Fenced {
			return fmt.Errorf("%w: node %d is fenced or not registered", ErrIneligibleReplica, r)
		}
	}
	return nil
}
