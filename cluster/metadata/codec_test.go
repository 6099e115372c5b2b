package metadata

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"testing"
)

func TestRecordRoundTrip(t *testing.T) {
	seen := map[recordType]bool{}
	for _, rec := range sampleRecords() {
		t.Run(rec.String(), func(t *testing.T) {
			b, err := EncodeRecord(rec)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeRecord(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, rec) {
				t.Fatalf("round trip:\n got %#v\nwant %#v", got, rec)
			}
			again, _ := EncodeRecord(got)
			if !bytes.Equal(again, b) {
				t.Fatalf("encoding is not deterministic: %x vs %x", again, b)
			}
		})
		seen[rec.recordType()] = true
	}
	for typ, c := range recordCodecs {
		if !seen[typ] {
			t.Errorf("no sample record of type %s", c.name)
		}
	}
}

func TestRecordNilSlicesSurvive(t *testing.T) {
	// nil means "no change" in PartitionChangeRecord.ISR and must not come
	// back as an empty slice, nor an empty one as nil.
	for _, isr := range [][]int32{nil, {}} {
		b, err := EncodeRecord(PartitionChangeRecord{TopicID: uuidN(1), Leader: 1, ISR: isr})
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		if gotISR := got.(PartitionChangeRecord).ISR; (gotISR == nil) != (isr == nil) {
			t.Errorf("ISR %#v decoded as %#v", isr, gotISR)
		}
	}
}

func TestEncodeRejectsNonValues(t *testing.T) {
	if _, err := EncodeRecord(nil); !errors.Is(err, ErrUnknownRecordType) {
		t.Errorf("nil: %v", err)
	}
	if _, err := EncodeRecord(&TopicRecord{Name: "x", TopicID: uuidN(1)}); !errors.Is(err, ErrUnknownRecordType) {
		t.Errorf("pointer: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	valid, err := EncodeRecord(PartitionRecord{TopicID: uuidN(1), Replicas: []int32{1}, ISR: []int32{1}, Leader: 1})
	if err != nil {
		t.Fatal(err)
	}
	header := func(typ, version byte, payload ...byte) []byte {
		return append([]byte{envelopeHeader, typ, version}, payload...)
	}
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrMalformedRecord},
		{"not an envelope", []byte{0x92, 1, 0}, ErrMalformedRecord},
		{"header only", header(byte(typeTopic), 0), ErrMalformedRecord},
		{"unknown type", header(0x7f, 0, 0x91, 0x01), ErrUnknownRecordType},
		{"type zero", header(0, 0, 0x91, 0x01), ErrUnknownRecordType},
		{"newer version", header(byte(typeTopic), 1, 0x92, 0xa1, 'x', 0xc4, 0), ErrUnsupportedVersion},
		{"truncated", valid[:len(valid)-1], ErrMalformedRecord},
		{"trailing byte", append(bytes.Clone(valid), 0x00), ErrMalformedRecord},
		{"payload is a map", header(byte(typeTopicRemoved), 0, 0x81, 0xa1, 'x', 0x01), ErrMalformedRecord},
		{"payload is an empty array", header(byte(typeTopicRemoved), 0, 0x90), ErrMalformedRecord},
		{"payload is nil", header(byte(typeTopicRemoved), 0, 0xc0), ErrMalformedRecord},
		{"too few fields", header(byte(typeBrokerFenced), 0, 0x91, 0x01), ErrMalformedRecord},
		{"too many fields", header(byte(typeBrokerFenced), 0, 0x93, 0x01, 0x01, 0x01), ErrMalformedRecord},
		{"wrong field type", header(byte(typeBrokerFenced), 0, 0x92, 0xa1, 'x', 0x01), ErrMalformedRecord},
		{"uuid too long", header(byte(typeTopicRemoved), 0, append([]byte{0x91, 0xc4, 17}, make([]byte, 17)...)...), ErrMalformedRecord},
		{"huge array claim", header(byte(typePartitionChange), 0, 0x94, 0xc4, 0, 0x00, 0x00, 0xdd, 0xff, 0xff, 0xff, 0xff), ErrMalformedRecord},
		{"huge string claim", header(byte(typeClusterCreated), 0, 0x91, 0xdb, 0xff, 0xff, 0xff, 0xff, 'a'), ErrMalformedRecord},
		{"deep nesting", header(byte(typeClusterCreated), 0, 0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x01), ErrMalformedRecord},
		{"extension value", header(byte(typeClusterCreated), 0, 0x91, 0xd4, 0x01, 0x00), ErrMalformedRecord},
		{"float value", header(byte(typeBrokerFenced), 0, 0x92, 0xca, 0, 0, 0, 0, 0x01), ErrMalformedRecord},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := DecodeRecord(tt.in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("DecodeRecord(%x) = %v, %v; want %v", tt.in, rec, err, tt.want)
			}
		})
	}
}

