package log

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirmq/weir/log/batch"
)

// fuzzRecoveryTP is the partition FuzzRecovery writes.
var fuzzRecoveryTP = TopicPartition{"fuzz", 0}

// FuzzRecovery writes one segment file, named by base, and, when index is
// not empty, its offset index into a partition directory without a
// clean-shutdown marker, and opens it, so that recovery scans it. Recovery
// must not panic and must keep exactly the longest prefix of the file made
// of valid batches whose offsets follow each other from base: that prefix is
// what the log serves, byte for byte, its end offset follows the last batch
// served (or is base), its leader-epoch cache is that of the prefix, and an
// append works and survives a clean reopen.
func FuzzRecovery(f *testing.F) {
	for _, s := range fuzzRecoverySeeds(f) {
		f.Add(s.base, s.log, s.index)
	}
	f.Fuzz(func(t *testing.T, base uint32, logData, index []byte) {
		mem := NewMemFS()
		clock := &testClock{ms: 1_700_000_000_000}
		part := filepath.Join(plDir, fuzzRecoveryTP.String())
		if err := mem.MkdirAll(part, 0o755); err != nil {
			t.Fatal(err)
		}
		fuzzWriteFile(t, mem, filepath.Join(part, segmentFileName(int64(base), logSuffix)), logData)
		if len(index) > 0 {
			fuzzWriteFile(t, mem, filepath.Join(part, segmentFileName(int64(base), indexSuffix)), index)
		}
		m := openTestManager(t, mem, plDir, clock)
		defer m.Close()
		l, err := m.OpenLog(fuzzRecoveryTP, smallConfig(), [16]byte{})
		if err != nil {
			t.Fatalf("open a directory holding one segment of %d bytes: %v", len(logData), err)
		}
		kept := fuzzCheckRecovered(t, l, int64(base), logData)

		epoch := max(l.LatestEpoch(), 0) + 1
		b := makeBatch(t, 0, 2, clock.ms, 10)
		want := l.LogEndOffset()
		res, err := l.Append(b, AppendOptions{AssignOffsets: true, LeaderEpoch: epoch})
		if err != nil || res.FirstOffset != want {
			t.Fatalf("append after recovery at log end %d: %+v, %v", want, res, err)
		}
		if err := m.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		m = openTestManager(t, mem, plDir, clock)
		l, err = m.OpenLog(fuzzRecoveryTP, smallConfig(), [16]byte{})
		if err != nil {
			t.Fatalf("clean reopen: %v", err)
		}
		served := readAll(t, l, 1<<20)
		if n := len(served); n != len(kept)+1 || !bytes.Equal(served[n-1], b) || !bytes.Equal(bytes.Join(served[:n-1], nil), bytes.Join(kept, nil)) {
			t.Fatalf("after an append at %d and a clean reopen: %d batches served, want the %d recovered and the appended one", want, n, len(kept))
		}
		if end := l.LogEndOffset(); end != res.LastOffset+1 {
			t.Fatalf("after a clean reopen: log end offset %d, want %d", end, res.LastOffset+1)
		}
	})
}

// fuzzCheckRecovered checks what a recovered log of one segment at base,
// written as data, serves; it returns the batches served.
func fuzzCheckRecovered(t *testing.T, l *Log, base int64, data []byte) [][]byte {
	t.Helper()
	if start := l.LogStartOffset(); start != base {
		t.Fatalf("log start offset %d, want the segment's base %d", start, base)
	}
	served := readAll(t, l, 1+len(data)%3000)
	next := base
	for _, b := range served {
		if batch.BaseOffset(b) != next {
			t.Fatalf("served batch [%d, %d] after offset %d", batch.BaseOffset(b), batch.LastOffset(b), next-1)
		}
		next = batch.LastOffset(b) + 1
	}
	prefix := bytes.Join(served, nil)
	if !bytes.HasPrefix(data, prefix) {
		t.Fatalf("the %d bytes served are not a prefix of the segment file", len(prefix))
	}
	if end := l.LogEndOffset(); end != next {
		t.Fatalf("log end offset %d, but the batches served end at %d", end, next)
	}
	if rest := data[len(prefix):]; fuzzValidNext(rest, base, next) {
		t.Fatalf("recovery dropped the valid batch [%d, %d] at position %d, which follows the %d batches kept",
			batch.BaseOffset(rest), batch.LastOffset(rest), len(prefix), len(served))
	}
	var want []EpochEntry
	for _, b := range served {
		if e := batch.PartitionLeaderEpoch(b); e >= 0 && (len(want) == 0 || e > want[len(want)-1].Epoch) {
			want = append(want, EpochEntry{Epoch: e, StartOffset: batch.BaseOffset(b)})
		}
	}
	if got := l.Epochs(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("leader epochs %v after recovery, the batches kept hold %v", got, want)
	}
	return served
}

