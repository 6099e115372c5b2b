package metadata

import (
	"bytes"
	"errors"
	"reflect"
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
