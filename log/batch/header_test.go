package batch

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestParseHeaderMatchesKmsg checks the allocation-free ParseHeader against
// kmsg's decoding of the whole batch.
func TestParseHeaderMatchesKmsg(t *testing.T) {
	for _, c := range codecs {
		opts := Options{Codec: c.codec, ProducerID: 12, ProducerEpoch: 3, BaseSequence: 77, Transactional: true,
			PartitionLeaderEpoch: 9, BaseOffset: 123456, BaseTimestamp: 42}
		b := mustBuild(t, opts, testRecords(10))
		var want kmsg.RecordBatch
		if err := want.ReadFrom(b); err != nil {
			t.Fatal(err)
		}
		got, err := ParseHeader(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: ParseHeader %+v\nkmsg %+v", c.name, got, want)
		}
		// Records holds what is present, capped at the batch's end.
		got, err = ParseHeader(append(b[:len(b)-5:len(b)-5], 1, 2, 3))
		if err != nil || len(got.Records) != len(b)-HeaderSize-2 {
			t.Fatalf("%s: short buffer: %d record bytes, %v", c.name, len(got.Records), err)
		}
	}
}

func TestValidateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	b := mustBuild(t, Options{Codec: CodecZstd}, testRecords(50))
	if n := testing.AllocsPerRun(100, func() {
		if _, err := Validate(b); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("Validate allocates %v times per call", n)
	}
}

// TestCRCFlip flips every bit the CRC covers, each alone, and checks that
// Validate and Records reject the batch; the fields before the CRC may
// change freely.
func TestCRCFlip(t *testing.T) {
	for _, c := range codecs {
		b := mustBuild(t, Options{Codec: c.codec}, testRecords(5))
		for i := offAttributes; i < len(b); i++ {
			for bit := range 8 {
				b[i] ^= 1 << bit
				_, err := Validate(b)
				wantErr(t, err, ErrCorrupt)
				_, err = Records(b, 1<<20)
				wantErr(t, err, ErrCorrupt)
				b[i] ^= 1 << bit
			}
		}
		for i := offCRC; i < offAttributes; i++ {
			b[i] ^= 0x10
			_, err := Validate(b)
			wantErr(t, err, ErrCorrupt)
			b[i] ^= 0x10
		}
		SetBaseOffset(b, 1<<50)
		SetPartitionLeaderEpoch(b, 77)
		if _, err := Validate(b); err != nil {
			t.Fatalf("%s: after setting the base offset and epoch: %v", c.name, err)
		}
	}
}

// TestTruncated checks every proper prefix of a batch.
func TestTruncated(t *testing.T) {
	b := mustBuild(t, Options{Codec: CodecGzip}, testRecords(5))
	for n := range len(b) {
		_, err := Validate(b[:n])
		wantErr(t, err, ErrTruncated)
		_, err = Records(b[:n], 1<<20)
		wantErr(t, err, ErrTruncated)
		if n >= HeaderSize {
			if _, err := ParseHeader(b[:n]); err != nil {
				t.Fatalf("ParseHeader of %d bytes: %v", n, err)
			}
		} else {
			_, err := ParseHeader(b[:n])
			wantErr(t, err, ErrTruncated)
		}
	}
	_, err := Validate(append(bytes.Clone(b), 0))
	wantErr(t, err, ErrCorrupt)
}

// legacyMessage encodes a v0 or v1 message (an old MessageSet entry).
func legacyMessage(magic int8, key, value []byte) []byte {
	m := kmsg.MessageV1{Magic: magic, Key: key, Value: value}
	if magic == 0 {
		v0 := kmsg.MessageV0{Magic: 0, Key: key, Value: value}
		v0.MessageSize = int32(len(v0.AppendTo(nil)) - 12)
		return v0.AppendTo(nil)
	}
	m.MessageSize = int32(len(m.AppendTo(nil)) - 12)
	return m.AppendTo(nil)
}

func TestLegacyMagic(t *testing.T) {
	for _, magic := range []int8{0, 1} {
		for _, value := range [][]byte{nil, []byte("v"), bytes.Repeat([]byte("x"), 100)} {
			m := legacyMessage(magic, []byte("k"), value)
			_, err := Validate(m)
			wantErr(t, err, ErrUnsupportedMagic)
			_, err = Records(m, 1<<20)
			wantErr(t, err, ErrUnsupportedMagic)
		}
	}
	b := mustBuild(t, Options{}, testRecords(1))
	b[offMagic] = 3
	_, err := Validate(b)
	wantErr(t, err, ErrUnsupportedMagic)
}

func TestValidateHeaderFields(t *testing.T) {
	b := mustBuild(t, Options{}, testRecords(3))
	cases := map[string]func(b []byte){
		"codec 5":                    func(b []byte) { b[offAttributes+1] |= 5 },
		"negative last offset delta": func(b []byte) { binary.BigEndian.PutUint32(b[offLastOffsetDelta:], 1<<31) },
		"negative record count":      func(b []byte) { binary.BigEndian.PutUint32(b[offNumRecords:], 1<<31) },
	}
	for name, mutate := range cases {
		bad := bytes.Clone(b)
		mutate(bad)
		SetCRC(bad)
		_, err := Validate(bad)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		wantErr(t, err, ErrCorrupt)
	}
}

func TestSize(t *testing.T) {
	b := mustBuild(t, Options{}, testRecords(3))
	if n, err := Size(b[:LengthPrefix]); err != nil || n != len(b) {
		t.Fatalf("Size %d, %v, want %d", n, err, len(b))
	}
	_, err := Size(b[:LengthPrefix-1])
	wantErr(t, err, ErrTruncated)
	for _, length := range []uint32{0, minLength - 1, 1 << 31, 0xffffffff, maxLength + 1} {
		bad := bytes.Clone(b)
		binary.BigEndian.PutUint32(bad[offLength:], length)
		_, err := Size(bad)
		wantErr(t, err, ErrCorrupt)
	}
}

// TestValidateShape checks that ValidateShape accepts a batch whose CRC is
// wrong and still rejects what is malformed.
func TestValidateShape(t *testing.T) {
	good := mustBuild(t, Options{}, testRecords(3))
	bad := append([]byte(nil), good...)
	bad[len(bad)-1] ^= 0xff
	if _, err := Validate(bad); err == nil {
		t.Fatal("Validate accepted a bad CRC")
	}
	if _, err := ValidateShape(bad); err != nil {
		t.Fatalf("ValidateShape: %v", err)
	}
	if _, err := ValidateShape(bad[:len(bad)-1]); err == nil {
		t.Fatal("ValidateShape accepted a truncated batch")
	}
}
