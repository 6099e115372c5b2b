package batch

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestBuildRoundTrip builds batches with every codec and header shape, and
// checks that Validate accepts them, the header holds what was asked, and
// Records gives back the records.
func TestBuildRoundTrip(t *testing.T) {
	shapes := map[string]Options{
		"plain": {ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence,
			PartitionLeaderEpoch: NoPartitionLeaderEpoch, BaseOffset: 0, BaseTimestamp: 1_700_000_000_000},
		"transactional": {ProducerID: 7, ProducerEpoch: 3, BaseSequence: 100, Transactional: true,
			PartitionLeaderEpoch: 5, BaseOffset: 1 << 40, BaseTimestamp: 1_700_000_000_000},
		"log append time": {ProducerID: NoProducerID, LogAppendTime: true, BaseOffset: 99,
			BaseTimestamp: 1_600_000_000_000, MaxTimestamp: new(int64(1_800_000_000_000))},
		"delete horizon": {ProducerID: 9, DeleteHorizon: true, BaseTimestamp: 1_900_000_000_000,
			LastOffsetDelta: new(int32(500))},
	}
	for name, opts := range shapes {
		for _, c := range codecs {
			for _, n := range []int{1, 3, 200} {
				opts.Codec = c.codec
				records := testRecords(n)
				b := mustBuild(t, opts, records)
				rb, err := Validate(b)
				if err != nil {
					t.Fatalf("%s/%s/%d: Validate: %v", name, c.name, n, err)
				}
				checkHeader(t, rb, opts, records)
				got, err := Records(b, 1<<20)
				if err != nil {
					t.Fatalf("%s/%s/%d: Records: %v", name, c.name, n, err)
				}
				if len(got) != n {
					t.Fatalf("%s/%s/%d: %d records", name, c.name, n, len(got))
				}
				for i := range got {
					if err := sameRecord(&got[i], &records[i]); err != nil {
						t.Fatalf("%s/%s/%d: record %d: %v", name, c.name, n, i, err)
					}
					want := opts.BaseTimestamp + records[i].TimestampDelta64
					if opts.LogAppendTime {
						want = *opts.MaxTimestamp
					}
					if ts := Timestamp(b, &got[i]); ts != want {
						t.Fatalf("%s/%s/%d: record %d: timestamp %d, want %d", name, c.name, n, i, ts, want)
					}
				}
			}
		}
	}
}

// checkHeader checks the header fields Build sets against opts and records.
func checkHeader(t *testing.T, rb kmsg.RecordBatch, opts Options, records []kmsg.Record) {
	t.Helper()
	wantLOD := records[len(records)-1].OffsetDelta
	if opts.LastOffsetDelta != nil {
		wantLOD = *opts.LastOffsetDelta
	}
	wantMax := opts.BaseTimestamp + records[0].TimestampDelta64
	for i := range records {
		wantMax = max(wantMax, opts.BaseTimestamp+records[i].TimestampDelta64)
	}
	if opts.MaxTimestamp != nil {
		wantMax = *opts.MaxTimestamp
	}
	switch {
	case rb.FirstOffset != opts.BaseOffset:
		t.Errorf("base offset %d, want %d", rb.FirstOffset, opts.BaseOffset)
	case rb.PartitionLeaderEpoch != opts.PartitionLeaderEpoch:
		t.Errorf("leader epoch %d, want %d", rb.PartitionLeaderEpoch, opts.PartitionLeaderEpoch)
	case rb.Attributes != opts.attributes():
		t.Errorf("attributes %#x, want %#x", rb.Attributes, opts.attributes())
	case rb.LastOffsetDelta != wantLOD:
		t.Errorf("last offset delta %d, want %d", rb.LastOffsetDelta, wantLOD)
	case rb.FirstTimestamp != opts.BaseTimestamp:
		t.Errorf("base timestamp %d, want %d", rb.FirstTimestamp, opts.BaseTimestamp)
	case rb.MaxTimestamp != wantMax:
		t.Errorf("max timestamp %d, want %d", rb.MaxTimestamp, wantMax)
	case rb.ProducerID != opts.ProducerID || rb.ProducerEpoch != opts.ProducerEpoch || rb.FirstSequence != opts.BaseSequence:
		t.Errorf("producer %d/%d/%d, want %d/%d/%d", rb.ProducerID, rb.ProducerEpoch, rb.FirstSequence,
			opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence)
	case rb.NumRecords != int32(len(records)):
		t.Errorf("%d records, want %d", rb.NumRecords, len(records))
	case rb.Magic != CurrentMagic:
		t.Errorf("magic %d", rb.Magic)
	}
}

func TestBuildAttributes(t *testing.T) {
	cases := []struct {
		opts Options
		want int16
	}{
		{Options{}, 0},
		{Options{Codec: CodecZstd}, 0x04},
		{Options{LogAppendTime: true}, 0x08},
		{Options{Transactional: true}, 0x10},
		{Options{Control: true, Transactional: true}, 0x30},
		{Options{DeleteHorizon: true, Codec: CodecLz4}, 0x43},
	}
	for _, c := range cases {
		b := mustBuild(t, c.opts, testRecords(1))
		if got := Attributes(b); got != c.want {
			t.Errorf("%+v: attributes %#x, want %#x", c.opts, got, c.want)
		}
	}
}

