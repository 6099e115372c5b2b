package metadata

import (
	"fmt"
	"net"
	"strconv"
)

// Record is one entry of the metadata log. The set is closed: only the
// *Record types of this package implement it. Records are plain values;
// EncodeRecord and DecodeRecord turn them into log bytes and back, and
// Image.Apply applies them.
//
// Every record type is a struct with exported fields and is applied by value;
// a record and the slices in it must not be modified once handed to Apply or
// EncodeRecord.
type Record interface {
	fmt.Stringer
	recordType() recordType
}

// Sentinel leader values, as in Kafka's PartitionRecord and
// PartitionChangeRecord.
const (
	// NoLeader in a leader field means the partition has no leader.
	NoLeader int32 = -1
	// LeaderNoChange in PartitionChangeRecord.Leader keeps the current
	// leader and its leader epoch.
	LeaderNoChange int32 = -2
)

// ClusterCreatedRecord is the first record of a new cluster's log: it fixes
// the cluster id that Metadata and DescribeCluster report. It is applied once.
type ClusterCreatedRecord struct {
	_msgpack struct{} `msgpack:",as_array"`
	// ClusterID is a non-zero UUID in Kafka's text form (see
	// ValidateClusterID).
	ClusterID string
}

// ControllerChangedRecord is written by a newly elected quorum leader as its
// first record, like KRaft's LeaderChangeMessage; it sets the controller id
// that Metadata and DescribeCluster report. Terms only grow.
type ControllerChangedRecord struct {
	_msgpack struct{} `msgpack:",as_array"`
	// ControllerID is the node id of the new quorum leader.
	ControllerID int32
	// Term is the raft term the leader was elected in (> the previous one).
	Term uint64
}

// BrokerRegistrationRecord registers a broker process. Every process start
// registers anew with a higher broker epoch; the registration replaces the
// previous one of that node and leaves the broker fenced until a
// BrokerUnfencedRecord (see RegisterBrokerRecords).
type BrokerRegistrationRecord struct {
	_msgpack struct{} `msgpack:",as_array"`
	// NodeID is the broker's node.id (>= 0).
	NodeID int32
	// BrokerEpoch identifies this registration; it is greater than the
	// epoch of any earlier registration of the node.
	BrokerEpoch int64
	// IncarnationID is a random non-zero UUID chosen at process start.
	IncarnationID UUID
	// Host is the advertised Kafka listener's host, non-empty.
	Host string
	// Port is the advertised Kafka listener's port, 1-65535.
	Port int32
	// ActorAddress is the protoactor remote address ("host:port") of the
	// node's actor system; empty when the node runs without remoting.
	ActorAddress string
	// Rack is the broker.rack, empty if none.
	Rack string
	// RegisteredAt is 0 in the log: the registration is this record, at
	// its own offset. In a snapshot (Image.Records) it is the offset of
	// the original registration record, so that the restored
	// Broker.RegisteredAt is that offset (0 there too stands for the
	// record's offset: no raft entry has index 0).
	RegisteredAt int64
}

// BrokerFencedRecord fences a broker: it may no longer lead or join an ISR.
// It names the registration by its epoch; fencing a fenced broker is allowed
// and changes nothing.
type BrokerFencedRecord struct {
	_msgpack    struct{} `msgpack:",as_array"`
	NodeID      int32    // the broker's node id
	BrokerEpoch int64    // the epoch of its current registration
}

// BrokerUnfencedRecord unfences a broker that has caught up on metadata.
// Unfencing an unfenced broker is allowed and changes nothing.
type BrokerUnfencedRecord struct {
	_msgpack    struct{} `msgpack:",as_array"`
	NodeID      int32    // the broker's node id
	BrokerEpoch int64    // the epoch of its current registration
}

// BrokerUnregisteredRecord removes a broker's registration (a node
// decommissioned for good). Its partitions keep their assignments.
type BrokerUnregisteredRecord struct {
	_msgpack    struct{} `msgpack:",as_array"`
	NodeID      int32    // the broker's node id
	BrokerEpoch int64    // the epoch of its current registration
}

// TopicRecord creates a topic, with no partitions yet: PartitionRecords
// follow it (see NewTopicRecords).
type TopicRecord struct {
	_msgpack struct{} `msgpack:",as_array"`
	// Name is a legal topic name (ValidateTopicName), unique, and not
	// colliding with another topic's name when '.' and '_' are treated alike.
	Name string
	// TopicID is non-zero, not MetadataTopicID and never reused.
	TopicID UUID
}

// TopicRemovedRecord deletes a topic, its partitions and its config
// overrides.
type TopicRemovedRecord struct {
	_msgpack struct{} `msgpack:",as_array"`
	TopicID  UUID     // the topic to delete
}

