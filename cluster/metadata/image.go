package metadata

import (
	"cmp"
	"slices"
)

// Image is the state of the cluster's metadata after applying a prefix of
// the metadata log: cluster id, controller, brokers, topics with their
// partitions, config overrides, and the next producer id. An Image is
// immutable and safe for concurrent readers; Apply and Builder return new
// Images that share every part that did not change.
//
// The zero Image is not valid; start from Empty or Restore.
type Image struct {
	offset          int64
	clusterID       string
	controllerID    int32
	controllerEpoch uint64
	brokers         pmap[int32, Broker]
	topics          pmap[UUID, *Topic]
	names           pmap[string, UUID] // by name
	collisions      pmap[string, UUID] // by collisionKey(name)
	configs         pmap[ConfigResource, map[string]string]
	nextProducerID  int64
	partitionCount  int
}

// Empty returns the image of an empty log: no cluster id, no controller,
// nothing registered, offset -1.
func Empty() *Image {
	return &Image{offset: -1, controllerID: -1}
}

// Apply returns the image after applying rec, read from the log at offset
// (the raft index of its entry; the records of one entry share it). Offsets
// never go back. An invalid record gives an error that names it and wraps
// the reason (ErrInvalidRecord, ErrUnknownTopic, ...), and no image; img is
// never changed. To apply many records, a Builder avoids copying the shared
// parts once per record.
func (img *Image) Apply(rec Record, offset int64) (*Image, error) {
	b := NewBuilder(img)
	if err := b.Apply(rec, offset); err != nil {
		return nil, err
	}
	return b.Image(), nil
}

// Restore builds the image that a snapshot describes: records (as
// Image.Records returns them) applied to Empty at offset, the log index the
// snapshot covers.
func Restore(records []Record, offset int64) (*Image, error) {
	b := NewBuilder(Empty())
	for _, rec := range records {
		if err := b.Apply(rec, offset); err != nil {
			return nil, err
		}
	}
	if err := b.AdvanceTo(offset); err != nil {
		return nil, err
	}
	return b.Image(), nil
}

// Offset is the log offset (raft index) of the last record applied, or -1.
func (img *Image) Offset() int64 { return img.offset }

// ClusterID is the cluster id set by ClusterCreatedRecord, or "".
func (img *Image) ClusterID() string { return img.clusterID }

// ControllerID is the node id of the quorum leader named by the last
// ControllerChangedRecord, or -1.
func (img *Image) ControllerID() int32 { return img.controllerID }

// ControllerEpoch is the raft term of the last ControllerChangedRecord, or 0.
func (img *Image) ControllerEpoch() uint64 { return img.controllerEpoch }

// NextProducerID is the first producer id not yet handed out in a block.
func (img *Image) NextProducerID() int64 { return img.nextProducerID }

// Topic returns the topic named name.
func (img *Image) Topic(name string) (*Topic, bool) {
	id, ok := img.names.get(name)
	if !ok {
		return nil, false
	}
	return img.topics.get(id)
}

// TopicByID returns the topic whose id is id.
func (img *Image) TopicByID(id UUID) (*Topic, bool) {
	return img.topics.get(id)
}

// Topics returns every topic, sorted by name. It allocates and sorts on
// every call.
func (img *Image) Topics() []*Topic {
	out := make([]*Topic, 0, img.topics.len())
	for _, t := range img.topics.all() {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *Topic) int { return cmp.Compare(a.name, b.name) })
	return out
}

// NumTopics is the number of topics.
func (img *Image) NumTopics() int { return img.topics.len() }

// NumPartitions is the number of partitions of all topics.
func (img *Image) NumPartitions() int { return img.partitionCount }

// Partition returns partition index of the topic whose id is topicID.
func (img *Image) Partition(topicID UUID, index int32) (Partition, bool) {
	t, ok := img.topics.get(topicID)
	if !ok {
		return Partition{}, false
	}
	return t.Partition(index)
}

// Broker returns the registration of node id.
func (img *Image) Broker(id int32) (Broker, bool) {
	return img.brokers.get(id)
}

// Brokers returns every registered broker, sorted by node id.
func (img *Image) Brokers() []Broker {
	out := make([]Broker, 0, img.brokers.len())
	for _, b := range img.brokers.all() {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b Broker) int { return cmp.Compare(a.NodeID, b.NodeID) })
	return out
}

// Equal reports whether img and o hold the same metadata at the same
// offset. Images built by applying the same records are Equal.
func (img *Image) Equal(o *Image) bool {
	if img == o {
		return true
	}
	return img.offset == o.offset &&
		img.clusterID == o.clusterID &&
		img.controllerID == o.controllerID &&
		img.controllerEpoch == o.controllerEpoch &&
		img.nextProducerID == o.nextProducerID &&
		img.partitionCount == o.partitionCount &&
		equalPmap(img.brokers, o.brokers, func(a, b Broker) bool { return a == b }) &&
		equalPmap(img.topics, o.topics, (*Topic).equal) &&
		equalPmap(img.names, o.names, func(a, b UUID) bool { return a == b }) &&
		equalPmap(img.collisions, o.collisions, func(a, b UUID) bool { return a == b }) &&
		equalPmap(img.configs, o.configs, mapsEqual)
}
