package group

import (
	"errors"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/log/batch"
)

func TestJavaStringHashCode(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int32
	}{
		{"", 0},
		{"a", 97},
		{"Aa", 2112},
		{"BB", 2112},
		{"hello", 99162322},
		{"polygenelubricants", math.MinInt32}, // the classic MIN_VALUE hash
		{"é", 233},
		{"😀", 0xD83D*31 + 0xDE00}, // a surrogate pair counts as two units
		{"\xff", 0xFFFD},          // invalid UTF-8 decodes to U+FFFD
	} {
		if got := javaStringHashCode(tc.s); got != tc.want {
			t.Errorf("hashCode(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

func TestPartitionFor(t *testing.T) {
	for _, tc := range []struct {
		group string
		n     int32
		want  int32
	}{
		{"", 50, 0},
		{"hello", 50, 99162322 % 50},
		{"polygenelubricants", 50, 0}, // Utils.abs(MIN_VALUE) = 0
		{"Aa", 50, 2112 % 50},
		{"a", 1, 0},
		{"x", 0, 0},
	} {
		if got := PartitionFor(tc.group, tc.n); got != tc.want {
			t.Errorf("PartitionFor(%q, %d) = %d, want %d", tc.group, tc.n, got, tc.want)
		}
	}
	// A negative hash: "hello world, how are you" hashes below zero.
	s := "hello world, how are you"
	h := javaStringHashCode(s)
	if h >= 0 {
		t.Fatalf("want a negative hash for %q, got %d", s, h)
	}
	if got := PartitionFor(s, 50); got != (-h)%50 {
		t.Errorf("PartitionFor(%q) = %d, want %d", s, got, (-h)%50)
	}
}

func TestRecordSchemas(t *testing.T) {
	tp := TopicPartition{"orders", 7}
	om := OffsetAndMetadata{Offset: 42, LeaderEpoch: 5, Metadata: "m", CommitTimestampMs: 1000, ExpireTimestampMs: -1}
	rec := OffsetCommitRecord("grp", tp, om)
	// Key version 1: int16 1, then group, topic, partition.
	wantKey := []byte{0, 1, 0, 3, 'g', 'r', 'p', 0, 6, 'o', 'r', 'd', 'e', 'r', 's', 0, 0, 0, 7}
	if string(rec.Key) != string(wantKey) {
		t.Fatalf("offset key = %x, want %x", rec.Key, wantKey)
	}
	if rec.Value[1] != 3 {
		t.Fatalf("offset value version = %d, want 3", rec.Value[1])
	}
	k, err := DecodeKey(rec.Key)
	if err != nil || k.Kind != KeyOffset || k.Group != "grp" || k.TopicPartition != tp {
		t.Fatalf("DecodeKey = %+v, %v", k, err)
	}
	got, err := DecodeOffsetValue(rec.Value)
	if err != nil || got != om {
		t.Fatalf("DecodeOffsetValue = %+v, %v; want %+v", got, err, om)
	}
	// An explicit expiry is written with value version 1, which has no
	// leader epoch.
	om.ExpireTimestampMs = 5000
	rec = OffsetCommitRecord("grp", tp, om)
	got, err = DecodeOffsetValue(rec.Value)
	om.LeaderEpoch = -1
	if err != nil || rec.Value[1] != 1 || got != om {
		t.Fatalf("v1 value = %+v, %v (version %d)", got, err, rec.Value[1])
	}
	// Value version 0 (pre-0.10.1): no epoch, no expiry.
	v0 := kmsg.OffsetCommitValue{Version: 0, Offset: 9, Metadata: "x", CommitTimestamp: 3}
	got, err = DecodeOffsetValue(v0.AppendTo(nil))
	if err != nil || got != (OffsetAndMetadata{Offset: 9, LeaderEpoch: -1, Metadata: "x", CommitTimestampMs: 3, ExpireTimestampMs: -1}) {
		t.Fatalf("v0 value = %+v, %v", got, err)
	}

	gk := GroupMetadataTombstone("grp")
	if string(gk.Key) != string([]byte{0, 2, 0, 3, 'g', 'r', 'p'}) || gk.Value != nil {
		t.Fatalf("group tombstone = %x / %x", gk.Key, gk.Value)
	}
	k, err = DecodeKey(gk.Key)
	if err != nil || k.Kind != KeyGroup || k.Group != "grp" {
		t.Fatalf("DecodeKey(group) = %+v, %v", k, err)
	}
	k, err = DecodeKey([]byte{0, 9, 1, 2})
	if err != nil || k.Kind != KeyUnknown {
		t.Fatalf("unknown key version = %+v, %v", k, err)
	}
	for _, bad := range [][]byte{nil, {0}, {0, 1, 0, 9}, {0, 2, 0xff}} {
		if _, err := DecodeKey(bad); !errors.Is(err, ErrBadRecord) {
			t.Errorf("DecodeKey(%x) = %v, want ErrBadRecord", bad, err)
		}
	}
	for _, bad := range [][]byte{nil, {0, 3, 1}, {0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}} {
		if _, err := DecodeOffsetValue(bad); !errors.Is(err, ErrBadRecord) {
			t.Errorf("DecodeOffsetValue(%x) = %v, want ErrBadRecord", bad, err)
		}
		if _, err := DecodeGroupValue(bad); !errors.Is(err, ErrBadRecord) {
			t.Errorf("DecodeGroupValue(%x) = %v, want ErrBadRecord", bad, err)
		}
	}
}

func TestAppendBatch(t *testing.T) {
	a := &Append{ID: 1, TimestampMs: 777, Records: []Record{
		OffsetCommitRecord("g", TopicPartition{"t", 0}, OffsetAndMetadata{Offset: 1, LeaderEpoch: -1, ExpireTimestampMs: -1}),
		OffsetCommitTombstone("g", TopicPartition{"t", 1}),
	}}
	b, err := a.Batch()
	if err != nil {
		t.Fatal(err)
	}
	h, err := batch.Validate(b)
	if err != nil {
		t.Fatal(err)
	}
	if h.ProducerID != -1 || h.NumRecords != 2 || h.FirstTimestamp != 777 || h.Attributes != 0 {
		t.Fatalf("header = %+v", h)
	}
	recs, err := batch.Records(b, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if recs[1].Value != nil || string(recs[0].Key) != string(a.Records[0].Key) {
		t.Fatalf("records = %+v", recs)
	}
}