// ConfigRecord sets or removes one config override of a topic or broker.
// Values are stored as given; the typed config table validates them before
// a record is proposed.
type ConfigRecord struct {
	_msgpack struct{} `msgpack:",as_array"`
	// ResourceType is ResourceTopic (the topic must exist) or
	// ResourceBroker.
	ResourceType ResourceType
	// ResourceName is the topic name, or for a broker its node id in
	// decimal, or "" for the cluster-wide broker default.
	ResourceName string
	// Name is the config key (for example "retention.ms"), non-empty.
	Name string
	// Value is the new value; it must be empty when Remove is set.
	Value string
	// Remove deletes the override (removing an absent one is allowed).
	Remove bool
}

// PartitionRecord creates a partition, or in a snapshot restores one.
// Partitions of a topic are created in index order 0, 1, 2, ...
type PartitionRecord struct {
	_msgpack  struct{} `msgpack:",as_array"`
	TopicID   UUID     // the topic, which must exist
	Partition int32    // the partition index: the topic's partition count
	// Replicas is the assignment in preference order: non-empty, distinct
	// node ids >= 0.
	Replicas []int32
	// ISR is a subset of Replicas, empty only when Leader is NoLeader.
	ISR []int32
	// Leader is a member of ISR, or NoLeader.
	Leader int32
	// LeaderEpoch is >= 0; 0 for a new partition.
	LeaderEpoch int32
	// PartitionEpoch is >= 0; 0 for a new partition.
	PartitionEpoch int32
	// ELR is the eligible leader replicas (KIP-966): replicas outside
	// the ISR known to hold every committed record; disjoint from ISR.
	// Version 1 appended it; an older record has none.
	ELR []int32
	// LastKnownELR is the replicas that left the ELR because they came
	// back from an unclean shutdown; disjoint from ISR and ELR. Version 1
	// appended it; an older record has none.
	LastKnownELR []int32
}

// PartitionChangeRecord changes a partition's leader, ISR, ELR and
// LastKnownELR, with KRaft's PartitionChangeRecord semantics: applying it
// bumps the partition epoch; when Leader is not LeaderNoChange it also
// bumps the leader epoch, even if the leader stays the same (that is how a
// leader epoch is bumped on purpose). After the change the leader is
// NoLeader or in the ISR, and ISR, ELR and LastKnownELR are disjoint.
type PartitionChangeRecord struct {
	_msgpack  struct{} `msgpack:",as_array"`
	TopicID   UUID     // the topic, which must exist
	Partition int32    // an existing partition index
	// Leader is the new leader, NoLeader, or LeaderNoChange.
	Leader int32
	// ISR is the new ISR, a subset of the replicas (empty only for a
	// partition left without leader); nil keeps the current one.
	ISR []int32
	// ELR is the new eligible leader replicas (KIP-966); nil keeps the
	// current ones. Version 1 appended it.
	ELR []int32
	// LastKnownELR is the new last known ELR; nil keeps the current one.
	// Version 1 appended it.
	LastKnownELR []int32
}

// ProducerIDsBlockRecord hands a block of producer ids to a broker for
// InitProducerId. Blocks are contiguous and never reused: FirstProducerID
// is the image's NextProducerID. See AllocateProducerIDs.
type ProducerIDsBlockRecord struct {
	_msgpack struct{} `msgpack:",as_array"`
	// BrokerID is the broker the block was given to; -1 in a snapshot,
	// where the owner no longer matters.
	BrokerID int32
	// BrokerEpoch is the epoch of that broker's registration; -1 in a
	// snapshot.
	BrokerEpoch int64
	// FirstProducerID is the first id of the block.
	FirstProducerID int64
	// Size is the number of ids in the block (> 0).
	Size int64
}

type recordType uint8

// Record type tags in the log envelope. These numbers are on disk: never
// reuse or renumber one.
const (
	typeClusterCreated     recordType = 1
	typeControllerChanged  recordType = 2
	typeBrokerRegistration recordType = 3
	typeBrokerFenced       recordType = 4
	typeBrokerUnfenced     recordType = 5
	typeBrokerUnregistered recordType = 6
	typeTopic              recordType = 7
	typeTopicRemoved       recordType = 8
	typeConfig             recordType = 9
	typePartition          recordType = 10
	typePartitionChange    recordType = 11
	typeProducerIDsBlock   recordType = 12
)