// fuzzValidNext reports whether rest starts with a whole valid batch at the
// offset next, in a segment based at base: one recovery must keep.
func fuzzValidNext(rest []byte, base, next int64) bool {
	size, err := batch.Size(rest)
	if err != nil || size > len(rest) {
		return false
	}
	b := rest[:size]
	if _, err := batch.Validate(b); err != nil {
		return false
	}
	return batch.BaseOffset(b) == next && batch.LastOffset(b)-base <= 1<<31-1
}

func fuzzWriteFile(t *testing.T, fsys FS, path string, data []byte) {
	t.Helper()
	f, err := fsys.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
}

// fuzzSeed is one input of FuzzRecovery.
type fuzzSeed struct {
	base       uint32
	log, index []byte
}

// fuzzRecoverySeeds writes a log of several segments with a Manager and
// returns its first two segments as they are on disk, and mutations of them.
func fuzzRecoverySeeds(f *testing.F) []fuzzSeed {
	mem := NewMemFS()
	clock := &testClock{ms: 1_700_000_000_000}
	m := openTestManager(f, mem, plDir, clock)
	cfg := smallConfig()
	cfg.SegmentBytes, cfg.IndexIntervalBytes = 1500, 100
	l, err := m.OpenLog(fuzzRecoveryTP, cfg, [16]byte{})
	if err != nil {
		f.Fatal(err)
	}
	for i := 0; l.SegmentCount() < 3; i++ {
		clock.ms += 7
		if _, err := l.Append(makeBatch(f, i, 1+i%4, clock.ms, 20*(i%5)), AppendOptions{AssignOffsets: true, LeaderEpoch: int32(i / 6)}); err != nil {
			f.Fatal(err)
		}
	}
	var segs []fuzzSeed
	for _, s := range l.segs[:2] {
		segs = append(segs, fuzzSeed{base: uint32(s.base)})
	}
	dir := l.Dir()
	if err := m.Close(); err != nil {
		f.Fatal(err)
	}
	for i := range segs {
		base := int64(segs[i].base)
		if segs[i].log, err = ReadFile(mem, filepath.Join(dir, segmentFileName(base, logSuffix))); err != nil {
			f.Fatal(err)
		}
		if segs[i].index, err = ReadFile(mem, filepath.Join(dir, segmentFileName(base, indexSuffix))); err != nil {
			f.Fatal(err)
		}
	}
	first, err := batch.Split(segs[0].log)
	if err != nil || len(first) < 3 {
		f.Fatalf("first segment: %d batches, %v", len(first), err)
	}
	pos2 := len(first[0]) + len(first[1]) // the third batch
	mutate := func(s fuzzSeed, fn func(d []byte) []byte) fuzzSeed {
		s.log = fn(slices.Clone(s.log))
		return s
	}
	return append(segs,
		mutate(segs[0], func(d []byte) []byte { d[pos2+40] ^= 0x01; return d }),                            // CRC
		mutate(segs[0], func(d []byte) []byte { return d[:pos2+30] }),                                      // torn
		mutate(segs[0], func(d []byte) []byte { d[pos2+16] = 1; return d }),                                // magic 1
		mutate(segs[0], func(d []byte) []byte { binary.BigEndian.PutUint32(d[pos2+8:], 1<<20); return d }), // length past the end
		mutate(segs[0], func(d []byte) []byte { clear(d[pos2:]); return d }),                               // zero tail
		mutate(segs[0], func(d []byte) []byte { return append(d[:len(first[0])], d[pos2:]...) }),           // hole
		fuzzSeed{base: segs[1].base, log: segs[0].log, index: segs[0].index},                               // wrong base
		fuzzSeed{base: 7, log: []byte(strings.Repeat("\x00", 100))},
		fuzzSeed{},
	)
}
