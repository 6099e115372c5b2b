package metadata

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// The log bytes of a record are one msgpack value, a 3-element array:
//
//	[type, version, payload]
//
// type and version are positive fixints (0-127) and payload is the record
// struct as a msgpack array of its fields in declaration order
// (msgpack's as_array). Adding, removing or retyping a field needs a new
// version; the decoder keeps reading every older version it lists.
//
// Versions past 0: BrokerRegistration 1 added RegisteredAt; Partition 1
// and PartitionChange 1 added ELR and LastKnownELR (KIP-966).

// recordCodec describes how to read one record type.
type recordCodec struct {
	name    string
	version uint8 // the version EncodeRecord writes and DecodeRecord reads
	decode  func(*msgpack.Decoder) (Record, error)
	// older reads the earlier versions DecodeRecord still accepts.
	older map[uint8]func(*msgpack.Decoder) (Record, error)
}

// recordCodecs is the closed table of record types, indexed by tag.
var recordCodecs = map[recordType]recordCodec{
	typeClusterCreated:     {"ClusterCreated", 0, decodeAs[ClusterCreatedRecord], nil},
	typeControllerChanged:  {"ControllerChanged", 0, decodeAs[ControllerChangedRecord], nil},
	typeBrokerRegistration: {"BrokerRegistration", 1, decodeAs[BrokerRegistrationRecord], olderBrokerRegistrations},
	typeBrokerFenced:       {"BrokerFenced", 0, decodeAs[BrokerFencedRecord], nil},
	typeBrokerUnfenced:     {"BrokerUnfenced", 0, decodeAs[BrokerUnfencedRecord], nil},
	typeBrokerUnregistered: {"BrokerUnregistered", 0, decodeAs[BrokerUnregisteredRecord], nil},
	typeTopic:              {"Topic", 0, decodeAs[TopicRecord], nil},
	typeTopicRemoved:       {"TopicRemoved", 0, decodeAs[TopicRemovedRecord], nil},
	typeConfig:             {"Config", 0, decodeAs[ConfigRecord], nil},
	typePartition:          {"Partition", 1, decodeAs[PartitionRecord], olderPartitions},
	typePartitionChange:    {"PartitionChange", 1, decodeAs[PartitionChangeRecord], olderPartitionChanges},
	typeProducerIDsBlock:   {"ProducerIDsBlock", 0, decodeAs[ProducerIDsBlockRecord], nil},
}

// olderBrokerRegistrations reads the versions of BrokerRegistrationRecord
// before the current one.
var olderBrokerRegistrations = map[uint8]func(*msgpack.Decoder) (Record, error){0: decodeBrokerRegistrationV0}

// brokerRegistrationV0 is BrokerRegistrationRecord as version 0 wrote it,
// without RegisteredAt.
type brokerRegistrationV0 struct {
	_msgpack      struct{} `msgpack:",as_array"`
	NodeID        int32
	BrokerEpoch   int64
	IncarnationID UUID
	Host          string
	Port          int32
	ActorAddress  string
	Rack          string
}

func decodeBrokerRegistrationV0(d *msgpack.Decoder) (Record, error) {
	var v brokerRegistrationV0
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return BrokerRegistrationRecord{NodeID: v.NodeID, BrokerEpoch: v.BrokerEpoch, IncarnationID: v.IncarnationID,
		Host: v.Host, Port: v.Port, ActorAddress: v.ActorAddress, Rack: v.Rack}, nil
}

// olderPartitions and olderPartitionChanges read the versions of
// PartitionRecord and PartitionChangeRecord before ELR and LastKnownELR:
// a partition of such a record has neither, and a change of one keeps
// them.
var (
	olderPartitions       = map[uint8]func(*msgpack.Decoder) (Record, error){0: decodePartitionV0}
	olderPartitionChanges = map[uint8]func(*msgpack.Decoder) (Record, error){0: decodePartitionChangeV0}
)

// partitionV0 is PartitionRecord as version 0 wrote it.
type partitionV0 struct {
	_msgpack       struct{} `msgpack:",as_array"`
	TopicID        UUID
	Partition      int32
	Replicas       []int32
	ISR            []int32
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32
}

