package metadata

import "fmt"

// Builder applies a run of records to an image, copying each shared part
// at most once per run: apply a raft Ready's committed entries, or a
// snapshot, through one Builder, then publish Image(). A Builder is not
// safe for concurrent use. The image it started from is never changed.
type Builder struct {
	img         Image
	own         builderOwners
	ownedTopics map[*Topic]bool          // topics this run copied or created
	ownedChunks map[*partitionChunk]bool // partition chunks likewise
}

// builderOwners records which parts of the image's maps a run copied.
type builderOwners struct {
	brokers, topics, names, collisions, configs pmapOwner
}

// NewBuilder returns a Builder that starts from img.
func NewBuilder(img *Image) *Builder {
	return &Builder{img: *img}
}

// Apply applies rec, read from the log at offset, to the builder's image.
// On error (see Image.Apply) nothing changes, and the caller may go on
// applying later records.
func (b *Builder) Apply(rec Record, offset int64) error {
	if err := b.apply(rec, offset); err != nil {
		return fmt.Errorf("apply %v at offset %d: %w", rec, offset, err)
	}
	b.img.offset = offset
	return nil
}

// AdvanceTo moves the image's offset to offset without applying a record:
// for log entries that hold no metadata record (raft's empty entries and
// configuration changes) and for records the caller chose to skip.
func (b *Builder) AdvanceTo(offset int64) error {
	if offset < b.img.offset {
		return fmt.Errorf("metadata: advance to offset %d: %w: offset %d already applied",
			offset, ErrInvalidRecord, b.img.offset)
	}
	b.img.offset = offset
	return nil
}

// Image returns the image built so far. The Builder stays usable; later
// writes copy what they change instead of touching the returned image.
func (b *Builder) Image() *Image {
	img := b.img
	b.own = builderOwners{}
	b.ownedTopics, b.ownedChunks = nil, nil
	return &img
}

func (b *Builder) apply(rec Record, offset int64) error {
	if offset < b.img.offset {
		return fmt.Errorf("%w: offset goes back from %d", ErrInvalidRecord, b.img.offset)
	}
	switch r := rec.(type) {
	case ClusterCreatedRecord:
		return b.applyClusterCreated(r)
	case ControllerChangedRecord:
		return b.applyControllerChanged(r)
	case BrokerRegistrationRecord:
		return b.applyBrokerRegistration(r, offset)
	case BrokerFencedRecord:
		return b.applyBrokerFenced(r.NodeID, r.BrokerEpoch, true)
	case BrokerUnfencedRecord:
		return b.applyBrokerFenced(r.NodeID, r.BrokerEpoch, false)
	case BrokerUnregisteredRecord:
		return b.applyBrokerUnregistered(r)
	case TopicRecord:
		return b.applyTopic(r)
	case TopicRemovedRecord:
		return b.applyTopicRemoved(r)
	case ConfigRecord:
		return b.applyConfig(r)
	case PartitionRecord:
		return b.applyPartition(r)
	case PartitionChangeRecord:
		return b.applyPartitionChange(r)
	case ProducerIDsBlockRecord:
		return b.applyProducerIDsBlock(r)
	}
	return fmt.Errorf("%w: %T is not a metadata record value", ErrUnknownRecordType, rec)
}

// invalid formats a reason for rejecting a record as ErrInvalidRecord.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidRecord, fmt.Sprintf(format, args...))
}
