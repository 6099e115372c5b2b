package group

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/log/batch"
)

// ErrBadRecord is a __consumer_offsets record that cannot be decoded,
// wrapped with detail.
var ErrBadRecord = errors.New("group: bad __consumer_offsets record")

// Key versions of __consumer_offsets records (a key's first int16): 0 and
// 1 are offset commits (Kafka writes 1), 2 is group metadata.
const (
	offsetCommitKeyVersion  = 1
	groupMetadataKeyVersion = 2
)

// OffsetCommitRecord is the record of a commit: key version 1, value
// version 3 (version 1 if the offset carries an explicit expiry), as
// Kafka 2.1+ writes them.
func OffsetCommitRecord(group string, tp TopicPartition, om OffsetAndMetadata) Record {
	v := kmsg.NewOffsetCommitValue()
	v.Version = 3
	if om.ExpireTimestampMs != -1 {
		v.Version = 1
	}
	v.Offset, v.LeaderEpoch, v.Metadata = om.Offset, om.LeaderEpoch, om.Metadata
	v.CommitTimestamp, v.ExpireTimestamp = om.CommitTimestampMs, om.ExpireTimestampMs
	return Record{Key: offsetCommitKey(group, tp), Value: v.AppendTo(nil)}
}

// OffsetCommitTombstone deletes a commit.
func OffsetCommitTombstone(group string, tp TopicPartition) Record {
	return Record{Key: offsetCommitKey(group, tp)}
}

// GroupMetadataRecord is the record of a group's metadata.
func GroupMetadataRecord(group string, v *kmsg.GroupMetadataValue) Record {
	return Record{Key: groupMetadataKey(group), Value: v.AppendTo(nil)}
}

// GroupMetadataTombstone deletes a group's metadata.
func GroupMetadataTombstone(group string) Record { return Record{Key: groupMetadataKey(group)} }

func offsetCommitKey(group string, tp TopicPartition) []byte {
	k := kmsg.OffsetCommitKey{Version: offsetCommitKeyVersion, Group: group, Topic: tp.Topic, Partition: tp.Partition}
	return k.AppendTo(nil)
}

func groupMetadataKey(group string) []byte {
	k := kmsg.GroupMetadataKey{Version: groupMetadataKeyVersion, Group: group}
	return k.AppendTo(nil)
}

// KeyKind is what a __consumer_offsets key names.
type KeyKind uint8

// Key kinds.
const (
	// KeyUnknown: a key version this coordinator does not know (Kafka
	// ignores such records with a warning).
	KeyUnknown KeyKind = iota
	// KeyOffset: an offset commit of (Group, TopicPartition).
	KeyOffset
	// KeyGroup: the metadata of Group.
	KeyGroup
)

// Key is a decoded __consumer_offsets key.
type Key struct {
	Kind    KeyKind
	Version int16
	Group   string
	TopicPartition
}

// DecodeKey decodes a record key.
func DecodeKey(b []byte) (Key, error) {
	if len(b) < 2 {
		return Key{}, fmt.Errorf("%w: key of %d bytes", ErrBadRecord, len(b))
	}
	version := int16(binary.BigEndian.Uint16(b))
	switch version {
	case 0, 1:
		var k kmsg.OffsetCommitKey
		if err := k.ReadFrom(b); err != nil {
			return Key{}, fmt.Errorf("%w: offset commit key: %w", ErrBadRecord, err)
		}
		return Key{Kind: KeyOffset, Version: version, Group: k.Group, TopicPartition: TopicPartition{k.Topic, k.Partition}}, nil
	case 2:
		var k kmsg.GroupMetadataKey
		if err := k.ReadFrom(b); err != nil {
			return Key{}, fmt.Errorf("%w: group metadata key: %w", ErrBadRecord, err)
		}
		return Key{Kind: KeyGroup, Version: version, Group: k.Group}, nil
	}
	return Key{Kind: KeyUnknown, Version: version}, nil
}

// DecodeOffsetValue decodes an offset commit value (versions 0-4).
func DecodeOffsetValue(b []byte) (OffsetAndMetadata, error) {
	var v kmsg.OffsetCommitValue
	if err := v.ReadFrom(b); err != nil {
		return OffsetAndMetadata{}, fmt.Errorf("%w: offset commit value: %w", ErrBadRecord, err)
	}
	if v.Version < 0 || v.Version > 4 {
		return OffsetAndMetadata{}, fmt.Errorf("%w: offset commit value version %d", ErrBadRecord, v.Version)
	}
	om := OffsetAndMetadata{
		Offset: v.Offset, LeaderEpoch: -1, Metadata: v.Metadata, CommitTimestampMs: v.CommitTimestamp, ExpireTimestampMs: -1,
	}
	if v.Version >= 3 {
		om.LeaderEpoch = v.LeaderEpoch
	}
	if v.Version == 1 {
		om.ExpireTimestampMs = v.ExpireTimestamp
	}
	return om, nil
}

// DecodeGroupValue decodes a group metadata value (versions 0-4).
func DecodeGroupValue(b []byte) (*kmsg.GroupMetadataValue, error) {
	v := new(kmsg.GroupMetadataValue)
	v.Default()
	if err := v.ReadFrom(b); err != nil {
		return nil, fmt.Errorf("%w: group metadata value: %w", ErrBadRecord, err)
	}
	if v.Version < 0 || v.Version > 4 {
		return nil, fmt.Errorf("%w: group metadata value version %d", ErrBadRecord, v.Version)
	}
	return v, nil
}

// PartitionFor returns the __consumer_offsets partition of a group: Kafka's
// Utils.abs(groupId.hashCode) % numPartitions, where hashCode is Java's
// String.hashCode over UTF-16 code units and abs maps math.MinInt32 to 0.
// (A group id that is not valid UTF-8 hashes as Go decodes it, one U+FFFD
// per bad byte, which may differ from Java's decoder.)
func PartitionFor(groupID string, numPartitions int32) int32 {
	if numPartitions <= 0 {
		return 0
	}
	return javaAbs(javaStringHashCode(groupID)) % numPartitions
}

// javaStringHashCode is java.lang.String.hashCode.
func javaStringHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r1, r2 := utf16.EncodeRune(r); r1 != '\uFFFD' || r2 != '\uFFFD' {
			h = 31*h + r1
			h = 31*h + r2
			continue
		}
		h = 31*h + r
	}
	return h
}

// javaAbs is Kafka's Utils.abs.
func javaAbs(n int32) int32 {
	if n == math.MinInt32 {
		return 0
	}
	if n < 0 {
		return -n
	}
	return n
}

// Batch encodes the append's records as one uncompressed v2 record batch
// with CreateTime TimestampMs and no producer, as Kafka's coordinator
// writes them (offsets.topic.compression.codec defaults to none).
func (a *Append) Batch() ([]byte, error) {
	recs := make([]kmsg.Record, len(a.Records))
	for i, r := range a.Records {
		recs[i] = kmsg.Record{OffsetDelta: int32(i), Key: r.Key, Value: r.Value}
	}
	b, err := batch.Build(batch.Options{
		ProducerID: batch.NoProducerID, ProducerEpoch: batch.NoProducerEpoch, BaseSequence: batch.NoSequence,
		PartitionLeaderEpoch: batch.NoPartitionLeaderEpoch, BaseTimestamp: a.TimestampMs,
	}, recs)
	if err != nil {
		return nil, fmt.Errorf("group: append %d: %w", a.ID, err)
	}
	return b, nil
}