func decodePartitionV0(d *msgpack.Decoder) (Record, error) {
	var v partitionV0
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return PartitionRecord{TopicID: v.TopicID, Partition: v.Partition, Replicas: v.Replicas, ISR: v.ISR,
		Leader: v.Leader, LeaderEpoch: v.LeaderEpoch, PartitionEpoch: v.PartitionEpoch}, nil
}

// partitionChangeV0 is PartitionChangeRecord as version 0 wrote it.
type partitionChangeV0 struct {
	_msgpack  struct{} `msgpack:",as_array"`
	TopicID   UUID
	Partition int32
	Leader    int32
	ISR       []int32
}

func decodePartitionChangeV0(d *msgpack.Decoder) (Record, error) {
	var v partitionChangeV0
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return PartitionChangeRecord{TopicID: v.TopicID, Partition: v.Partition, Leader: v.Leader, ISR: v.ISR}, nil
}

func decodeAs[T Record](d *msgpack.Decoder) (Record, error) {
	var r T
	if err := d.Decode(&r); err != nil {
		return nil, err
	}
	return r, nil
}

const envelopeHeader = 0x93 // msgpack fixarray of 3 elements

// EncodeRecord returns the log bytes of r: a type tag, a version and the
// msgpack payload. The encoding is deterministic: equal records give equal
// bytes.
func EncodeRecord(r Record) ([]byte, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: encode nil record", ErrUnknownRecordType)
	}
	codec, ok := recordCodecs[r.recordType()]
	if !ok || !isValueRecord(r) {
		return nil, fmt.Errorf("%w: encode %T", ErrUnknownRecordType, r)
	}
	var buf bytes.Buffer
	buf.Write([]byte{envelopeHeader, byte(r.recordType()), codec.version})
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("metadata: encode %v: %w", r, err)
	}
	return buf.Bytes(), nil
}

// DecodeRecord parses the log bytes of one record. Bytes that are not a
// well-formed record of a known type and version give an error wrapping
// ErrMalformedRecord, ErrUnknownRecordType or ErrUnsupportedVersion; it
// never panics, and it allocates at most in proportion to len(b).
//
// DecodeRecord checks the shape of the bytes only; Apply checks the
// contents.
func DecodeRecord(b []byte) (Record, error) {
	if len(b) < 3 || b[0] != envelopeHeader || b[1] > 0x7f || b[2] > 0x7f {
		return nil, fmt.Errorf("%w: bad envelope header", ErrMalformedRecord)
	}
	t, version, payload := recordType(b[1]), b[2], b[3:]
	codec, ok := recordCodecs[t]
	if !ok {
		return nil, fmt.Errorf("%w: tag %d", ErrUnknownRecordType, t)
	}
	decode := codec.decode
	if version != codec.version {
		if decode = codec.older[version]; decode == nil {
			return nil, fmt.Errorf("%w: %s version %d (this build reads %d)",
				ErrUnsupportedVersion, codec.name, version, codec.version)
		}
	}
	if err := checkPayload(payload); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMalformedRecord, codec.name, err)
	}
	dec := msgpack.GetDecoder()
	defer msgpack.PutDecoder(dec)
	dec.Reset(bytes.NewReader(payload))
	dec.DisallowUnknownFields(true)
	r, err := decode(dec)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMalformedRecord, codec.name, err)
	}
	return r, nil
}

// isValueRecord reports whether r holds a record value, not a pointer to
// one (pointers satisfy Record too, through the value methods).
func isValueRecord(r Record) bool {
	switch r.(type) {
	case ClusterCreatedRecord, ControllerChangedRecord, BrokerRegistrationRecord,
		BrokerFencedRecord, BrokerUnfencedRecord, BrokerUnregisteredRecord,
		TopicRecord, TopicRemovedRecord, ConfigRecord, PartitionRecord,
		PartitionChangeRecord, ProducerIDsBlockRecord:
		return true
	}
	return false
}
