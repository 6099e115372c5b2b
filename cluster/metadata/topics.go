package metadata

import (
	"fmt"
	"slices"
)

// Topic is a topic as the image holds it: immutable, shared between images
// until it changes.
type Topic struct {
	name       string
	id         UUID
	partitions partitionVec
}

// Name is the topic's name.
func (t *Topic) Name() string { return t.name }

// ID is the topic's id.
func (t *Topic) ID() UUID { return t.id }

// Internal reports whether the topic is one of Kafka's internal topics
// (__consumer_offsets, __transaction_state), which Metadata marks internal.
func (t *Topic) Internal() bool { return IsInternalTopic(t.name) }

// NumPartitions is the number of partitions; they are numbered from 0.
func (t *Topic) NumPartitions() int32 { return int32(t.partitions.len()) }

// Partition returns partition index.
func (t *Topic) Partition(index int32) (Partition, bool) {
	if index < 0 || int(index) >= t.partitions.len() {
		return Partition{}, false
	}
	return *t.partitions.at(int(index)), true
}

func (t *Topic) equal(o *Topic) bool {
	if t.name != o.name || t.id != o.id || t.partitions.len() != o.partitions.len() {
		return false
	}
	for i := range t.partitions.len() {
		if !t.partitions.at(i).equal(o.partitions.at(i)) {
			return false
		}
	}
	return true
}

// Partition is one partition's state. Its slices are shared with the
// image: read them, never modify them.
type Partition struct {
	TopicID UUID  // the topic's id
	Index   int32 // the partition index
	// Replicas is the assignment in preference order.
	Replicas []int32
	// ISR is the committed in-sync replica set. It is empty only while
	// the partition has no leader: its last member was fenced and moved
	// to the ELR (KIP-966).
	ISR []int32
	// Leader is the leader's node id, or NoLeader.
	Leader int32
	// LeaderEpoch grows with every leader change (and deliberate bump).
	LeaderEpoch int32
	// PartitionEpoch grows with every change of the partition.
	PartitionEpoch int32
	// ELR is the eligible leader replicas (KIP-966), in assignment
	// order: replicas that left the ISR while it was below
	// min.insync.replicas, when the high watermark stands still, so they
	// hold every committed record and may be elected cleanly when no ISR
	// member is left (docs/DESIGN.md "Leader election"). Empty whenever
	// the ISR has min.insync.replicas members; never overlaps the ISR.
	ELR []int32
	// LastKnownELR is the replicas that left the ELR because they came
	// back from an unclean shutdown (they may have lost unflushed
	// records), in assignment order: for operators, and the last resort
	// of an election once ISR and ELR are empty. Emptied with the ELR.
	LastKnownELR []int32
}

// HasLeader reports whether the partition has a leader.
func (p Partition) HasLeader() bool { return p.Leader != NoLeader }

// InISR reports whether node is in the ISR.
func (p Partition) InISR(node int32) bool { return slices.Contains(p.ISR, node) }

// IsReplica reports whether node is assigned a replica.
func (p Partition) IsReplica(node int32) bool { return slices.Contains(p.Replicas, node) }

// InELR reports whether node is an eligible leader replica.
func (p Partition) InELR(node int32) bool { return slices.Contains(p.ELR, node) }

// InLastKnownELR reports whether node is in the last known ELR.
func (p Partition) InLastKnownELR(node int32) bool { return slices.Contains(p.LastKnownELR, node) }

func (p *Partition) equal(o *Partition) bool {
	return p.TopicID == o.TopicID && p.Index == o.Index &&
		slices.Equal(p.Replicas, o.Replicas) && slices.Equal(p.ISR, o.ISR) &&
		p.Leader == o.Leader && p.LeaderEpoch == o.LeaderEpoch &&
		p.PartitionEpoch == o.PartitionEpoch &&
		slices.Equal(p.ELR, o.ELR) && slices.Equal(p.LastKnownELR, o.LastKnownELR)
}

// writableTopic returns a copy of t that this build owns, installing it in
// the image, or t itself if this build already owns it.
func (b *Builder) writableTopic(t *Topic) *Topic {
	if b.ownedTopics[t] {
		return t
	}
	c := &Topic{name: t.name, id: t.id, partitions: t.partitions.clone()}
	b.installOwnedTopic(c)
	return c
}

