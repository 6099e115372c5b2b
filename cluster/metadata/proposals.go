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
// FenceBrokerRecords does: a new registration fences the old one. The
// previous process is taken to have shut down uncleanly, so the node
// leaves every ELR (Controller.Evaluate's RegisterBrokerRequest can say
// otherwise). The new registration starts fenced; unfence it with a
// BrokerUnfencedRecord once the broker has caught up.
//
// Deciding whether a registration may replace a live one (a duplicate
// node id) is the controller's job, not this function's. reg's
// RegisteredAt is replaced by 0: the registration is the new record.
func RegisterBrokerRecords(img *Image, reg BrokerRegistrationRecord) ([]Record, int64, error) {
	return registerRecords(img, reg, false, defaultMinISR)
}

// registerRecords is RegisterBrokerRecords; clean says the previous
// process of the node shut down cleanly, so it stays in the ELRs; minISR
// is min.insync.replicas for topics without an override.
func registerRecords(img *Image, reg BrokerRegistrationRecord, clean bool, minISR int) ([]Record, int64, error) {
	reg.BrokerEpoch = max(img.offset+1, 0)
	reg.RegisteredAt = 0
	if old, ok := img.brokers.get(reg.NodeID); ok {
		reg.BrokerEpoch = max(reg.BrokerEpoch, old.Epoch+1)
	}
	if err := validateRegistration(reg); err != nil {
		return nil, 0, fmt.Errorf("register node %d: %w", reg.NodeID, err)
	}
	return append(img.leaveRecords(reg.NodeID, !clean, minISR), reg), reg.BrokerEpoch, nil
}

// FenceBrokerRecords returns the batch that fences node's registration of
// epoch: a BrokerFencedRecord, then for every partition the node leads or
// is in the ISR of, a PartitionChangeRecord that removes it from the ISR
// (the last member too: the ISR may be left empty) and, where it led,
// leaves the partition leaderless for an election. Where the change leaves
// the ISR below min.insync.replicas (the topic's override, else Kafka's
// default 1), the replicas it removes join the ELR (KIP-966). Propose the
// batch as one entry. A fenced broker gives no records.
func FenceBrokerRecords(img *Image, node int32, epoch int64) ([]Record, error) {
	br, err := img.currentBroker(node, epoch)
	if err != nil {
		return nil, fmt.Errorf("fence node %d: %w", node, err)
	}
	return img.fenceRecords(br, defaultMinISR), nil
}

// fenceRecords is FenceBrokerRecords' batch for br, with minISR as
// min.insync.replicas for topics without an override.
func (img *Image) fenceRecords(br Broker, minISR int) []Record {
	if br.Fenced {
		return nil
	}
	return img.departureRecords(br.NodeID, true, false, minISR)
}

// leaveRecords returns the records by which node's current registration
// makes way for a new one: it is fenced if it is not (fenceRecords), and
// with unclean (the previous process shut down uncleanly, so it may have
// lost records) the node also leaves every ELR for the LastKnownELR. The
// partition changes come in one record per partition.
func (img *Image) leaveRecords(node int32, unclean bool, minISR int) []Record {
	br, ok := img.brokers.get(node)
	fence := ok && !br.Fenced
	if !fence && !unclean {
		return nil
	}
	return img.departureRecords(node, fence, unclean, minISR)
}

// departureRecords returns, with fence, a BrokerFencedRecord for node's
// current registration, then for every partition the node leads or is in
// the ISR of (with fence) or in the ELR of (with unclean) the change that
// takes it out, with the ELR rules applied.
func (img *Image) departureRecords(node int32, fence, unclean bool, minISR int) []Record {
	var recs []Record
	if fence {
		br, _ := img.brokers.get(node)
		recs = append(recs, BrokerFencedRecord{NodeID: br.NodeID, BrokerEpoch: br.Epoch})
	}
	for _, t := range img.Topics() {
		m := -1
		for p := range t.partitions.all() {
			involved := fence && (p.Leader == node || p.InISR(node)) || unclean && p.InELR(node)
			if !involved {
				continue
			}
			if m < 0 {
				m = minInSync(img, t.name, minISR)
			}
			if change, ok := withoutBroker(*p, node, fence, unclean, m); ok {
				recs = append(recs, change)
			}
		}
	}
	return recs
}