func (ClusterCreatedRecord) recordType() recordType     { return typeClusterCreated }
func (ControllerChangedRecord) recordType() recordType  { return typeControllerChanged }
func (BrokerRegistrationRecord) recordType() recordType { return typeBrokerRegistration }
func (BrokerFencedRecord) recordType() recordType       { return typeBrokerFenced }
func (BrokerUnfencedRecord) recordType() recordType     { return typeBrokerUnfenced }
func (BrokerUnregisteredRecord) recordType() recordType { return typeBrokerUnregistered }
func (TopicRecord) recordType() recordType              { return typeTopic }
func (TopicRemovedRecord) recordType() recordType       { return typeTopicRemoved }
func (ConfigRecord) recordType() recordType             { return typeConfig }
func (PartitionRecord) recordType() recordType          { return typePartition }
func (PartitionChangeRecord) recordType() recordType    { return typePartitionChange }
func (ProducerIDsBlockRecord) recordType() recordType   { return typeProducerIDsBlock }

// String describes the record in one line, for errors, logs and dumps.
func (r ClusterCreatedRecord) String() string {
	return fmt.Sprintf("ClusterCreated{cluster=%s}", r.ClusterID)
}

// String describes the record in one line, for errors, logs and dumps.
func (r ControllerChangedRecord) String() string {
	return fmt.Sprintf("ControllerChanged{controller=%d term=%d}", r.ControllerID, r.Term)
}

// String describes the record in one line, for errors, logs and dumps.
func (r BrokerRegistrationRecord) String() string {
	s := fmt.Sprintf("BrokerRegistration{node=%d epoch=%d incarnation=%s kafka=%s actor=%q rack=%q",
		r.NodeID, r.BrokerEpoch, r.IncarnationID, hostPort(r.Host, r.Port), r.ActorAddress, r.Rack)
	if r.RegisteredAt != 0 {
		s += fmt.Sprintf(" registered_at=%d", r.RegisteredAt)
	}
	return s + "}"
}

// String describes the record in one line, for errors, logs and dumps.
func (r BrokerFencedRecord) String() string {
	return fmt.Sprintf("BrokerFenced{node=%d epoch=%d}", r.NodeID, r.BrokerEpoch)
}

// String describes the record in one line, for errors, logs and dumps.
func (r BrokerUnfencedRecord) String() string {
	return fmt.Sprintf("BrokerUnfenced{node=%d epoch=%d}", r.NodeID, r.BrokerEpoch)
}

// String describes the record in one line, for errors, logs and dumps.
func (r BrokerUnregisteredRecord) String() string {
	return fmt.Sprintf("BrokerUnregistered{node=%d epoch=%d}", r.NodeID, r.BrokerEpoch)
}

// String describes the record in one line, for errors, logs and dumps.
func (r TopicRecord) String() string {
	return fmt.Sprintf("Topic{name=%q id=%s}", r.Name, r.TopicID)
}

// String describes the record in one line, for errors, logs and dumps.
func (r TopicRemovedRecord) String() string {
	return fmt.Sprintf("TopicRemoved{id=%s}", r.TopicID)
}

// String describes the record in one line, for errors, logs and dumps.
func (r ConfigRecord) String() string {
	if r.Remove {
		return fmt.Sprintf("Config{%s %q remove %s}", r.ResourceType, r.ResourceName, r.Name)
	}
	return fmt.Sprintf("Config{%s %q %s=%q}", r.ResourceType, r.ResourceName, r.Name, r.Value)
}

// String describes the record in one line, for errors, logs and dumps.
func (r PartitionRecord) String() string {
	s := fmt.Sprintf("Partition{topic=%s partition=%d replicas=%v isr=%v leader=%d leader_epoch=%d partition_epoch=%d",
		r.TopicID, r.Partition, r.Replicas, r.ISR, r.Leader, r.LeaderEpoch, r.PartitionEpoch)
	if len(r.ELR) > 0 {
		s += fmt.Sprintf(" elr=%v", r.ELR)
	}
	if len(r.LastKnownELR) > 0 {
		s += fmt.Sprintf(" last_known_elr=%v", r.LastKnownELR)
	}
	return s + "}"
}

// String describes the record in one line, for errors, logs and dumps.
func (r PartitionChangeRecord) String() string {
	s := fmt.Sprintf("PartitionChange{topic=%s partition=%d", r.TopicID, r.Partition)
	if r.Leader != LeaderNoChange {
		s += fmt.Sprintf(" leader=%d", r.Leader)
	}
	if r.ISR != nil {
		s += fmt.Sprintf(" isr=%v", r.ISR)
	}
	if r.ELR != nil {
		s += fmt.Sprintf(" elr=%v", r.ELR)
	}
	if r.LastKnownELR != nil {
		s += fmt.Sprintf(" last_known_elr=%v", r.LastKnownELR)
	}
	return s + "}"
}

// String describes the record in one line, for errors, logs and dumps.
func (r ProducerIDsBlockRecord) String() string {
	return fmt.Sprintf("ProducerIDsBlock{broker=%d epoch=%d first=%d size=%d}",
		r.BrokerID, r.BrokerEpoch, r.FirstProducerID, r.Size)
}

func hostPort(host string, port int32) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}