// installOwnedTopic puts t, which this build owns, into the image.
func (b *Builder) installOwnedTopic(t *Topic) {
	if b.ownedTopics == nil {
		b.ownedTopics = make(map[*Topic]bool)
		b.ownedChunks = make(map[*partitionChunk]bool)
	}
	b.ownedTopics[t] = true
	b.img.topics.set(&b.own.topics, t.id, t)
}

func (b *Builder) applyTopic(r TopicRecord) error {
	if err := b.img.checkNewTopic(r.Name, r.TopicID); err != nil {
		return err
	}
	b.installOwnedTopic(&Topic{name: r.Name, id: r.TopicID})
	b.img.names.set(&b.own.names, r.Name, r.TopicID)
	b.img.collisions.set(&b.own.collisions, collisionKey(r.Name), r.TopicID)
	return nil
}

// checkNewTopic checks that a topic called name with id may be created.
func (img *Image) checkNewTopic(name string, id UUID) error {
	if err := ValidateTopicName(name); err != nil {
		return err
	}
	if other, ok := img.collisions.get(collisionKey(name)); ok {
		t, _ := img.topics.get(other)
		if t.name == name {
			return fmt.Errorf("%w: topic %q", ErrTopicExists, name)
		}
		return fmt.Errorf("%w: topic %q collides with existing topic %q", ErrInvalidTopic, name, t.name)
	}
	if id.IsZero() || id == MetadataTopicID {
		return fmt.Errorf("%w: %s is reserved", ErrInvalidTopicID, id)
	}
	if t, ok := img.topics.get(id); ok {
		return fmt.Errorf("%w: %s is the id of topic %q", ErrInvalidTopicID, id, t.name)
	}
	return nil
}

func (b *Builder) applyTopicRemoved(r TopicRemovedRecord) error {
	t, ok := b.img.topics.get(r.TopicID)
	if !ok {
		return fmt.Errorf("%w: id %s", ErrUnknownTopic, r.TopicID)
	}
	b.img.topics.delete(&b.own.topics, t.id)
	b.img.names.delete(&b.own.names, t.name)
	b.img.collisions.delete(&b.own.collisions, collisionKey(t.name))
	b.img.configs.delete(&b.own.configs, ConfigResource{Type: ResourceTopic, Name: t.name})
	b.img.partitionCount -= t.partitions.len()
	return nil
}

// topicForPartition returns the topic id names, with an error naming
// partition if there is none.
func (img *Image) topicForPartition(id UUID, partition int32) (*Topic, error) {
	t, ok := img.topics.get(id)
	if !ok {
		return nil, fmt.Errorf("%w: id %s (partition %d)", ErrUnknownTopic, id, partition)
	}
	return t, nil
}

func (b *Builder) applyPartition(r PartitionRecord) error {
	t, err := b.img.topicForPartition(r.TopicID, r.Partition)
	if err != nil {
		return err
	}
	if int(r.Partition) != t.partitions.len() {
		return invalid("partition %d of topic %q: the next partition is %d", r.Partition, t.name, t.partitions.len())
	}
	p := &Partition{
		TopicID:        r.TopicID,
		Index:          r.Partition,
		Replicas:       slices.Clone(r.Replicas),
		ISR:            slices.Clone(r.ISR),
		Leader:         r.Leader,
		LeaderEpoch:    r.LeaderEpoch,
		PartitionEpoch: r.PartitionEpoch,
		ELR:            idList(r.ELR),
		LastKnownELR:   idList(r.LastKnownELR),
	}
	if err := p.check(); err != nil {
		return err
	}
	if r.LeaderEpoch < 0 || r.PartitionEpoch < 0 {
		return invalid("negative epoch")
	}
	t = b.writableTopic(t)
	t.partitions.append(b.ownedChunks, p)
	b.img.partitionCount++
	return nil
}

func (b *Builder) applyPartitionChange(r PartitionChangeRecord) error {
	t, err := b.img.topicForPartition(r.TopicID, r.Partition)
	if err != nil {
		return err
	}
	old, ok := t.Partition(r.Partition)
	if !ok {
		return fmt.Errorf("%w: partition %d of topic %q", ErrUnknownPartition, r.Partition, t.name)
	}
	p, err := changePartition(old, r)
	if err != nil {
		return err
	}
	t = b.writableTopic(t)
	t.partitions.set(b.ownedChunks, int(r.Partition), &p)
	return nil
}