// A BrokerRegistration of version 0 (before RegisteredAt) still decodes,
// with RegisteredAt 0.
func TestBrokerRegistrationV0(t *testing.T) {
	v0 := brokerRegistrationV0{NodeID: 3, BrokerEpoch: 42, IncarnationID: uuidN(3), Host: "h", Port: 9092, ActorAddress: "a", Rack: "r"}
	b, err := encodeMessage(uint8(typeBrokerRegistration), 0, v0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	want := BrokerRegistrationRecord{NodeID: 3, BrokerEpoch: 42, IncarnationID: uuidN(3), Host: "h", Port: 9092, ActorAddress: "a", Rack: "r"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
	if _, err := DecodeRecord(append([]byte{envelopeHeader, byte(typeBrokerRegistration), 2}, b[3:]...)); !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("version 2: %v", err)
	}
	// Version 1 holds eight fields, version 0 seven: neither reads the other.
	cur, _ := EncodeRecord(want)
	if _, err := DecodeRecord(append([]byte{envelopeHeader, byte(typeBrokerRegistration), 0}, cur[3:]...)); !errors.Is(err, ErrMalformedRecord) {
		t.Errorf("version 1 bytes as version 0: %v", err)
	}
}

// Partition and PartitionChange records of version 0 (before ELR and
// LastKnownELR) still decode: a partition with neither, a change that
// keeps them.
func TestPartitionRecordsV0(t *testing.T) {
	for _, tc := range []struct {
		typ  recordType
		v0   any
		want Record
	}{
		{typePartition,
			partitionV0{TopicID: uuidN(1), Partition: 2, Replicas: []int32{1, 2}, ISR: []int32{2}, Leader: 2, LeaderEpoch: 3, PartitionEpoch: 4},
			PartitionRecord{TopicID: uuidN(1), Partition: 2, Replicas: []int32{1, 2}, ISR: []int32{2}, Leader: 2, LeaderEpoch: 3, PartitionEpoch: 4}},
		{typePartitionChange,
			partitionChangeV0{TopicID: uuidN(1), Partition: 2, Leader: LeaderNoChange, ISR: []int32{1}},
			PartitionChangeRecord{TopicID: uuidN(1), Partition: 2, Leader: LeaderNoChange, ISR: []int32{1}}},
	} {
		b, err := encodeMessage(uint8(tc.typ), 0, tc.v0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("got %#v, want %#v", got, tc.want)
		}
		// The current version's bytes are not read as version 0.
		cur, _ := EncodeRecord(tc.want)
		if _, err := DecodeRecord(append([]byte{envelopeHeader, byte(tc.typ), 0}, cur[3:]...)); !errors.Is(err, ErrMalformedRecord) {
			t.Errorf("%T: version 1 bytes as version 0: %v", tc.want, err)
		}
	}
	// A version 0 change applies as before: the ELR it leaves alone stays.
	img := withTopic(t, threeBrokers(t), "orders", 1, 1, 3)
	p := ordersP0(t, img)
	img = applyAll(t, img, PartitionChangeRecord{TopicID: uuidN(1), Leader: LeaderNoChange, ISR: p.Replicas[:1], ELR: p.Replicas[1:2]})
	b, _ := encodeMessage(uint8(typePartitionChange), 0, partitionChangeV0{TopicID: uuidN(1), Leader: NoLeader})
	rec, err := DecodeRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	img = applyAll(t, img, rec)
	if got := ordersP0(t, img); got.HasLeader() || !slices.Equal(got.ELR, p.Replicas[1:2]) {
		t.Errorf("after a version 0 change: %+v", got)
	}
}

// A snapshot keeps the offset of every broker's registration.
func TestSnapshotKeepsRegisteredAt(t *testing.T) {
	img := threeBrokers(t) // brokers registered at offsets 2, 4, 6
	img = withTopic(t, img, "orders", 1, 3, 3)
	want := map[int32]int64{1: 2, 2: 4, 3: 6}
	restored, err := Restore(img.Records(), img.Offset())
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range []*Image{img, restored} {
		for _, br := range im.Brokers() {
			if br.RegisteredAt != want[br.NodeID] {
				t.Errorf("broker %d registered at %d, want %d", br.NodeID, br.RegisteredAt, want[br.NodeID])
			}
		}
	}
	if !restored.Equal(img) {
		t.Error("restored image differs")
	}
	// A snapshot record cannot claim a registration after its offset, nor
	// before offset 0.
	for _, at := range []int64{img.Offset() + 2, -1} {
		bad := registration(4, 100)
		bad.RegisteredAt = at
		if _, err := img.Apply(bad, img.Offset()+1); !errors.Is(err, ErrInvalidRecord) {
			t.Errorf("registered at %d: %v", at, err)
		}
	}
	// The same facts give the same snapshot records at any offset.
	later := applyAll(t, img, TopicRecord{Name: "later", TopicID: uuidN(5)})
	if got, want := later.Records()[2], img.Records()[2]; !reflect.DeepEqual(got, want) {
		t.Errorf("registration in a later snapshot %v, want %v", got, want)
	}
}
