package partition

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/log/batch"
)

// pb is a batch of count records from pid at epoch, sequences from first,
// appended at offset.
func pb(pid int64, epoch int16, first int32, count int32, offset int64) ProducerBatch {
	return BatchFromHeader(kmsg.RecordBatch{
		ProducerID: pid, ProducerEpoch: epoch, FirstSequence: first, LastOffsetDelta: count - 1,
		NumRecords: count, FirstOffset: offset, MaxTimestamp: 1000 + offset,
	})
}

// stateOf builds a state by updating it with batches.
func stateOf(batches ...ProducerBatch) *ProducerState {
	s := NewProducerState()
	for _, b := range batches {
		s.Update(b)
	}
	return s
}

func TestCheckAppend(t *testing.T) {
	five := []ProducerBatch{pb(7, 0, 0, 2, 0), pb(7, 0, 2, 2, 2), pb(7, 0, 4, 2, 4), pb(7, 0, 6, 2, 6), pb(7, 0, 8, 2, 8)}
	six := append(append([]ProducerBatch{}, five...), pb(7, 0, 10, 2, 10))
	tests := []struct {
		name     string
		state    []ProducerBatch
		check    ProducerBatch
		want     Verdict
		original BatchMetadata
	}{
		{"unknown pid, sequence 0", nil, pb(7, 0, 0, 1, 0), Accept, BatchMetadata{}},
		{"unknown pid, any sequence (KIP-360)", nil, pb(7, 3, 42, 1, 0), Accept, BatchMetadata{}},
		{"next in sequence", five[:1], pb(7, 0, 2, 3, 0), Accept, BatchMetadata{}},
		{"gap", five[:1], pb(7, 0, 3, 1, 0), OutOfOrderSequence, BatchMetadata{}},
		{"sequence 0 again with another length", five[:1], pb(7, 0, 0, 1, 0), OutOfOrderSequence, BatchMetadata{}},
		{"duplicate of the last batch", five[:2], pb(7, 0, 2, 2, 99), Duplicate,
			BatchMetadata{FirstSeq: 2, LastSeq: 3, FirstOffset: 2, LastOffset: 3, Timestamp: 1002}},
		{"duplicate of the oldest of five", five, pb(7, 0, 0, 2, 99), Duplicate,
			BatchMetadata{FirstSeq: 0, LastSeq: 1, FirstOffset: 0, LastOffset: 1, Timestamp: 1000}},
		{"sixth-oldest batch is forgotten", six, pb(7, 0, 0, 2, 99), OutOfOrderSequence, BatchMetadata{}},
		{"second-oldest of six is retained", six, pb(7, 0, 2, 2, 99), Duplicate,
			BatchMetadata{FirstSeq: 2, LastSeq: 3, FirstOffset: 2, LastOffset: 3, Timestamp: 1002}},
		{"lower epoch after a bump", []ProducerBatch{pb(7, 0, 0, 1, 0), pb(7, 1, 0, 1, 1)}, pb(7, 0, 1, 1, 2), InvalidProducerEpoch, BatchMetadata{}},
		{"older epoch", []ProducerBatch{pb(7, 3, 0, 1, 0)}, pb(7, 2, 1, 1, 0), InvalidProducerEpoch, BatchMetadata{}},
		{"older epoch repeating a retained range", []ProducerBatch{pb(7, 3, 0, 1, 0)}, pb(7, 2, 0, 1, 0), InvalidProducerEpoch, BatchMetadata{}},
		{"newer epoch at sequence 0", five[:2], pb(7, 1, 0, 1, 0), Accept, BatchMetadata{}},
		{"newer epoch not at sequence 0", five[:2], pb(7, 1, 4, 1, 0), OutOfOrderSequence, BatchMetadata{}},
		{"wrap from MaxInt32 to 0", []ProducerBatch{pb(7, 0, math.MaxInt32, 1, 0)}, pb(7, 0, 0, 1, 1), Accept, BatchMetadata{}},
		{"no wrap to 1", []ProducerBatch{pb(7, 0, math.MaxInt32, 1, 0)}, pb(7, 0, 1, 1, 1), OutOfOrderSequence, BatchMetadata{}},
		{"batch spanning the wrap", []ProducerBatch{pb(7, 0, math.MaxInt32-1, 3, 0)}, pb(7, 0, 1, 1, 3), Accept, BatchMetadata{}},
		{"duplicate of a batch spanning the wrap", []ProducerBatch{pb(7, 0, math.MaxInt32-1, 3, 0)}, pb(7, 0, math.MaxInt32-1, 3, 9), Duplicate,
			BatchMetadata{FirstSeq: math.MaxInt32 - 1, LastSeq: 0, FirstOffset: 0, LastOffset: 2, Timestamp: 1000}},
		{"other producer unaffected", five, pb(8, 0, 17, 1, 0), Accept, BatchMetadata{}},
		{"epoch bump drops the old epoch's batches", []ProducerBatch{pb(7, 0, 0, 2, 0), pb(7, 1, 0, 1, 2)}, pb(7, 1, 1, 1, 3), Accept, BatchMetadata{}},
		{"marker only: same epoch needs sequence 0", []ProducerBatch{marker(7, 2, 0)}, pb(7, 2, 5, 1, 1), OutOfOrderSequence, BatchMetadata{}},
		{"marker only: same epoch at sequence 0", []ProducerBatch{marker(7, 2, 0)}, pb(7, 2, 0, 1, 1), Accept, BatchMetadata{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := stateOf(tt.state...)
			before := s.Snapshot()
			got := s.CheckAppend(tt.check)
			if got.Verdict != tt.want {
				t.Fatalf("verdict %v (%s), want %v", got.Verdict, got.Reason, tt.want)
			}
			if got.Original != tt.original {
				t.Fatalf("original %+v, want %+v", got.Original, tt.original)
			}
			if (got.Reason != "") != (tt.want.ErrorCode() != 0) {
				t.Fatalf("reason %q for %v", got.Reason, got.Verdict)
			}
			if !bytes.Equal(before, s.Snapshot()) {
				t.Fatal("CheckAppend changed the state")
			}
		})
	}
}