// changePartition returns p changed by r, with KRaft's epoch rules.
func changePartition(p Partition, r PartitionChangeRecord) (Partition, error) {
	if r.Leader == LeaderNoChange && r.ISR == nil && r.ELR == nil && r.LastKnownELR == nil {
		return p, invalid("the change changes nothing")
	}
	if r.Leader < LeaderNoChange {
		return p, invalid("leader %d", r.Leader)
	}
	if p.PartitionEpoch == maxEpoch || (r.Leader != LeaderNoChange && p.LeaderEpoch == maxEpoch) {
		return p, invalid("epoch overflow")
	}
	if r.ISR != nil {
		p.ISR = slices.Clone(r.ISR)
	}
	if r.ELR != nil {
		p.ELR = idList(r.ELR)
	}
	if r.LastKnownELR != nil {
		p.LastKnownELR = idList(r.LastKnownELR)
	}
	if r.Leader != LeaderNoChange {
		p.Leader = r.Leader
		p.LeaderEpoch++
	}
	p.PartitionEpoch++
	if err := p.check(); err != nil {
		return p, err
	}
	return p, nil
}

// idList is ids as a partition holds it: a copy, nil when empty, so that
// "none" has one form in an image.
func idList(ids []int32) []int32 {
	if len(ids) == 0 {
		return nil
	}
	return slices.Clone(ids)
}

// check checks a partition's invariants: checkAssignment, and the ELR and
// LastKnownELR distinct replicas outside the ISR and outside each other.
func (p *Partition) check() error {
	if err := checkAssignment(p.Replicas, p.ISR, p.Leader); err != nil {
		return err
	}
	for _, set := range []struct {
		name string
		ids  []int32
	}{{"ELR", p.ELR}, {"last known ELR", p.LastKnownELR}} {
		for i, r := range set.ids {
			switch {
			case !p.IsReplica(r):
				return invalid("%s member %d is not a replica in %v", set.name, r, p.Replicas)
			case slices.Contains(set.ids[:i], r):
				return invalid("%s member %d listed twice in %v", set.name, r, set.ids)
			case p.InISR(r):
				return invalid("%s member %d is in the ISR %v", set.name, r, p.ISR)
			}
		}
	}
	for _, r := range p.LastKnownELR {
		if p.InELR(r) {
			return invalid("last known ELR member %d is in the ELR %v", r, p.ELR)
		}
	}
	return nil
}

const maxEpoch = int32(1<<31 - 1)

// MaxReplicas bounds a partition's replica list (Kafka's replication
// factor is an int16).
const MaxReplicas = 1<<15 - 1

// checkAssignment checks a partition's assignment: distinct non-negative
// replicas, an ISR of distinct replicas (non-empty unless the partition
// has no leader), and a leader in the ISR or none.
func checkAssignment(replicas, isr []int32, leader int32) error {
	if len(replicas) == 0 || len(replicas) > MaxReplicas {
		return invalid("%d replicas, want 1-%d", len(replicas), MaxReplicas)
	}
	sorted := sortedIDs(replicas)
	if sorted[0] < 0 {
		return invalid("replica %d is not a node id", sorted[0])
	}
	if dup, ok := duplicate(sorted); ok {
		return invalid("replica %d listed twice in %v", dup, replicas)
	}
	if len(isr) == 0 && leader != NoLeader {
		return invalid("empty ISR")
	}
	sortedISR := sortedIDs(isr)
	if dup, ok := duplicate(sortedISR); ok {
		return invalid("ISR member %d listed twice in %v", dup, isr)
	}
	for _, r := range sortedISR {
		if _, found := slices.BinarySearch(sorted, r); !found {
			return invalid("ISR member %d is not a replica in %v", r, replicas)
		}
	}
	if leader != NoLeader {
		if _, found := slices.BinarySearch(sortedISR, leader); !found {
			return invalid("leader %d is not in the ISR %v", leader, isr)
		}
	}
	return nil
}

func sortedIDs(ids []int32) []int32 {
	s := slices.Clone(ids)
	slices.Sort(s)
	return s
}

// duplicate returns an id that occurs twice in sorted.
func duplicate(sorted []int32) (int32, bool) {
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return sorted[i], true
		}
	}
	return 0, false
}
