package log

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirmq/weir/log/batch"
)

// compactConfig is a compacted log with small segments and a short
// delete.retention.ms.
func compactConfig() Config {
	c := smallConfig()
	c.SegmentBytes = 16 << 10
	c.SegmentIndexBytes = 4096
	c.CleanupCompact, c.CleanupDelete = true, false
	c.DeleteRetentionMs = 1000
	return c
}

// openCleanerManager opens a manager whose offset map has dedupe bytes.
func openCleanerManager(t testing.TB, fsys FS, dir string, clock *testClock, dedupe int) *Manager {
	t.Helper()
	m, err := OpenManager(ManagerConfig{
		Dir: dir, FS: fsys, Now: clock.now, NoBackground: true, Logger: testLogger(t),
		Cleaner: CleanerConfig{DedupeBufferSize: dedupe},
	})
	if err != nil {
		t.Fatalf("open manager: %v", err)
	}
	return m
}

var clTP = TopicPartition{Topic: "compacted", Partition: 0}

func openCleanerLog(t testing.TB, m *Manager, cfg Config) *Log {
	t.Helper()
	l, err := m.OpenLog(clTP, cfg, [16]byte{7})
	if err != nil {
		t.Fatalf("open log: %v", err)
	}
	return l
}

// clKV is one record to append; a nil key or value is null.
type clKV struct{ key, value []byte }

// clRec is a record of the model or of the log.
type clRec struct {
	off   int64
	key   string
	value []byte // nil: tombstone
	ts    int64
	attrs int16 // of its batch, when read
}

// clModel records everything appended, to check the log against.
type clModel struct {
	mu   sync.Mutex
	recs []clRec // in offset order
	at   map[int64]int
}

func (w *clModel) add(r clRec) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.at == nil {
		w.at = make(map[int64]int)
	}
	w.at[r.off] = len(w.recs)
	w.recs = append(w.recs, r)
}

// truncate forgets records at or past end.
func (w *clModel) truncate(end int64) {
	for len(w.recs) > 0 && w.recs[len(w.recs)-1].off >= end {
		delete(w.at, w.recs[len(w.recs)-1].off)
		w.recs = w.recs[:len(w.recs)-1]
	}
}

// latest returns the latest record of each key below limit.
func (w *clModel) latest(limit int64) map[string]clRec {
	out := make(map[string]clRec)
	for _, r := range w.recs {
		if r.off < limit {
			out[r.key] = r
		}
	}
	return out
}