// TestBuildEmpty builds what Kafka's cleaner keeps of a batch whose records
// were all removed: the header alone, with its codec, last offset delta and
// max timestamp.
func TestBuildEmpty(t *testing.T) {
	for _, c := range codecs {
		opts := Options{Codec: c.codec, ProducerID: 4, LastOffsetDelta: new(int32(9)), MaxTimestamp: new(int64(1234))}
		b := mustBuild(t, opts, nil)
		if len(b) != HeaderSize {
			t.Fatalf("%s: %d bytes, want the bare header", c.name, len(b))
		}
		rb, err := Validate(b)
		if err != nil {
			t.Fatalf("%s: Validate: %v", c.name, err)
		}
		if rb.NumRecords != 0 || rb.LastOffsetDelta != 9 || rb.MaxTimestamp != 1234 || LastOffset(b) != 9 {
			t.Fatalf("%s: header %+v", c.name, rb)
		}
		if rs, err := Records(b, 0); err != nil || len(rs) != 0 {
			t.Fatalf("%s: Records: %d, %v", c.name, len(rs), err)
		}
	}
	b := mustBuild(t, Options{}, nil)
	if MaxTimestamp(b) != NoTimestamp || LastOffsetDelta(b) != 0 {
		t.Fatalf("defaults of an empty batch: max timestamp %d, last offset delta %d", MaxTimestamp(b), LastOffsetDelta(b))
	}
}

// TestBuildCompacted keeps the last offset delta of a batch whose trailing
// records were removed, and leaves the gaps in the offsets.
func TestBuildCompacted(t *testing.T) {
	records := []kmsg.Record{{OffsetDelta: 1, Value: []byte("a")}, {OffsetDelta: 4, Value: []byte("b")}}
	b := mustBuild(t, Options{BaseOffset: 10, LastOffsetDelta: new(int32(7))}, records)
	if LastOffset(b) != 17 || NumRecords(b) != 2 {
		t.Fatalf("last offset %d, %d records", LastOffset(b), NumRecords(b))
	}
	rs, err := Records(b, 100)
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].OffsetDelta != 1 || rs[1].OffsetDelta != 4 {
		t.Fatalf("offset deltas %d, %d", rs[0].OffsetDelta, rs[1].OffsetDelta)
	}
}

func TestBuildRejects(t *testing.T) {
	cases := map[string]struct {
		opts    Options
		records []kmsg.Record
	}{
		"codec 5":               {Options{Codec: 5}, testRecords(1)},
		"negative codec":        {Options{Codec: -1}, testRecords(1)},
		"negative offset delta": {Options{}, []kmsg.Record{{OffsetDelta: -1}}},
		"repeated offset delta": {Options{}, []kmsg.Record{{OffsetDelta: 3}, {OffsetDelta: 3}}},
		"falling offset delta":  {Options{}, []kmsg.Record{{OffsetDelta: 3}, {OffsetDelta: 2}}},
		"last offset delta below the last record": {Options{LastOffsetDelta: new(int32(1))},
			[]kmsg.Record{{OffsetDelta: 0}, {OffsetDelta: 2}}},
	}
	for name, c := range cases {
		if _, err := Build(c.opts, c.records); err == nil {
			t.Errorf("%s: built", name)
		} else {
			wantErr(t, err, ErrBuild)
		}
	}
}

// TestBuildLeavesRecords checks that Build does not write the records'
// Length fields, and honours the legacy int32 timestamp delta.
func TestBuildLeavesRecords(t *testing.T) {
	records := []kmsg.Record{{TimestampDelta: 77, Value: []byte("v")}}
	b := mustBuild(t, Options{BaseTimestamp: 1000}, records)
	if records[0].Length != 0 {
		t.Fatalf("Build set the caller's record length to %d", records[0].Length)
	}
	rs, err := Records(b, 100)
	if err != nil {
		t.Fatal(err)
	}
	if Timestamp(b, &rs[0]) != 1077 || MaxTimestamp(b) != 1077 {
		t.Fatalf("timestamp %d, max %d, want 1077", Timestamp(b, &rs[0]), MaxTimestamp(b))
	}
}

// TestBuildMatchesKmsg checks Build's bytes against kmsg's own encoding of
// the same batch, CRC and lengths computed here.
func TestBuildMatchesKmsg(t *testing.T) {
	records := testRecords(20)
	opts := Options{ProducerID: 3, ProducerEpoch: 1, BaseSequence: 40, BaseOffset: 1000,
		BaseTimestamp: 5000, PartitionLeaderEpoch: 2}
	b := mustBuild(t, opts, records)

	var section []byte
	for _, r := range records {
		body := r.AppendTo(nil) // with Length 0, one byte of prefix
		r.Length = int32(len(body) - 1)
		section = r.AppendTo(section)
	}
	rb := kmsg.RecordBatch{FirstOffset: 1000, Length: int32(49 + len(section)), PartitionLeaderEpoch: 2,
		Magic: 2, LastOffsetDelta: records[19].OffsetDelta, FirstTimestamp: 5000, MaxTimestamp: MaxTimestamp(b),
		ProducerID: 3, ProducerEpoch: 1, FirstSequence: 40, NumRecords: 20, Records: section}
	want := rb.AppendTo(nil)
	SetCRC(want)
	if !bytes.Equal(b, want) {
		t.Fatalf("Build differs from kmsg's encoding:\n got %x\nwant %x", b, want)
	}
}
