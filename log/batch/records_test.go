package batch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestForEachRecord(t *testing.T) {
	for _, c := range codecs {
		records := testRecords(30)
		b := mustBuild(t, Options{Codec: c.codec}, records)
		i := 0
		err := ForEachRecord(b, 1<<20, func(r *kmsg.Record) error {
			if err := sameRecord(r, &records[i]); err != nil {
				t.Fatalf("%s: record %d: %v", c.name, i, err)
			}
			i++
			return nil
		})
		if err != nil || i != len(records) {
			t.Fatalf("%s: %d records, %v", c.name, i, err)
		}
		stop := errors.New("stop")
		err = ForEachRecord(b, 1<<20, func(*kmsg.Record) error { return stop })
		if err != stop {
			t.Fatalf("%s: fn's error came back as %v", c.name, err)
		}
	}
}

// TestForEachRecordAllocs checks that ForEachRecord reuses its record: only
// header keys, which kmsg copies into strings, allocate per record.
func TestForEachRecordAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	records := testRecords(100)
	headers := 0
	for i := range records {
		for _, h := range records[i].Headers {
			if h.Key != "" {
				headers++
			}
		}
	}
	b := mustBuild(t, Options{}, records)
	fn := func(*kmsg.Record) error { return nil }
	// The record's Headers slice grows to the largest header count.
	if n := testing.AllocsPerRun(50, func() {
		if err := ForEachRecord(b, 1<<20, fn); err != nil {
			t.Fatal(err)
		}
	}); n > float64(headers+5) {
		t.Fatalf("ForEachRecord allocates %v times for 100 records with %d header keys", n, headers)
	}
	for i := range records {
		records[i].Headers = nil
	}
	b = mustBuild(t, Options{}, records)
	if n := testing.AllocsPerRun(50, func() {
		if err := ForEachRecord(b, 1<<20, fn); err != nil {
			t.Fatal(err)
		}
	}); n > 1 { // the record passed to fn escapes
		t.Fatalf("ForEachRecord allocates %v times for 100 records without headers", n)
	}
}

func TestRecordsLimit(t *testing.T) {
	records := []kmsg.Record{{Value: bytes.Repeat([]byte("z"), 100_000)}}
	for _, c := range codecs[1:] {
		b := mustBuild(t, Options{Codec: c.codec}, records)
		if _, err := Records(b, 100_100); err != nil {
			t.Fatalf("%s: under the limit: %v", c.name, err)
		}
		_, err := Records(b, 100_000)
		wantErr(t, err, ErrCorrupt)
	}
}

// section returns b's uncompressed records section for editing; reseal puts
// an edited section back with consistent Length and CRC.
func section(b []byte) []byte { return bytes.Clone(b[HeaderSize:]) }

func reseal(b, records []byte, numRecords int32) []byte {
	out := append(bytes.Clone(b[:HeaderSize]), records...)
	binary.BigEndian.PutUint32(out[offLength:], uint32(len(out)-LengthPrefix))
	binary.BigEndian.PutUint32(out[offNumRecords:], uint32(numRecords))
	SetCRC(out)
	return out
}