// withoutBroker returns the change that takes node out of p's leadership
// and ISR (with fence) and, with unclean, out of the ELR, for
// min.insync.replicas minISR, if there is anything to change.
func withoutBroker(p Partition, node int32, fence, unclean bool, minISR int) (PartitionChangeRecord, bool) {
	leader := LeaderNoChange
	var isr []int32
	if fence && p.Leader == node {
		leader = NoLeader
	}
	if fence && p.InISR(node) {
		isr = slices.DeleteFunc(slices.Clone(p.ISR), func(r int32) bool { return r == node })
	}
	uncleanNode := int32(-1)
	if unclean {
		uncleanNode = node
	}
	return changeTo(p, leader, isr, minISR, uncleanNode)
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
	// replica outside the ISR and the ELR (see ElectLeader). A candidate
	// of a clean election (ISR, ELR, last known ELR: Candidates) is
	// elected as such whatever Unclean says. The field was appended: an
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
// ErrStaleBrokerEpoch) and unfenced, and it is a candidate of the first
// election the partition is open to (Candidates; else
// ErrIneligibleReplica). The first valid proposal wins; the later ones
// then fail as stale.
//
// An ISR member is elected with the ISR unchanged. Once no ISR member is
// unfenced, an ELR member is elected cleanly with the ISR [candidate]
// (KIP-966). Once ISR and ELR are empty, a LastKnownELR member is elected
// with the ISR [candidate]. An Unclean proposal of a replica outside all of
// them is an unclean election: allowed only when the topic's
// unclean.leader.election.enable override is true (the controller also
// takes its broker default; see ElectLeadersRequest) and none of those is
// open; the record makes it leader with the ISR [candidate]. The last two
// empty ELR and LastKnownELR. min.insync.replicas, for the ELR rules, is
// the topic's override, else 1.
func ElectLeader(img *Image, prop LeaderProposal) (Record, error) {
	return electLeader(img, prop, false, defaultMinISR)
}

// electLeader is ElectLeader with uncleanDefault as the value of
// unclean.leader.election.enable and minISR as that of
// min.insync.replicas for a topic without an override.
func electLeader(img *Image, prop LeaderProposal, uncleanDefault bool, minISR int) (Record, error) {
	p, err := img.proposalPartition(prop.TopicID, prop.Partition)
	if err != nil {
		return nil, fmt.Errorf("elect %d: %w", prop.Candidate, err)
	}
	kind, err := checkEligible(img, p, prop, uncleanDefault)
	if err != nil {
		return nil, fmt.Errorf("elect %d for partition %d of %s: %w", prop.Candidate, prop.Partition, prop.TopicID, err)
	}
	c := prop.Candidate
	switch kind {
	case ElectFromISR:
		return PartitionChangeRecord{TopicID: prop.TopicID, Partition: prop.Partition, Leader: c}, nil
	case ElectFromELR:
		rec, _ := changeTo(p, c, []int32{c}, partitionMinISR(img, p, minISR), -1)
		return rec, nil
	}
	return PartitionChangeRecord{TopicID: prop.TopicID, Partition: prop.Partition, Leader: c, ISR: []int32{c},
		ELR: changedIDs(p.ELR, nil), LastKnownELR: changedIDs(p.LastKnownELR, nil)}, nil
}

// checkEligible checks prop against p and returns the election it wins.
func checkEligible(img *Image, p Partition, prop LeaderProposal, uncleanDefault bool) (Election, error) {
	if prop.PartitionEpoch != p.PartitionEpoch {
		return NoElection, fmt.Errorf("%w: proposed at epoch %d, current %d", ErrStalePartitionEpoch, prop.PartitionEpoch, p.PartitionEpoch)
	}
	if p.HasLeader() {
		return NoElection, fmt.Errorf("%w: node %d leads", ErrLeaderExists, p.Leader)
	}
	br, err := img.currentBroker(prop.Candidate, prop.BrokerEpoch)
	if err != nil {
		return NoElection, err
	}
	if br.Fenced {
		return NoElection, fmt.Errorf("%w: %w: node %d", ErrIneligibleReplica, ErrBrokerFenced, br.NodeID)
	}
	t, _ := img.TopicByID(p.TopicID)
	enabled := uncleanEnabled(img, t.Name(), uncleanDefault)
	kind, cands := Candidates(img, p, prop.Unclean && enabled)
	if slices.Contains(cands, prop.Candidate) {
		return kind, nil
	}
	c := prop.Candidate
	switch {
	case !p.IsReplica(c):
		return NoElection, fmt.Errorf("%w: node %d is not a replica %v", ErrIneligibleReplica, c, p.Replicas)
	case kind == ElectFromISR && prop.Unclean:
		return NoElection, fmt.Errorf("%w: ISR member %d is unfenced: no unclean election", ErrIneligibleReplica, cands[0])
	case kind == ElectFromISR:
		return NoElection, fmt.Errorf("%w: node %d is not in the ISR %v", ErrIneligibleReplica, c, p.ISR)
	case kind == ElectFromELR:
		return NoElection, fmt.Errorf("%w: node %d is in neither the ISR %v nor the ELR %v, and ELR member %d is unfenced",
			ErrIneligibleReplica, c, p.ISR, p.ELR, cands[0])
	case kind == ElectLastKnown:
		return NoElection, fmt.Errorf("%w: node %d is not in the last known ELR %v, whose member %d is unfenced",
			ErrIneligibleReplica, c, p.LastKnownELR, cands[0])
	case prop.Unclean && !enabled:
		return NoElection, fmt.Errorf("%w: node %d is not in the ISR %v and unclean.leader.election.enable is false for topic %q",
			ErrIneligibleReplica, c, p.ISR, t.Name())
	}
	return NoElection, fmt.Errorf("%w: node %d is not in the ISR %v or the ELR %v (their members are fenced), and no unclean election was asked for",
		ErrIneligibleReplica, c, p.ISR, p.ELR)
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
