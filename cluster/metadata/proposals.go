package metadata

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
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
// node id) is the controller's job, not this function's. reg's
// RegisteredAt is replaced by 0: the registration is the new record.
func RegisterBrokerRecords(img *Image, reg BrokerRegistrationRecord) ([]Record, int64, error) {
	reg.BrokerEpoch = max(img.offset+1, 0)
	reg.RegisteredAt = 0
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
	_msgpack  struct{} `msgpack:",as_array"`
	TopicID   UUID     // the partition's topic
	Partition int32    // the partition index
	// Candidate is the node that proposes itself.
	Candidate int32
	// BrokerEpoch is the epoch of the candidate's registration.
	BrokerEpoch int64
	// PartitionEpoch is the epoch of the leaderless partition it saw.
	PartitionEpoch int32
	// Unclean asks for an unclean election: the candidate may be a
	// replica outside the ISR (see ElectLeader). A candidate in the ISR is
	// elected cleanly whatever Unclean says. The field was appended: an
	// encoding without it decodes with Unclean false.
	Unclean bool
}

// leaderProposalFields is the number of LeaderProposal's encoded fields,
// and leaderProposalFieldsV0 the number before Unclean was appended.
const (
	leaderProposalFields   = 6
	leaderProposalFieldsV0 = 5
)

// DecodeMsgpack implements msgpack.CustomDecoder: the array of fields as
// as_array writes it, with or without the trailing Unclean.
func (p *LeaderProposal) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := d.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n == -1 {
		*p = LeaderProposal{}
		return nil
	}
	if n != leaderProposalFields && n != leaderProposalFieldsV0 {
		return fmt.Errorf("metadata: LeaderProposal of %d fields, want %d or %d", n, leaderProposalFieldsV0, leaderProposalFields)
	}
	var q LeaderProposal
	if err := d.Decode(&q.TopicID); err != nil {
		return err
	}
	if q.Partition, err = d.DecodeInt32(); err != nil {
		return err
	}
	if q.Candidate, err = d.DecodeInt32(); err != nil {
		return err
	}
	if q.BrokerEpoch, err = d.DecodeInt64(); err != nil {
		return err
	}
	if q.PartitionEpoch, err = d.DecodeInt32(); err != nil {
		return err
	}
	if n == leaderProposalFields {
		if q.Unclean, err = d.DecodeBool(); err != nil {
			return err
		}
	}
	*p = q
	return nil
}

// ElectLeader returns the record that makes the candidate leader, if the
// proposal still holds in img: the partition epoch is current
// (ErrStalePartitionEpoch), the partition has no leader (ErrLeaderExists),
// the candidate's registration is current (ErrUnknownBroker,
// ErrStaleBrokerEpoch) and unfenced, and it is in the ISR
// (ErrIneligibleReplica). The first valid proposal wins; the later ones
// then fail as stale.
//
// An Unclean proposal of a candidate outside the ISR is an unclean
// election: allowed only when the topic's unclean.leader.election.enable
// override is true (the controller also takes its broker default; see
// ElectLeadersRequest) and no ISR member is an unfenced registered broker;
// the candidate must be an unfenced replica, and the record makes it
// leader with the ISR [candidate]. Otherwise ErrIneligibleReplica.
func ElectLeader(img *Image, prop LeaderProposal) (Record, error) {
	return electLeader(img, prop, false)
}

// electLeader is ElectLeader with uncleanDefault as the value of
// unclean.leader.election.enable for a topic without an override.
func electLeader(img *Image, prop LeaderProposal, uncleanDefault bool) (Record, error) {
	p, err := img.proposalPartition(prop.TopicID, prop.Partition)
	if err != nil {
		return nil, fmt.Errorf("elect %d: %w", prop.Candidate, err)
	}
	unclean := prop.Unclean && !p.InISR(prop.Candidate)
	if err := checkEligible(img, p, prop, unclean, uncleanDefault); err != nil {
		return nil, fmt.Errorf("elect %d for partition %d of %s: %w", prop.Candidate, prop.Partition, prop.TopicID, err)
	}
	rec := PartitionChangeRecord{TopicID: prop.TopicID, Partition: prop.Partition, Leader: prop.Candidate}
	if unclean {
		rec.ISR = []int32{prop.Candidate}
	}
	return rec, nil
}

func checkEligible(img *Image, p Partition, prop LeaderProposal, unclean, uncleanDefault bool) error {
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
	if !unclean {
		if !p.InISR(prop.Candidate) {
			return fmt.Errorf("%w: node %d is not in the ISR %v", ErrIneligibleReplica, prop.Candidate, p.ISR)
		}
		return nil
	}
	return checkUnclean(img, p, prop.Candidate, uncleanDefault)
}

// checkUnclean checks that candidate, an unfenced broker outside p's ISR,
// may win an unclean election.
func checkUnclean(img *Image, p Partition, candidate int32, uncleanDefault bool) error {
	t, _ := img.TopicByID(p.TopicID)
	if !uncleanEnabled(img, t.Name(), uncleanDefault) {
		return fmt.Errorf("%w: node %d is not in the ISR %v and unclean.leader.election.enable is false for topic %q",
			ErrIneligibleReplica, candidate, p.ISR, t.Name())
	}
	if !p.IsReplica(candidate) {
		return fmt.Errorf("%w: node %d is not a replica %v", ErrIneligibleReplica, candidate, p.Replicas)
	}
	for _, r := range p.ISR {
		if br, ok := img.brokers.get(r); ok && !br.Fenced {
			return fmt.Errorf("%w: ISR member %d is unfenced: no unclean election", ErrIneligibleReplica, r)
		}
	}
	return nil
}

// uncleanEnabled is topic's unclean.leader.election.enable: its override,
// else def.
func uncleanEnabled(img *Image, topic string, def bool) bool {
	v, ok := img.ConfigValue(TopicResource(topic), "unclean.leader.election.enable")
	if !ok {
		return def
	}
	return strings.EqualFold(strings.TrimSpace(v), "true")
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