// TestRecordsCorrupt builds batches whose header is consistent (CRC and
// length fixed up) but whose records are not.
func TestRecordsCorrupt(t *testing.T) {
	good := mustBuild(t, Options{}, testRecords(4)) // offset deltas 0, 2, 4, 6
	one := mustBuild(t, Options{}, []kmsg.Record{{Key: []byte("k"), Value: []byte("v")}})
	recs := section(good)
	body := section(one)[1:] // the record after its length prefix

	cases := map[string]struct {
		batch []byte
		want  string
	}{
		"one record too many":     {reseal(good, recs, 5), "record 4 of 5"},
		"one record too few":      {reseal(good, recs, 3), "trail"},
		"far too many records":    {reseal(good, recs, 1<<30), "cannot fit"},
		"trailing byte":           {reseal(good, append(bytes.Clone(recs), 0), 4), "trail"},
		"cut inside a record":     {reseal(good, recs[:len(recs)-2], 4), "record 3 of 4"},
		"length past the end":     {reseal(one, append([]byte{100}, body...), 1), "length prefix 50"},
		"negative length":         {reseal(one, append([]byte{1}, body...), 1), "length prefix -1"},
		"bad length varint":       {reseal(one, bytes.Repeat([]byte{0xff}, 8), 1), "length prefix"},
		"fields shorter than len": {reseal(one, append(append([]byte{byte(2 * (len(body) + 1))}, body...), 0), 1), "fields take"},
		"fields longer than len":  {reseal(one, append([]byte{byte(2 * (len(body) - 1))}, body...), 1), "past the end"},
		"offset delta past last": {func() []byte {
			b := bytes.Clone(good)
			binary.BigEndian.PutUint32(b[offLastOffsetDelta:], 5)
			SetCRC(b)
			return b
		}(), "offset delta 6 outside [0, 5]"},
		"negative offset delta": {reseal(one, rawRecord(0, 1, nil, nil, 0), 1), "offset delta -1"},
		"negative header count": {reseal(one, rawRecord(0, 0, nil, nil, -1), 1), "header count -1"},
		"header count past end": {reseal(one, rawRecord(0, 0, nil, nil, 3), 1), "header count 3"},
		"null header key":       {reseal(one, rawRecord(0, 0, nil, []byte{1, 0}, 1), 1), "header key: null"},
		"key overruns":          {reseal(one, rawRecord(0, 0, []byte{20, 'a'}, nil, 0), 1), "key: overruns"},
	}
	for name, c := range cases {
		_, err := Records(c.batch, 1<<20)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want ErrCorrupt mentioning %q", name, err, c.want)
		}
		if err := ForEachRecord(c.batch, 1<<20, func(*kmsg.Record) error { return nil }); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: ForEachRecord error %v", name, err)
		}
	}
}

// rawRecord encodes one record by hand, with its length prefix: zero
// attributes and timestamp delta, the zigzag offset delta given as a raw
// varint byte, a null value, then key (raw bytes, length included, null if
// nil), a header count and the raw header bytes.
func rawRecord(tsDelta, offsetDeltaZigzag byte, key, headers []byte, headerCount int) []byte {
	body := []byte{0, tsDelta, offsetDeltaZigzag}
	if key == nil {
		key = []byte{1} // varint -1
	}
	body = append(body, key...)
	body = append(body, 1) // null value
	body = binary.AppendVarint(body, int64(headerCount))
	body = append(body, headers...)
	return append(binary.AppendVarint(nil, int64(len(body))), body...)
}

func TestRecordsCorruptCompressed(t *testing.T) {
	for _, c := range codecs[1:] {
		b := mustBuild(t, Options{Codec: c.codec}, testRecords(5))
		bad := reseal(b, bytes.Repeat([]byte{0xaa}, 40), 5)
		_, err := Records(bad, 1<<20)
		wantErr(t, err, ErrCorrupt)
	}
}

func TestSplit(t *testing.T) {
	var bufs [][]byte
	var all []byte
	for i, c := range codecs {
		b := mustBuild(t, Options{Codec: c.codec, BaseOffset: int64(100 * i)}, testRecords(i+1))
		bufs = append(bufs, b)
		all = append(all, b...)
	}
	got, err := Split(all)
	if err != nil || len(got) != len(bufs) {
		t.Fatalf("Split: %d batches, %v", len(got), err)
	}
	for i := range got {
		if !bytes.Equal(got[i], bufs[i]) || cap(got[i]) != len(got[i]) {
			t.Fatalf("batch %d differs or has spare capacity", i)
		}
		if _, err := Validate(got[i]); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
	}
	if got, err := Split(nil); err != nil || len(got) != 0 {
		t.Fatalf("Split(nil): %d, %v", len(got), err)
	}

	end1 := len(bufs[0])
	got, err = Split(all[:end1+30])
	wantErr(t, err, ErrTruncated)
	if len(got) != 1 || !strings.Contains(err.Error(), "byte 61") && !strings.Contains(err.Error(), "at byte") {
		t.Fatalf("truncated: %d batches, %v", len(got), err)
	}
	got, err = Split(all[:end1+5])
	wantErr(t, err, ErrTruncated)
	if len(got) != 1 {
		t.Fatalf("cut in the length prefix: %d batches", len(got))
	}

	bad := bytes.Clone(all)
	binary.BigEndian.PutUint32(bad[end1+offLength:], 3)
	got, err = Split(bad)
	wantErr(t, err, ErrCorrupt)
	if len(got) != 1 || !strings.Contains(err.Error(), "batch at byte ") {
		t.Fatalf("bad length: %d batches, %v", len(got), err)
	}
}
