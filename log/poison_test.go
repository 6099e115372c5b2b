package log

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/log/batch"
)

// lineCounter is a log sink that passes lines to the test and counts them.
type lineCounter struct {
	t     testing.TB
	mu    sync.Mutex
	lines []string
}

func (c *lineCounter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, string(p))
	c.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// count returns the lines containing every one of subs.
func (c *lineCounter) count(subs ...string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
next:
	for _, l := range c.lines {
		for _, s := range subs {
			if !strings.Contains(l, s) {
				continue next
			}
		}
		n++
	}
	return n
}

// openCountingManager opens a manager whose log lines lines counts.
func openCountingManager(t *testing.T, lines *lineCounter) *Manager {
	t.Helper()
	clock := &testClock{ms: 1_700_000_000_000}
	m, err := OpenManager(ManagerConfig{Dir: t.TempDir(), FS: OSFS{}, Now: clock.now, NoBackground: true,
		Logger: slog.New(slog.NewTextHandler(lines, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// poisonBatch returns a batch of three keyed records compressed with codec
// and timestamps ts, ts+1, ts+2 whose header and CRC hold but whose records
// cannot be read: kind "garbage" (not a compressed stream), "truncated"
// (half of the stream) or "bomb" (one record decompressing past
// batch.MaxDecompressed). The leader refuses such batches now; a log may
// hold them from before, or a follower may get them.
func poisonBatch(t testing.TB, kind string, codec int16, ts int64) []byte {
	t.Helper()
	recs := []kmsg.Record{{Key: []byte("pa"), Value: []byte("1")}, {OffsetDelta: 1, TimestampDelta64: 1, Key: []byte("pb")},
		{OffsetDelta: 2, TimestampDelta64: 2, Key: []byte("pc"), Value: []byte("3")}}
	if kind == "bomb" {
		recs = []kmsg.Record{{Key: []byte("pa"), Value: make([]byte, batch.MaxDecompressed+1)}}
	}
	b, err := batch.Build(batch.Options{ProducerID: batch.NoProducerID, ProducerEpoch: batch.NoProducerEpoch,
		BaseSequence: batch.NoSequence, PartitionLeaderEpoch: batch.NoPartitionLeaderEpoch, BaseTimestamp: ts, Codec: codec}, recs)
	if err != nil {
		t.Fatal(err)
	}
	section := b[batch.HeaderSize:]
	switch kind {
	case "garbage":
		section = bytes.Repeat([]byte{0xfe}, len(section))
	case "truncated":
		section = section[:len(section)/2]
	}
	out := append(bytes.Clone(b[:batch.HeaderSize]), section...)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-batch.LengthPrefix))
	batch.SetCRC(out)
	return out
}

// appendRaw appends b as the leader's log does, without the leader's
// record checks, and returns its base offset.
func appendRaw(t *testing.T, l *Log, b []byte) int64 {
	t.Helper()
	res, err := l.Append(bytes.Clone(b), AppendOptions{AssignOffsets: true})
	if err != nil {
		t.Fatal(err)
	}
	return res.FirstOffset
}

// ListOffsets by timestamp over stored batches whose records cannot be
// read answers at the batch level (the batch's first offset, its max
// timestamp) instead of KAFKA_STORAGE_ERROR, decompresses no more than
// batch.MaxDecompressed (a bomb fails at the bound), logs each batch once,
// and finds records in good batches around them as before.
func TestListOffsetsPoisonBatch(t *testing.T) {
	lines := &lineCounter{t: t}
	m := openCountingManager(t, lines)
	l, err := m.OpenLog(TopicPartition{Topic: "poison", Partition: 0}, DefaultConfig(), [16]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	appendRaw(t, l, makeBatch(t, 0, 5, 1000, 10)) // offsets 0-4, timestamps 1000-1004
	garbage := appendRaw(t, l, poisonBatch(t, "garbage", batch.CodecGzip, 2000))
	truncated := appendRaw(t, l, poisonBatch(t, "truncated", batch.CodecZstd, 3000))
	bomb := appendRaw(t, l, poisonBatch(t, "bomb", batch.CodecGzip, 4000))
	good := appendRaw(t, l, makeBatch(t, 100, 5, 5000, 10))
	cases := []struct {
		ts, off, rts int64
	}{
		{1002, 2, 1002},
		{1500, garbage, 2002},
		{2001, garbage, 2002},
		{2500, truncated, 3002},
		{3500, bomb, 4000},
		{4500, good, 5000},
		{5003, good + 3, 5003},
		{MaxTimestamp, good + 4, 5004},
	}
	for round := range 2 {
		for _, c := range cases {
			off, rts, found, err := l.OffsetForTimestamp(c.ts)
			if err != nil || !found || off != c.off || rts != c.rts {
				t.Errorf("round %d: timestamp %d: offset %d timestamp %d found %v, %v; want %d at %d", round, c.ts, off, rts, found, err, c.off, c.rts)
			}
		}
	}
	if off, _, found, err := l.OffsetForTimestamp(6000); err != nil || found {
		t.Errorf("timestamp past the log: %d, %v, %v", off, found, err)
	}
	for _, base := range []int64{garbage, truncated, bomb} {
		if n := lines.count("bad record batch on disk", fmt.Sprintf("base_offset=%d ", base), "ListOffsets"); n != 1 {
			t.Errorf("batch at %d logged %d times, want once", base, n)
		}
	}
	if n := lines.count(fmt.Sprintf("base_offset=%d ", bomb), fmt.Sprintf("decompresses past the limit of %d bytes", batch.MaxDecompressed)); n != 1 {
		t.Errorf("the bomb was not stopped at the bound (%d lines)", n)
	}
}

// The cleaner keeps a stored batch whose records cannot be read byte for
// byte, logs it once, maps none of its keys and cleans the rest, instead
// of failing the whole pass (and retrying it every backoff forever).
func TestCleanerKeepsPoisonBatch(t *testing.T) {
	lines := &lineCounter{t: t}
	m := openCountingManager(t, lines)
	l, err := m.OpenLog(clTP, compactConfig(), [16]byte{7})
	if err != nil {
		t.Fatal(err)
	}
	var w clModel
	rng := rand.New(rand.NewPCG(31, 32))
	w.appendRandom(t, l, rng, 1000, 1500, 50, 0)
	var poison [][]byte
	for i, kind := range []string{"garbage", "truncated"} {
		p := poisonBatch(t, kind, batch.CodecLz4, int64(2000+i))
		appendRaw(t, l, p)
		poison = append(poison, p)
	}
	w.appendRandom(t, l, rng, 3000, 1500, 50, 0)
	for pass := range 2 {
		st, err := m.CleanLog(clTP)
		if err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
		if st.BadBatchesKept != 2 || (pass == 0 && st.RecordsRemoved == 0) {
			t.Fatalf("pass %d: %+v: want both bad batches kept and records removed", pass, st)
		}
	}
	kept := 0
	for _, b := range readAll(t, l, 1<<20) {
		for _, p := range poison {
			if bytes.Equal(b[batch.LengthPrefix+4:], p[batch.LengthPrefix+4:]) {
				kept++
			}
		}
	}
	if kept != 2 {
		t.Fatalf("%d of the 2 bad batches are in the cleaned log", kept)
	}
	if n := lines.count("bad record batch on disk", "cleaning"); n != 2 {
		t.Errorf("%d log lines for the 2 bad batches over two cleanings, want 2", n)
	}
}

// A read that meets a damaged batch (its CRC fails) is refused with
// ErrCorrupt each time, and logged once.
func TestReadCorruptBatchLoggedOnce(t *testing.T) {
	lines := &lineCounter{t: t}
	m := openCountingManager(t, lines)
	l, err := m.OpenLog(TopicPartition{Topic: "rot", Partition: 0}, DefaultConfig(), [16]byte{2})
	if err != nil {
		t.Fatal(err)
	}
	appendRaw(t, l, makeBatch(t, 0, 5, 1000, 10))
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	path := l.segs[0].logPath
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 0xff
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := l.Read(0, ReadOptions{MaxBytes: 1 << 20}); err == nil {
			t.Fatal("a damaged batch was served")
		}
	}
	if n := lines.count("bad record batch on disk", "read"); n != 1 {
		t.Errorf("%d log lines for three reads of one damaged batch, want 1", n)
	}
}