// clBuild builds a batch of kvs with record timestamps ts, ts+1, ...
func clBuild(t testing.TB, opts batch.Options, ts int64, kvs []clKV) []byte {
	t.Helper()
	b, err := clBuildErr(opts, ts, kvs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func clBuildErr(opts batch.Options, ts int64, kvs []clKV) ([]byte, error) {
	recs := make([]kmsg.Record, len(kvs))
	for i, kv := range kvs {
		recs[i] = kmsg.Record{OffsetDelta: int32(i), TimestampDelta64: int64(i), Key: kv.key, Value: kv.value}
	}
	opts.BaseTimestamp = ts
	b, err := batch.Build(opts, recs)
	if err != nil {
		return nil, fmt.Errorf("build batch: %w", err)
	}
	return b, nil
}

// plainOpts are the header fields of a producer that is not idempotent.
func plainOpts(codec int16) batch.Options {
	return batch.Options{
		Codec: codec, ProducerID: batch.NoProducerID, ProducerEpoch: batch.NoProducerEpoch,
		BaseSequence: batch.NoSequence, PartitionLeaderEpoch: batch.NoPartitionLeaderEpoch,
	}
}

// appendKVs appends one batch as leader and records it in the model.
func (w *clModel) appendKVs(t testing.TB, l *Log, opts batch.Options, ts int64, kvs []clKV) AppendResult {
	t.Helper()
	res, err := w.appendKVsErr(l, opts, ts, kvs)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (w *clModel) appendKVsErr(l *Log, opts batch.Options, ts int64, kvs []clKV) (AppendResult, error) {
	b, err := clBuildErr(opts, ts, kvs)
	if err != nil {
		return AppendResult{}, err
	}
	res, err := l.Append(b, AppendOptions{AssignOffsets: true, LeaderEpoch: 1})
	if err != nil {
		return res, fmt.Errorf("append: %w", err)
	}
	for i, kv := range kvs {
		if kv.key != nil {
			w.add(clRec{off: res.FirstOffset + int64(i), key: string(kv.key), value: kv.value, ts: ts + int64(i)})
		}
	}
	return res, nil
}

// appendRandom appends n records over keys keys in batches of 1 to 20, a
// quarter of them compressed, with tombstoneRate of them tombstones.
func (w *clModel) appendRandom(t testing.TB, l *Log, rng *rand.Rand, ts int64, n, keys int, tombstoneRate float64) {
	t.Helper()
	if err := w.appendRandomErr(l, rng, ts, n, keys, tombstoneRate); err != nil {
		t.Fatal(err)
	}
}

func (w *clModel) appendRandomErr(l *Log, rng *rand.Rand, ts int64, n, keys int, tombstoneRate float64) error {
	codecs := []int16{batch.CodecGzip, batch.CodecSnappy, batch.CodecLz4, batch.CodecZstd}
	for done := 0; done < n; {
		kvs := make([]clKV, min(1+rng.IntN(20), n-done))
		for i := range kvs {
			k := fmt.Sprintf("key-%05d", rng.IntN(keys))
			kvs[i].key = []byte(k)
			if rng.Float64() >= tombstoneRate {
				kvs[i].value = fmt.Appendf(nil, "%s=%d", k, rng.Uint64())
			}
		}
		codec := int16(batch.CodecNone)
		if rng.IntN(4) == 0 {
			codec = codecs[rng.IntN(len(codecs))]
		}
		if _, err := w.appendKVsErr(l, plainOpts(codec), ts, kvs); err != nil {
			return err
		}
		done += len(kvs)
	}
	return nil
}

// clReadAll reads the whole log through Read: every served batch must
// validate, and batch and record offsets must strictly ascend.
func clReadAll(t testing.TB, l *Log) ([]clRec, [][]byte) {
	t.Helper()
	var recs []clRec
	var batches [][]byte
	prev := int64(-1)
	for off, end := l.LogStartOffset(), l.LogEndOffset(); off < end; {
		data, err := l.Read(off, ReadOptions{MaxBytes: 64 << 10})
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		if len(data) == 0 {
			break // compaction may leave nothing between off and the end
		}
		bs, err := batch.Split(data)
		if err != nil {
			t.Fatalf("split read at %d: %v", off, err)
		}
		for _, b := range bs {
			if batch.BaseOffset(b) <= prev || batch.BaseOffset(b) < off {
				t.Fatalf("read at %d: batch at %d after offset %d", off, batch.BaseOffset(b), prev)
			}
			rs, err := batch.Records(b, 1<<30)
			if err != nil {
				t.Fatalf("read at %d: served batch at %d fails: %v", off, batch.BaseOffset(b), err)
			}
			for i := range rs {
				o := batch.BaseOffset(b) + int64(rs[i].OffsetDelta)
				if o <= prev {
					t.Fatalf("record offset %d after %d", o, prev)
				}
				prev = o
				recs = append(recs, clRec{off: o, key: string(rs[i].Key), value: rs[i].Value, ts: batch.Timestamp(b, &rs[i]), attrs: batch.Attributes(b)})
			}
			prev = batch.LastOffset(b)
			batches = append(batches, b)
			off = batch.LastOffset(b) + 1
		}
	}
	return recs, batches
}

// clReadAt reads the record at offset through Read.
func clReadAt(t testing.TB, l *Log, off int64) (clRec, bool) {
	t.Helper()
	data, err := l.Read(off, ReadOptions{MaxBytes: 1})
	if err != nil {
		t.Fatalf("read at %d: %v", off, err)
	}
	bs, err := batch.Split(data)
	if err != nil || len(bs) == 0 {
		return clRec{}, false
	}
	rs, err := batch.Records(bs[0], 1<<30)
	if err != nil {
		t.Fatalf("read at %d: %v", off, err)
	}
	for i := range rs {
		if o := batch.BaseOffset(bs[0]) + int64(rs[i].OffsetDelta); o == off {
			return clRec{off: o, key: string(rs[i].Key), value: rs[i].Value, ts: batch.Timestamp(bs[0], &rs[i])}, true
		}
	}
	return clRec{}, false
}

// checkConsistent checks what any state of cleaning must hold: every record
// served is the one appended at its offset, with its timestamp, and for
// every key the newest record served is its latest record (a value readable
// at its original offset, or a tombstone).
func (w *clModel) checkConsistent(t testing.TB, l *Log) []clRec {
	t.Helper()
	got, _ := clReadAll(t, l)
	newest := make(map[string]clRec)
	for _, r := range got {
		if r.attrs&batch.ControlBit != 0 {
			continue // transaction markers are not in the model
		}
		i, ok := w.at[r.off]
		if !ok {
			t.Fatalf("offset %d served, never appended", r.off)
		}
		if want := w.recs[i]; want.key != r.key || !sameValue(want.value, r.value) || want.ts != r.ts {
			t.Fatalf("offset %d: got %q=%q at %d, want %q=%q at %d", r.off, r.key, r.value, r.ts, want.key, want.value, want.ts)
		}
		newest[r.key] = r
	}
	for k, want := range w.latest(1 << 62) {
		if r, ok := newest[k]; want.value != nil && (!ok || r.off != want.off) {
			t.Fatalf("key %s: newest served offset %d (found %v), want %d", k, r.off, ok, want.off)
		}
		if want.value == nil {
			continue
		}
		if r, ok := clReadAt(t, l, want.off); !ok || !bytes.Equal(r.value, want.value) {
			t.Fatalf("key %s: latest value at %d not readable (found %v)", k, want.off, ok)
		}
	}
	return got
}

// checkCleaned checks a fully cleaned log: consistent, and below cleanedTo
// only the latest record of each key as of cleanedTo survives; past it,
// everything does. With tombstonesGone no tombstone survives below
// cleanedTo; otherwise those cleaned for the first time (at or past from)
// survive, and every surviving one is in a batch with a delete horizon.
func (w *clModel) checkCleaned(t testing.TB, l *Log, from, cleanedTo int64, tombstonesGone bool) {
	t.Helper()
	got := w.checkConsistent(t, l)
	below := w.latest(cleanedTo)
	var past int
	for _, r := range got {
		if r.attrs&batch.ControlBit != 0 {
			continue
		}
		if r.off >= cleanedTo {
			past++
			continue
		}
		if below[r.key].off != r.off {
			t.Fatalf("offset %d: older record of %s survives below %d (latest %d)", r.off, r.key, cleanedTo, below[r.key].off)
		}
		if r.value == nil && (tombstonesGone || r.attrs&batch.DeleteHorizonBit == 0) {
			t.Fatalf("offset %d: tombstone of %s in a batch with attributes %#x", r.off, r.key, r.attrs)
		}
	}
	for k, r := range below {
		if r.value == nil && !tombstonesGone && r.off >= from {
			if got, ok := clReadAt(t, l, r.off); !ok || got.value != nil {
				t.Fatalf("key %s: tombstone at %d missing after its first cleaning", k, r.off)
			}
		}
	}
	want := 0
	for _, r := range w.recs {
		if r.off >= cleanedTo {
			want++
		}
	}
	if past != want {
		t.Fatalf("%d records at or past %d, want %d (the dirty range must be untouched)", past, cleanedTo, want)
	}
}

func sameValue(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func TestCleanManyKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		fsys FS
		dir  string
	}{
		{"osfs", OSFS{}, ""},
		{"memfs", NewMemFS(), "/data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir
			if dir == "" {
				dir = t.TempDir()
			}
			testCleanManyKeys(t, tc.fsys, dir)
		})
	}
}

func testCleanManyKeys(t *testing.T, fsys FS, dir string) {
	clock := &testClock{ms: 1_700_000_000_000}
	const dedupe = 40 << 10 // about 1,500 keys: several passes
	m := openCleanerManager(t, fsys, dir, clock, dedupe)
	l := openCleanerLog(t, m, compactConfig())
	var w clModel
	rng := rand.New(rand.NewPCG(1, 2))
	w.appendRandom(t, l, rng, clock.ms, 20_000, 2_000, 0.05)
	before := l.SegmentCount()
	if m.cleaner.offsets != nil {
		t.Fatalf("offset map allocated before the first cleaning")
	}

	st, err := m.CleanLog(clTP)
	if err != nil {
		t.Fatalf("clean: %v", err)
	}
	t.Logf("first clean: %+v; segments %d -> %d", st, before, l.SegmentCount())
	if st.Passes < 2 || st.MapFill < 0.9 {
		t.Fatalf("passes %d, map fill %.2f: want the map to fill and several passes", st.Passes, st.MapFill)
	}
	om := m.cleaner.offsets
	if om.capacity() != newOffsetMap(dedupe, 0.9).capacity() {
		t.Fatalf("offset map capacity %d, want %d", m.cleaner.offsets.capacity(), newOffsetMap(dedupe, 0.9).capacity())
	}
	if st.CleanedTo != l.segs[len(l.segs)-1].base || l.SegmentCount() >= before/2 {
		t.Fatalf("cleaned to %d (active base %d), %d segments of %d", st.CleanedTo, l.segs[len(l.segs)-1].base, l.SegmentCount(), before)
	}
	w.checkCleaned(t, l, 0, st.CleanedTo, false)

	// Tombstones go after delete.retention.ms, at the next cleaning.
	clock.ms += compactConfig().DeleteRetentionMs
	st2, err := m.CleanLog(clTP)
	if err != nil {
		t.Fatalf("second clean: %v", err)
	}
	t.Logf("second clean: %+v", st2)
	if m.cleaner.offsets != om || len(om.slots) != len(newOffsetMap(dedupe, 0.9).slots) {
		t.Fatalf("offset map reallocated or resized")
	}
	if st2.TombstonesRemoved == 0 {
		t.Fatalf("no tombstone removed after the delete horizon")
	}
	w.checkCleaned(t, l, 0, st2.CleanedTo, true)

	// Reopen cleanly, then keep appending and compacting.
	if err := m.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	m = openCleanerManager(t, fsys, dir, clock, dedupe)
	l = openCleanerLog(t, m, compactConfig())
	w.checkCleaned(t, l, 0, st2.CleanedTo, true)
	w.appendRandom(t, l, rng, clock.ms, 5_000, 2_500, 0.05)
	st3, err := m.CleanLog(clTP)
	if err != nil {
		t.Fatalf("clean after reopen: %v", err)
	}
	if st3.CleanedTo <= st2.CleanedTo {
		t.Fatalf("cleaned to %d after reopen, before %d", st3.CleanedTo, st2.CleanedTo)
	}
	w.checkCleaned(t, l, st2.CleanedTo, st3.CleanedTo, false)
	m.Abandon()
	m = openCleanerManager(t, fsys, dir, clock, dedupe)
	l = openCleanerLog(t, m, compactConfig())
	w.checkConsistent(t, l)
	if err := m.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

func TestCleanKeepsBatchMetadata(t *testing.T) {
	clock := &testClock{ms: 1_700_000_000_000}
	m := openCleanerManager(t, NewMemFS(), "/data", clock, 1<<20)
	defer m.Close()
	l := openCleanerLog(t, m, compactConfig())
	var w clModel
	kv := func(keys ...string) []clKV {
		out := make([]clKV, len(keys))
		for i, k := range keys {
			out[i] = clKV{[]byte(k), []byte("value of " + k)}
		}
		return out
	}
	idem := func(pid int64, seq int32, codec int16) batch.Options {
		return batch.Options{Codec: codec, ProducerID: pid, ProducerEpoch: 3, BaseSequence: seq, PartitionLeaderEpoch: -1}
	}
	p1 := w.appendKVs(t, l, idem(7, 0, batch.CodecNone), clock.ms, kv("a", "b"))
	p2 := w.appendKVs(t, l, idem(7, 2, batch.CodecNone), clock.ms, kv("c", "d"))
	u := w.appendKVs(t, l, plainOpts(batch.CodecSnappy), clock.ms, kv("u1", "u2"))
	txOpts := idem(9, 0, batch.CodecZstd)
	txOpts.Transactional = true
	tx := w.appendKVs(t, l, txOpts, clock.ms, kv("e", "f"))
	marker := batch.Options{ProducerID: 9, ProducerEpoch: 3, BaseSequence: -1, PartitionLeaderEpoch: -1, Transactional: true, Control: true}
	mk, err := l.Append(clBuild(t, marker, clock.ms, []clKV{{[]byte{0, 0, 0, 1}, []byte{0, 0, 0, 0, 0, 5}}}), AppendOptions{AssignOffsets: true, LeaderEpoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	partial := w.appendKVs(t, l, idem(11, 0, batch.CodecGzip), clock.ms, append(kv("g", "h", "i"), clKV{nil, []byte("no key")}))
	w.appendKVs(t, l, plainOpts(batch.CodecNone), clock.ms, kv("a", "b", "c", "d", "e", "h"))
	original := map[int64][]byte{}
	_, bs := clReadAll(t, l)
	for _, b := range bs {
		original[batch.BaseOffset(b)] = bytes.Clone(b)
	}
	for i := 0; l.SegmentCount() < 3; i++ {
		w.appendKVs(t, l, plainOpts(batch.CodecNone), clock.ms, kv(fmt.Sprintf("filler-%d-a", i), fmt.Sprintf("filler-%d-b", i)))
	}
	st, err := m.CleanLog(clTP)
	if err != nil {
		t.Fatalf("clean: %v", err)
	}
	w.checkCleaned(t, l, 0, st.CleanedTo, false)
	_, bs = clReadAll(t, l)
	got := map[int64][]byte{}
	for _, b := range bs {
		got[batch.BaseOffset(b)] = b
	}
	if _, ok := got[p1.FirstOffset]; ok {
		t.Fatalf("batch at %d of producer 7, superseded and not its last, survives", p1.FirstOffset)
	}
	// The producer's last batch stays as a bare header.
	h := mustHeader(t, got[p2.FirstOffset])
	if h.NumRecords != 0 || h.ProducerID != 7 || h.ProducerEpoch != 3 || h.FirstSequence != 2 ||
		h.FirstOffset+int64(h.LastOffsetDelta) != p2.LastOffset || h.Attributes&batch.CodecMask != 0 {
		t.Fatalf("producer 7's last batch: %+v, want an empty batch keeping offsets %d-%d and sequence 2", h, p2.FirstOffset, p2.LastOffset)
	}
	for _, off := range []int64{u.FirstOffset, mk.FirstOffset} {
		if !bytes.Equal(got[off], original[off]) {
			t.Fatalf("batch at %d changed, want it copied byte for byte", off)
		}
	}
	h = mustHeader(t, got[tx.FirstOffset])
	if h.NumRecords != 1 || h.ProducerID != 9 || h.Attributes&batch.TransactionalBit == 0 || h.Attributes&batch.CodecMask != batch.CodecZstd ||
		h.LastOffsetDelta != 1 || h.PartitionLeaderEpoch != 1 {
		t.Fatalf("transactional batch: %+v", h)
	}
	h = mustHeader(t, got[partial.FirstOffset])
	orig := mustHeader(t, original[partial.FirstOffset])
	if h.NumRecords != 2 || h.ProducerID != 11 || h.FirstSequence != 0 || h.ProducerEpoch != 3 || h.LastOffsetDelta != orig.LastOffsetDelta ||
		h.Attributes&batch.CodecMask != batch.CodecGzip || h.FirstTimestamp != orig.FirstTimestamp || h.MaxTimestamp != orig.FirstTimestamp+2 {
		t.Fatalf("partly cleaned batch: %+v, was %+v", h, orig)
	}
	if st.InvalidRecords != 1 || st.EmptyBatchesKept != 1 {
		t.Fatalf("stats %+v: want 1 invalid record and 1 empty batch", st)
	}
}

func mustHeader(t testing.TB, b []byte) kmsg.RecordBatch {
	t.Helper()
	h, err := batch.Validate(b)
	if err != nil {
		t.Fatalf("batch: %v", err)
	}
	return h
}

func TestCleanStopsAtOpenTransaction(t *testing.T) {
	clock := &testClock{ms: 1_700_000_000_000}
	m := openCleanerManager(t, NewMemFS(), "/data", clock, 1<<20)
	defer m.Close()
	l := openCleanerLog(t, m, compactConfig())
	var w clModel
	rng := rand.New(rand.NewPCG(3, 4))
	w.appendRandom(t, l, rng, clock.ms, 2_000, 50, 0)
	opts := batch.Options{ProducerID: 5, ProducerEpoch: 0, BaseSequence: 0, PartitionLeaderEpoch: -1, Transactional: true}
	open := w.appendKVs(t, l, opts, clock.ms, []clKV{{[]byte("key-00001"), []byte("in a transaction")}})
	w.appendRandom(t, l, rng, clock.ms, 2_000, 50, 0)
	st, err := m.CleanLog(clTP)
	if err != nil {
		t.Fatalf("clean: %v", err)
	}
	if st.CleanedTo != open.FirstOffset {
		t.Fatalf("cleaned to %d, want the open transaction's first offset %d", st.CleanedTo, open.FirstOffset)
	}
	w.checkCleaned(t, l, 0, st.CleanedTo, false)
	if n := m.Clean(); n != 0 {
		t.Fatalf("Clean cleaned %d logs held back by an open transaction", n)
	}
}

func TestCleanMinCompactionLag(t *testing.T) {
	clock := &testClock{ms: 1_700_000_000_000}
	m := openCleanerManager(t, NewMemFS(), "/data", clock, 1<<20)
	defer m.Close()
	cfg := compactConfig()
	cfg.MinCompactionLagMs = time.Hour.Milliseconds()
	l := openCleanerLog(t, m, cfg)
	var w clModel
	rng := rand.New(rand.NewPCG(5, 6))
	w.appendRandom(t, l, rng, clock.ms-2*time.Hour.Milliseconds(), 3_000, 100, 0)
	young := l.LogEndOffset()
	w.appendRandom(t, l, rng, clock.ms-time.Minute.Milliseconds(), 3_000, 100, 0)
	st, err := m.CleanLog(clTP)
	if err != nil {
		t.Fatalf("clean: %v", err)
	}
	firstYoung := l.segs[segIndex(l.segs, young)].base
	if st.CleanedTo != firstYoung || st.CleanedTo <= 0 {
		t.Fatalf("cleaned to %d, want %d: the first segment holding a record younger than the lag", st.CleanedTo, firstYoung)
	}
	w.checkCleaned(t, l, 0, st.CleanedTo, false)
	clock.ms += 2 * time.Hour.Milliseconds()
	st, err = m.CleanLog(clTP)
	if err != nil {
		t.Fatalf("clean: %v", err)
	}
	if st.CleanedTo != l.segs[len(l.segs)-1].base {
		t.Fatalf("cleaned to %d once old enough, want the active base %d", st.CleanedTo, l.segs[len(l.segs)-1].base)
	}
	w.checkCleaned(t, l, 0, st.CleanedTo, false)
}

func TestCleanDirtyRatio(t *testing.T) {
	clock := &testClock{ms: 1_700_000_000_000}
	m := openCleanerManager(t, NewMemFS(), "/data", clock, 1<<20)
	defer m.Close()
	l := openCleanerLog(t, m, compactConfig())
	plain, err := m.OpenLog(TopicPartition{Topic: "plain", Partition: 0}, smallConfig(), [16]byte{8})
	if err != nil {
		t.Fatal(err)
	}
	var w, other clModel
	rng := rand.New(rand.NewPCG(7, 8))
	w.appendRandom(t, l, rng, clock.ms, 4_000, 2_000, 0)
	other.appendRandom(t, plain, rng, clock.ms, 4_000, 20, 0)
	plainSegs := plain.SegmentCount()
	if n := m.Clean(); n != 1 {
		t.Fatalf("Clean cleaned %d logs, want 1", n)
	}
	if plain.SegmentCount() != plainSegs {
		t.Fatalf("a log with cleanup.policy=delete was compacted")
	}
	// A little more dirty data: the ratio stays below 0.5.
	for before := l.SegmentCount(); l.SegmentCount() == before; {
		w.appendRandom(t, l, rng, clock.ms, 50, 2_000, 0)
	}
	r, _, err := m.dirtyRange(l, clock.ms)
	if err != nil || r.dirtyBytes == 0 || r.ratio() >= 0.5 {
		t.Fatalf("dirty range %+v ratio %.2f, err %v: want some dirt below 0.5", r, r.ratio(), err)
	}
	if n := m.Clean(); n != 0 {
		t.Fatalf("Clean cleaned %d logs with dirty ratio %.2f", n, r.ratio())
	}
	cfg := compactConfig()
	cfg.MinCleanableDirtyRatio = r.ratio() / 2
	if err := l.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if n := m.Clean(); n != 1 {
		t.Fatalf("Clean cleaned %d logs, want 1 once the ratio is reached", n)
	}
	w.checkCleaned(t, l, 0, m.cleanerOffsets[clTP], false)
	// A log whose tombstones' delete horizon passed is cleaned whatever its
	// ratio.
	w.appendKVs(t, l, plainOpts(batch.CodecNone), clock.ms, []clKV{{[]byte("key-00003"), nil}})
	for before := l.SegmentCount(); l.SegmentCount() == before; {
		w.appendRandom(t, l, rng, clock.ms, 50, 1000, 0)
	}
	if _, err := m.CleanLog(clTP); err != nil {
		t.Fatal(err)
	}
	if n := m.Clean(); n != 0 {
		t.Fatalf("Clean cleaned %d logs before the delete horizon", n)
	}
	clock.ms += cfg.DeleteRetentionMs
	if n := m.Clean(); n != 1 {
		t.Fatalf("Clean cleaned %d logs after the delete horizon, want 1", n)
	}
	w.checkCleaned(t, l, 0, m.cleanerOffsets[clTP], true)
}

// crashPoint is a file-system operation at which the process dies.
type crashPoint struct {
	op, suffix string
	nth        int
}

func TestCleanCrashDuringSwap(t *testing.T) {
	points := []crashPoint{
		{"open", ".log.cleaned", 1},
		{"rename", ".index.cleaned", 1},
		{"rename", ".log.cleaned", 1},  // index swaps only: removed at open
		{"syncdir", "compacted-0", 1},  // the commit point
		{"remove", ".log", 2},          // old segments partly deleted
		{"rename", ".log.swap", 1},     // index swaps renamed, .log.swap not
		{"syncdir", "compacted-0", 2},  // swap done, not durable
		{"rename", ".log.cleaned", 5},  // a later group or pass
		{"remove", ".timeindex", 9},    // a later group or pass
		{"syncdir", "compacted-0", 10}, // a later group or pass
	}
	for _, cp := range points {
		for _, power := range []bool{false, true} {
			name := fmt.Sprintf("%s%s#%d/power=%v", cp.op, cp.suffix, cp.nth, power)
			t.Run(name, func(t *testing.T) { testCleanCrash(t, cp, power) })
		}
	}
}

var errCrashed = errors.New("simulated crash")

func testCleanCrash(t *testing.T, cp crashPoint, power bool) {
	fsys := NewMemFS()
	clock := &testClock{ms: 1_700_000_000_000}
	const dedupe = 8 << 10
	m := openCleanerManager(t, fsys, "/data", clock, dedupe)
	l := openCleanerLog(t, m, compactConfig())
	var w clModel
	rng := rand.New(rand.NewPCG(9, uint64(cp.nth)))
	w.appendRandom(t, l, rng, clock.ms, 3_000, 400, 0.05)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := m.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	var dead atomic.Bool
	var count int
	fsys.SetFaults(func(op, path string) error {
		if dead.Load() {
			return errCrashed
		}
		if op == cp.op && strings.HasSuffix(path, cp.suffix) {
			if count++; count == cp.nth {
				dead.Store(true)
				return errCrashed
			}
		}
		return nil
	})
	_, err := m.CleanLog(clTP)
	if !dead.Load() {
		t.Fatalf("crash point not reached (%d times), clean: %v", count, err)
	}
	if err == nil {
		t.Fatalf("clean succeeded through a crash")
	}
	m.Abandon()
	if power {
		fsys.PowerCutDropAll()
	} else {
		fsys.Crash()
	}
	fsys.SetFaults(nil)
	m = openCleanerManager(t, fsys, "/data", clock, dedupe)
	l = openCleanerLog(t, m, compactConfig())
	names, _ := fsys.ReadDir(l.Dir())
	for _, n := range names {
		if strings.HasSuffix(n, swapSuffix) || strings.HasSuffix(n, cleanedSuffix) {
			t.Fatalf("leftover %s after reopening", n)
		}
	}
	w.checkConsistent(t, l)
	st, err := m.CleanLog(clTP)
	if err != nil {
		t.Fatalf("clean after recovery: %v", err)
	}
	w.checkCleaned(t, l, 0, st.CleanedTo, false)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCleanSwapLeftovers puts the files of an interrupted swap in a real
// directory by hand: the cleaned segment of a copy of the log as .cleaned
// or .swap files, with or without index swaps and old segments.
func TestCleanSwapLeftovers(t *testing.T) {
	clock := &testClock{ms: 1_700_000_000_000}
	src := t.TempDir()
	m := openCleanerManager(t, OSFS{}, src, clock, 1<<20)
	l := openCleanerLog(t, m, compactConfig())
	var w clModel
	w.appendRandom(t, l, rand.New(rand.NewPCG(11, 12)), clock.ms, 4_000, 300, 0.05)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	cleaned := t.TempDir()
	copyDir(t, src, cleaned)
	m = openCleanerManager(t, OSFS{}, cleaned, clock, 1<<20)
	openCleanerLog(t, m, compactConfig())
	if _, err := m.CleanLog(clTP); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	part := clTP.String()
	first := segmentFileName(0, "")
	for _, tc := range []struct {
		name       string
		suffix     string // of the leftovers
		indexes    bool   // leave index leftovers too
		dropSecond bool   // an old segment already deleted
	}{
		{"cleaned", cleanedSuffix, true, false},
		{"swap", swapSuffix, true, false},
		{"swap-partly-deleted", swapSuffix, true, true},
		{"swap-log-only", swapSuffix, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyDir(t, src, dir)
			pdir := filepath.Join(dir, part)
			exts := []string{logSuffix}
			if tc.indexes {
				exts = append(exts, indexSuffix, timeIndexSuffix)
			}
			for _, ext := range exts {
				copyFile(t, filepath.Join(cleaned, part, first+ext), filepath.Join(pdir, first+ext+tc.suffix))
			}
			if tc.dropSecond {
				names, _ := OSFS{}.ReadDir(pdir)
				var logs []string
				for _, n := range names {
					if strings.HasSuffix(n, logSuffix) {
						logs = append(logs, n)
					}
				}
				if err := os.Remove(filepath.Join(pdir, logs[1])); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Remove(filepath.Join(dir, cleanShutdownFile)); err != nil {
				t.Fatal(err)
			}
			m := openCleanerManager(t, OSFS{}, dir, clock, 1<<20)
			l := openCleanerLog(t, m, compactConfig())
			before := l.SegmentCount()
			w.checkConsistent(t, l)
			st, err := m.CleanLog(clTP)
			if err != nil {
				t.Fatal(err)
			}
			w.checkCleaned(t, l, 0, st.CleanedTo, false)
			t.Logf("%d segments at open, %d after cleaning", before, l.SegmentCount())
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func copyDir(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		copyFile(t, p, filepath.Join(to, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCleanMemoryBounded cleans a log with many more keys than the offset
// map holds and checks that the heap grows by no more than a bound set by
// the cleaner's buffers, whatever the key count.
func TestCleanMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("large log")
	}
	clock := &testClock{ms: 1_700_000_000_000}
	const dedupe = 1 << 20
	m := openCleanerManager(t, OSFS{}, t.TempDir(), clock, dedupe)
	defer m.Close()
	cfg := compactConfig()
	cfg.SegmentBytes = 1 << 20
	cfg.SegmentIndexBytes = 1 << 20
	cfg.IndexIntervalBytes = 4096
	l := openCleanerLog(t, m, cfg)
	const records, keys = 240_000, 120_000
	rng := rand.New(rand.NewPCG(13, 14))
	recs := make([]kmsg.Record, 200)
	for done := 0; done < records; done += len(recs) {
		for i := range recs {
			recs[i] = kmsg.Record{OffsetDelta: int32(i), Key: fmt.Appendf(nil, "a-long-enough-key-%08d", rng.IntN(keys)), Value: []byte("0123456789abcdef")}
		}
		opts := plainOpts(batch.CodecNone)
		opts.BaseTimestamp = clock.ms
		b, err := batch.Build(opts, recs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(b, AppendOptions{AssignOffsets: true}); err != nil {
			t.Fatal(err)
		}
	}
	recs = nil
	var st CleanStats
	var err error
	growth := heapGrowthDuring(func() { st, err = m.CleanLog(clTP) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("log %d bytes, %d keys: %+v; heap growth %.1f MiB", st.BytesRead, keys, st, float64(growth)/(1<<20))
	if st.Passes < 2 || st.MapKeys != m.cleaner.offsets.capacity() {
		t.Fatalf("passes %d, map keys %d of %d: want the map to fill", st.Passes, st.MapKeys, m.cleaner.offsets.capacity())
	}
	if len(m.cleaner.offsets.slots)*8 > dedupe {
		t.Fatalf("offset map of %d bytes, over its %d", len(m.cleaner.offsets.slots)*8, dedupe)
	}
	// The map, the write buffer, a scan chunk, one batch and its records,
	// and GC slack: independent of the 120,000 keys (a Go map of them would
	// take more than the bound).
	if bound := int64(dedupe + (512 << 10) + (6 << 20)); growth > bound {
		t.Fatalf("heap grew %d bytes while cleaning, over %d", growth, bound)
	}
}

// heapGrowthDuring runs fn and returns how far the heap grew above its live
// size before fn, sampled every 2 ms with the GC running often so that
// garbage does not hide what is live.
func heapGrowthDuring(fn func()) int64 {
	old := debug.SetGCPercent(10)
	defer debug.SetGCPercent(old)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, ms.HeapAlloc
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		var s runtime.MemStats
		for {
			runtime.ReadMemStats(&s)
			peak = max(peak, s.HeapAlloc)
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	fn()
	close(stop)
	<-sampled
	return int64(peak) - int64(base)
}

// TestCleanConcurrentAppendsAndReads cleans while other goroutines append
// and read.
func TestCleanConcurrentAppendsAndReads(t *testing.T) {
	clock := &testClock{ms: 1_700_000_000_000}
	m := openCleanerManager(t, OSFS{}, t.TempDir(), clock, 16<<10)
	defer m.Close()
	l := openCleanerLog(t, m, compactConfig())
	var w clModel
	w.appendRandom(t, l, rand.New(rand.NewPCG(15, 16)), clock.ms, 5_000, 500, 0.05)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var failed atomic.Value
	wg.Add(2)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(17, 18))
		for range 400 {
			select {
			case <-stop:
				return
			default:
			}
			if err := w.appendRandomErr(l, rng, clock.ms, 20, 500, 0.05); err != nil {
				failed.Store(err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(19, 20))
		for {
			select {
			case <-stop:
				return
			default:
			}
			off := l.LogStartOffset() + rng.Int64N(max(l.LogEndOffset()-l.LogStartOffset(), 1))
			data, err := l.Read(off, ReadOptions{MaxBytes: 8 << 10})
			if err == nil {
				bs, _ := batch.Split(data)
				for _, b := range bs {
					if _, err = batch.Validate(b); err != nil {
						break
					}
				}
			}
			if err != nil {
				failed.Store(err)
				return
			}
		}
	}()
	for range 3 {
		if _, err := m.CleanLog(clTP); err != nil {
			t.Errorf("clean: %v", err)
		}
	}
	close(stop)
	wg.Wait()
	if err := failed.Load(); err != nil {
		t.Fatalf("concurrent append or read: %v", err)
	}
	st, err := m.CleanLog(clTP)
	if err != nil {
		t.Fatal(err)
	}
	w.checkCleaned(t, l, 0, st.CleanedTo, false)
}

// TestCleanAbortsOnTruncation truncates the log while a pass writes its
// first cleaned segment: the swap must not happen.
func TestCleanAbortsOnTruncation(t *testing.T) {
	fsys := NewMemFS()
	clock := &testClock{ms: 1_700_000_000_000}
	m := openCleanerManager(t, fsys, "/data", clock, 1<<20)
	defer m.Close()
	l := openCleanerLog(t, m, compactConfig())
	var w clModel
	w.appendRandom(t, l, rand.New(rand.NewPCG(21, 22)), clock.ms, 3_000, 200, 0.05)
	cut := l.LogEndOffset() / 3
	var once sync.Once
	var newEnd int64
	var terr error
	fsys.SetFaults(func(op, path string) error {
		if op == "open" && strings.HasSuffix(path, ".log.cleaned") {
			once.Do(func() { newEnd, terr = l.TruncateTo(cut) })
		}
		return nil
	})
	_, err := m.CleanLog(clTP)
	fsys.SetFaults(nil)
	if terr != nil {
		t.Fatal(terr)
	}
	if !errors.Is(err, ErrCleanAborted) {
		t.Fatalf("clean across a truncation: %v, want ErrCleanAborted", err)
	}
	w.truncate(newEnd)
	w.checkConsistent(t, l)
	w.appendRandom(t, l, rand.New(rand.NewPCG(23, 24)), clock.ms, 2_000, 200, 0.05)
	st, err := m.CleanLog(clTP)
	if err != nil {
		t.Fatal(err)
	}
	w.checkCleaned(t, l, 0, st.CleanedTo, false)
}

// A batch damaged on disk (its CRC fails) does not stop the cleaner: it is
// kept byte for byte, damage included (reads go on refusing it), and the
// rest of the log is cleaned; failing the pass would retry it every backoff
// forever.
func TestCleanCorruptBatch(t *testing.T) {
	clock := &testClock{ms: 1_700_000_000_000}
	m := openCleanerManager(t, OSFS{}, t.TempDir(), clock, 1<<20)
	defer m.Close()
	l := openCleanerLog(t, m, compactConfig())
	var w clModel
	w.appendRandom(t, l, rand.New(rand.NewPCG(25, 26)), clock.ms, 3_000, 100, 0)
	seg := l.segs[1]
	data, err := os.ReadFile(seg.logPath)
	if err != nil {
		t.Fatal(err)
	}
	data[batch.HeaderSize+3] ^= 0xff // inside the first batch's records
	if err := os.WriteFile(seg.logPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	size, _ := batch.Size(data)
	damaged := bytes.Clone(data[:size])
	st, err := m.CleanLog(clTP)
	if err != nil {
		t.Fatalf("clean of a log with a damaged batch: %v", err)
	}
	if st.BadBatchesKept != 1 || st.RecordsRemoved == 0 {
		t.Fatalf("clean stats %+v: want the damaged batch kept and the rest cleaned", st)
	}
	found := false
	for _, s := range l.segs {
		got, err := os.ReadFile(s.logPath)
		if err != nil {
			t.Fatal(err)
		}
		found = found || bytes.Contains(got, damaged)
	}
	if !found {
		t.Fatal("the damaged batch is not in the cleaned log byte for byte")
	}
	if _, err := l.Read(batch.BaseOffset(damaged), ReadOptions{MaxBytes: 1 << 20}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read of the damaged batch after cleaning: %v, want ErrCorrupt", err)
	}
}

func TestCleanerOffsetMap(t *testing.T) {
	om := newOffsetMap(24*1000, 0.9)
	if om.n != 997 || om.capacity() != 897 || len(om.slots) != 997*slotWords {
		t.Fatalf("slots %d capacity %d", om.n, om.capacity())
	}
	for round := range 3 {
		om.reset()
		for i := range om.capacity() {
			if !om.put(fmt.Appendf(nil, "key-%d", i), int64(i+round)) {
				t.Fatalf("put %d refused before full", i)
			}
		}
		if !om.full() || om.put([]byte("one more"), 1) {
			t.Fatalf("map not full at capacity")
		}
		if !om.put([]byte("key-5"), 12345) || om.get([]byte("key-5")) != 12345 {
			t.Fatalf("update of an existing key in a full map")
		}
		for i := range om.capacity() {
			if got := om.get(fmt.Appendf(nil, "key-%d", i)); i != 5 && got != int64(i+round) {
				t.Fatalf("key-%d: %d", i, got)
			}
		}
		if om.get([]byte("absent")) != -1 || om.get(nil) != -1 {
			t.Fatalf("absent key found")
		}
	}
	if tiny := newOffsetMap(1, 1); tiny.capacity() != 2 || tiny.n != 3 {
		t.Fatalf("tiny map: %d slots, capacity %d", tiny.n, tiny.capacity())
	}
}