// marker is a control batch (a transaction marker) from pid at epoch.
func marker(pid int64, epoch int16, offset int64) ProducerBatch {
	b := pb(pid, epoch, -1, 1, offset)
	b.Control, b.Transactional = true, true
	return b
}

func TestVerdictErrorCodes(t *testing.T) {
	for v, want := range map[Verdict]int16{Accept: 0, Duplicate: 0, OutOfOrderSequence: 45, InvalidProducerEpoch: 47} {
		if got := v.ErrorCode(); got != want {
			t.Errorf("%v: code %d, want %d", v, got, want)
		}
	}
}

func TestIncrementSequence(t *testing.T) {
	for _, tt := range []struct{ seq, delta, want int32 }{
		{0, 0, 0}, {0, 4, 4}, {math.MaxInt32, 0, math.MaxInt32}, {math.MaxInt32, 1, 0},
		{math.MaxInt32 - 1, 2, 0}, {math.MaxInt32 - 1, 5, 3},
	} {
		if got := incrementSequence(tt.seq, tt.delta); got != tt.want {
			t.Errorf("incrementSequence(%d, %d) = %d, want %d", tt.seq, tt.delta, got, tt.want)
		}
	}
}

func TestUpdateKeepsFiveBatchesAndEndOffset(t *testing.T) {
	s := NewProducerState()
	for i := range int32(8) {
		s.Update(pb(7, 0, i, 1, int64(i)))
	}
	e, _ := s.Entry(7)
	if len(e.Batches) != BatchesToRetain || e.Batches[0].FirstSeq != 3 || e.Batches[4].FirstSeq != 7 {
		t.Fatalf("batches %+v", e.Batches)
	}
	if s.EndOffset() != 8 {
		t.Fatalf("end offset %d", s.EndOffset())
	}
	s.Update(pb(-1, -1, -1, 3, 8)) // not idempotent: only the end offset moves
	if s.EndOffset() != 11 || s.Len() != 1 {
		t.Fatalf("end offset %d, %d producers", s.EndOffset(), s.Len())
	}
}

// buildBatch encodes a real batch for pb's header fields.
func buildBatch(t testing.TB, b ProducerBatch) []byte {
	t.Helper()
	n := int(incrementSequence(0, int32(b.LastOffset-b.FirstOffset))) + 1
	recs := make([]kmsg.Record, n)
	for i := range recs {
		recs[i] = kmsg.Record{OffsetDelta: int32(i), Value: []byte("v")}
	}
	ts := b.MaxTimestamp
	out, err := batch.Build(batch.Options{
		ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch, BaseSequence: b.FirstSeq,
		BaseOffset: b.FirstOffset, Transactional: b.Transactional, Control: b.Control,
		MaxTimestamp: &ts, BaseTimestamp: ts,
	}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReplayEqualsLiveState(t *testing.T) {
	live := NewProducerState()
	var log [][]byte
	offset := int64(0)
	send := func(pid int64, epoch int16, first, count int32) {
		b := pb(pid, epoch, first, count, offset)
		if v := live.CheckAppend(b).Verdict; v != Accept {
			t.Fatalf("pid %d seq %d: %v", pid, first, v)
		}
		live.Update(b)
		log = append(log, buildBatch(t, b))
		offset += int64(count)
	}
	for i := range int32(7) {
		send(1, 0, i*3, 3)
		send(2, 4, i, 1)
	}
	send(3, 0, 100, 2)
	send(1, 1, 0, 2)
	send(-1, -1, -1, 4)
	replayed := NewProducerState()
	for _, raw := range log {
		h, err := batch.Validate(raw)
		if err != nil {
			t.Fatal(err)
		}
		replayed.ObserveBatch(BatchFromHeader(h))
	}
	if !bytes.Equal(live.Snapshot(), replayed.Snapshot()) {
		t.Fatal("replayed state differs from the live state")
	}
	if replayed.EndOffset() != offset {
		t.Fatalf("end offset %d, want %d", replayed.EndOffset(), offset)
	}
}

func TestObserveBatchSkipsChecks(t *testing.T) {
	s := stateOf(pb(7, 3, 0, 1, 0))
	s.ObserveBatch(pb(7, 2, 9, 1, 1)) // replication is authoritative
	e, _ := s.Entry(7)
	if e.Epoch != 2 || len(e.Batches) != 1 || e.Batches[0].FirstSeq != 9 {
		t.Fatalf("entry %+v", e)
	}
}

func TestTransactionsAndMarkers(t *testing.T) {
	s := NewProducerState()
	tx := pb(7, 0, 0, 2, 10)
	tx.Transactional = true
	s.Update(tx)
	tx2 := pb(7, 0, 2, 2, 12)
	tx2.Transactional = true
	s.Update(tx2)
	e, _ := s.Entry(7)
	if e.CurrentTxnFirstOffset != 10 {
		t.Fatalf("txn first offset %d", e.CurrentTxnFirstOffset)
	}
	if gone := s.RemoveExpired(1<<40, 1); len(gone) != 0 {
		t.Fatalf("expired a producer with an open transaction: %v", gone)
	}
	s.ObserveBatch(marker(7, 0, 14))
	e, _ = s.Entry(7)
	if e.CurrentTxnFirstOffset != NoOffset || len(e.Batches) != 2 || s.EndOffset() != 15 {
		t.Fatalf("after marker: %+v end %d", e, s.EndOffset())
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	tx := pb(9, 2, 5, 1, 30)
	tx.Transactional = true
	s := stateOf(pb(1, 0, 0, 1, 0), pb(1, 0, 1, 4, 1), pb(2, 7, math.MaxInt32, 2, 5), tx)
	for i := range int32(6) {
		s.Update(pb(3, 1, i, 1, 40+int64(i)))
	}
	snap := s.Snapshot()
	got := NewProducerState()
	if err := got.LoadSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(snap, got.Snapshot()) || got.EndOffset() != s.EndOffset() || got.Len() != 4 {
		t.Fatal("round trip differs")
	}
	for _, id := range s.ProducerIDs() {
		a, _ := s.Entry(id)
		b, _ := got.Entry(id)
		if a.Epoch != b.Epoch || a.LastTimestamp != b.LastTimestamp || a.CurrentTxnFirstOffset != b.CurrentTxnFirstOffset ||
			a.CoordinatorEpoch != b.CoordinatorEpoch || len(a.Batches) != len(b.Batches) {
			t.Fatalf("producer %d: %+v != %+v", id, a, b)
		}
	}
	if v := got.CheckAppend(pb(1, 0, 1, 4, 0)); v.Verdict != Duplicate || v.Original.FirstOffset != 1 {
		t.Fatalf("duplicate after reload: %+v", v)
	}
	empty := NewProducerState()
	if err := empty.LoadSnapshot(NewProducerState().Snapshot()); err != nil || empty.Len() != 0 {
		t.Fatalf("empty snapshot: %v", err)
	}
}

func TestLoadSnapshotRejectsCorruption(t *testing.T) {
	good := stateOf(pb(1, 0, 0, 1, 0), pb(2, 0, 0, 1, 1)).Snapshot()
	flip := bytes.Clone(good)
	flip[len(flip)-3] ^= 1
	version := bytes.Clone(good)
	version[1] = 9
	for name, b := range map[string][]byte{
		"empty": nil, "truncated": good[:len(good)-1], "bit flip": flip, "version": version,
		"trailing": append(bytes.Clone(good), 0),
	} {
		s := stateOf(pb(5, 0, 0, 1, 0))
		if err := s.LoadSnapshot(b); !errors.Is(err, ErrCorruptSnapshot) {
			t.Errorf("%s: err %v", name, err)
		}
		if s.Len() != 1 {
			t.Errorf("%s: state changed on error", name)
		}
	}
}

func TestRemoveExpired(t *testing.T) {
	const day = 86400000
	s := NewProducerState()
	a := pb(1, 0, 0, 1, 0)
	a.MaxTimestamp = 1000
	b := pb(2, 0, 0, 1, 1)
	b.MaxTimestamp = 5000
	s.Update(a)
	s.Update(b)
	for _, tt := range []struct {
		now  int64
		gone []int64
	}{{1000 + day - 1, nil}, {1000 + day, []int64{1}}, {5000 + day + 7, []int64{2}}} {
		got := s.RemoveExpired(tt.now, day)
		if len(got) != len(tt.gone) || (len(got) > 0 && got[0] != tt.gone[0]) {
			t.Fatalf("at %d removed %v, want %v", tt.now, got, tt.gone)
		}
	}
	if s.Len() != 0 {
		t.Fatalf("%d producers left", s.Len())
	}
	if v := s.CheckAppend(pb(1, 0, 57, 1, 0)); v.Verdict != Accept {
		t.Fatalf("expired producer's next batch: %v", v.Verdict)
	}
}
