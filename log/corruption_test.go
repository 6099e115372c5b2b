package log

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirmq/weir/log/batch"
)

// A segment below the recovery point is not rescanned on open (as in
// Kafka), so damage to it after a clean shutdown must be caught when it is
// read: Read returns an error, never a batch that fails its CRC.
func TestCorruptionOldSegmentNeverServed(t *testing.T) {
	mem := NewMemFS()
	clock := &testClock{ms: 1_700_000_000_000}
	m, l := plOpen(t, mem, clock)
	for i := 0; l.SegmentCount() < 3; i++ {
		if _, err := l.Append(makeBatch(t, i, 1, clock.ms, 100), AppendOptions{AssignOffsets: true}); err != nil {
			t.Fatal(err)
		}
	}
	path := l.segs[0].logPath
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := mem.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := []byte{0}
	if _, err := f.ReadAt(b, 100); err != nil { // inside the first batch's records
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, 100); err != nil {
		t.Fatal(err)
	}
	f.Close()

	m, l = plOpen(t, mem, clock)
	defer m.Close()
	data, err := l.Read(0, ReadOptions{MaxBytes: 1})
	if err != nil {
		t.Logf("read at 0: %v", err)
		return
	}
	bs, _ := batch.Split(data)
	for _, b := range bs {
		if _, err := batch.Validate(b); err != nil {
			t.Fatalf("read at 0 served the batch [%d, %d] of %s, which fails validation: %v", batch.BaseOffset(b), batch.LastOffset(b), path, err)
		}
	}
}

// A batch's base offset lies outside its CRC, so the CRC check of every
// served batch cannot catch damage to it. In a segment below the recovery
// point, which a clean open does not rescan, such damage must still never be
// served: here the second batch of the first segment, [3, 5], has its base
// offset changed to 2, so it would be served as [2, 4], overlapping the
// batch before it, and a consumer fetching offset 3 would get the record
// stored at offset 4.
func TestCorruptionOldSegmentBaseOffset(t *testing.T) {
	mem := NewMemFS()
	clock := &testClock{ms: 1_700_000_000_000}
	m, l := plOpen(t, mem, clock)
	for i := 0; l.SegmentCount() < 3; i++ {
		if _, err := l.Append(makeBatch(t, 3*i, 3, clock.ms, 100), AppendOptions{AssignOffsets: true}); err != nil {
			t.Fatal(err)
		}
	}
	orig := map[int64][]byte{}
	for _, b := range readAll(t, l, 1<<20) {
		orig[batch.BaseOffset(b)] = b
	}
	path := l.segs[0].logPath
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	corrPatchMem(t, mem, path, func(d []byte) []byte {
		size, _ := batch.Size(d)
		d[size+7] ^= 1 // the low byte of the second batch's base offset: 3 becomes 2
		return d
	})

	m, l = plOpen(t, mem, clock)
	defer m.Close()
	for off := int64(0); off < 6; off++ {
		data, err := l.Read(off, ReadOptions{MaxBytes: 1 << 20})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("read at %d: %v", off, err)
			}
			continue
		}
		bs, _ := batch.Split(data)
		for _, b := range bs {
			if base := batch.BaseOffset(b); !bytes.Equal(b, orig[base]) {
				t.Fatalf("read at %d served the batch [%d, %d] of %s, which the log never stored at offset %d (its base offset was damaged)",
					off, base, batch.LastOffset(b), path, base)
			}
		}
	}
}

// After an unclean shutdown, recovery takes the offset it resumes from out
// of the last batch of the segment below the recovery point, which it does
// not rescan. That header must be checked as the clean open checks its
// tail: here the last batch's last offset delta is damaged (it is covered by
// the CRC), and trusting it makes recovery delete the fsynced segment that
// follows, as not following the bogus offset, and set the log end offset far
// past any data, so the next append leaves a hole.
func TestCorruptionRecoveryChecksEndBelowRecoveryPoint(t *testing.T) {
	mem := NewMemFS()
	clock := &testClock{ms: 1_700_000_000_000}
	m, l := plOpen(t, mem, clock)
	appendOne := func(i int) {
		if _, err := l.Append(makeBatch(t, 3*i, 3, clock.ms, 100), AppendOptions{AssignOffsets: true}); err != nil {
			t.Fatal(err)
		}
	}
	i := 0
	for ; l.SegmentCount() < 2; i++ {
		appendOne(i)
	}
	appendOne(i)
	i++
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := m.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	rp := l.LogEndOffset()
	for ; l.SegmentCount() < 3; i++ {
		appendOne(i)
	}
	end := l.LogEndOffset()
	below := l.segs[l.segmentFor(rp)-1]
	data, err := ReadFile(mem, below.logPath)
	if err != nil {
		t.Fatal(err)
	}
	bs, _ := batch.Split(data)
	last := bs[len(bs)-1]
	pos := len(data) - len(last)
	m.Abandon()
	corrPatchMem(t, mem, below.logPath, func(d []byte) []byte { d[pos+26] ^= 0x80; return d }) // last offset delta, low byte

	m, l = plOpen(t, mem, clock)
	defer m.Close()
	if got := l.LogEndOffset(); got != batch.BaseOffset(last) && got != end {
		t.Fatalf("recovery point %d, log end %d before the crash; the last batch [%d, %d] of %s (at position %d), below the recovery point, "+
			"has a damaged last offset delta; after recovery the log end offset is %d (%d segments): want %d (cut at the damaged batch) or %d (left unscanned)",
			rp, end, batch.BaseOffset(last), batch.LastOffset(last), below.logPath, pos, got, l.SegmentCount(), batch.BaseOffset(last), end)
	}
}

// corrPatchMem applies fn to the bytes of a MemFS file.
func corrPatchMem(t *testing.T, mem *MemFS, path string, fn func([]byte) []byte) {
	t.Helper()
	data, err := ReadFile(mem, path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := mem.OpenFile(path, os.O_RDWR|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(fn(data), 0); err != nil {
		t.Fatal(err)
	}
}

// After a clean shutdown the open trusts the indexes but must not take the
// log end offset from a batch header that fails its CRC: here a flipped bit
// in the last batch's last offset delta. Else the next append lands past a
// hole, and the next crash recovery, which does check, drops it although it
// was fsynced.
func TestCorruptionCleanOpenChecksTail(t *testing.T) {
	mem := NewMemFS()
	clock := &testClock{ms: 1_700_000_000_000}
	m, l := plOpen(t, mem, clock)
	var last int64
	for i := range 3 {
		b := makeBatch(t, 2*i, 2, clock.ms, 10)
		last = l.active().size
		if _, err := l.Append(b, AppendOptions{AssignOffsets: true}); err != nil {
			t.Fatal(err)
		}
	}
	path := l.active().logPath
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	corrPatchMem(t, mem, path, func(d []byte) []byte { d[last+23] ^= 0x10; return d }) // last offset delta

	m, l = plOpen(t, mem, clock)
	end := l.LogEndOffset()
	res, err := l.Append(makeBatch(t, 100, 1, clock.ms, 10), AppendOptions{AssignOffsets: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WaitFlushed(res.LastOffset + 1); err != nil {
		t.Fatal(err)
	}
	mem.Crash()
	m.Abandon()
	m, l = plOpen(t, mem, clock)
	defer m.Close()
	if end > 6 || l.LogEndOffset() <= res.LastOffset {
		t.Fatalf("a clean open of a log of 6 records whose last batch fails its CRC set the log end offset to %d; "+
			"an append there was fsynced at %d, yet after a crash the log ends at %d", end, res.FirstOffset, l.LogEndOffset())
	}
}

// A leader-epoch-checkpoint that cannot be parsed is ignored on open; the
// cache must then be rebuilt from the batches, also after a clean shutdown
// (when nothing is rescanned), or OffsetForLeaderEpoch answers wrongly.
func TestCorruptionEpochCheckpointGarbage(t *testing.T) {
	mem := NewMemFS()
	clock := &testClock{ms: 1_700_000_000_000}
	m, l := plOpen(t, mem, clock)
	if _, err := l.Append(makeBatch(t, 0, 1, clock.ms, 10), AppendOptions{AssignOffsets: true, LeaderEpoch: 3}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(l.Dir(), epochCheckpoint)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	corrPatchMem(t, mem, path, func([]byte) []byte { return []byte("garbage\n") })

	m, l = plOpen(t, mem, clock)
	defer m.Close()
	want := fmt.Sprint([]EpochEntry{{Epoch: 3, StartOffset: 0}})
	e, off := l.EndOffsetForEpoch(3)
	if got := fmt.Sprint(l.Epochs()); got != want || e != 3 || off != 1 {
		t.Fatalf("after a clean shutdown and a garbled %s: epochs %s, EndOffsetForEpoch(3) = (%d, %d); want %s and (3, 1)", path, got, e, off, want)
	}
}

// The randomized damage test writes logs on the real file system, shuts
// each down cleanly or abandons it, and then, case by case, copies one,
// damages the copy in one way, and reopens it. Cases run in parallel: they
// spend their time waiting for fsync.
const (
	dmgCases     = 120
	dmgTemplates = 6
	// dmgSeedEnv overrides the seed, to replay a failure (one case with
	// -run 'TestCorruptionRandomDamage/case-N$').
	dmgSeedEnv = "WEIR_CORRUPTION_SEED"
)

var (
	dmgTP      = TopicPartition{"dmg", 0}
	dmgTopicID = [16]byte{0xd, 0xa, 0x3}
)

// TestCorruptionRandomDamage damages copies of logs (several segments and
// leader epochs, shut down cleanly or not) in one of these ways: bytes
// flipped in a segment, a segment cut at a random point, its tail zeroed, a
// batch length that runs past the end of the file, a batch magic set to 0 or
// 1, an index pointing past its segment or with shuffled entries, a deleted
// index or time index, garbage in one of the checkpoint files or in
// partition.metadata, or the clean-shutdown marker removed (also alongside
// the other kinds). It then reopens the copy. Checks: nothing panics;
// opening succeeds or fails naming the path; every batch served validates,
// offsets served ascend and each batch is the original batch at its offset
// byte for byte; the log is the original truncated exactly at the first
// damaged batch, or, when the damage lies in a segment the open did not scan
// (below the recovery point), the whole original, with reads of the damaged
// segment allowed to fail with ErrCorrupt and its path; the leader-epoch
// cache is that of the data kept; an append works and survives a clean
// reopen.
func TestCorruptionRandomDamage(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(dmgSeedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", dmgSeedEnv, s, err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with %s=%d)", seed, dmgSeedEnv, seed)
	tmp := t.TempDir()
	var tmpls []*dmgTemplate
	for i := range dmgTemplates {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		tmpls = append(tmpls, dmgBuildTemplate(t, rng, filepath.Join(tmp, fmt.Sprintf("template-%d", i)), i%2 == 0))
	}
	st := &dmgStats{kinds: map[string]int{}}
	t.Run("cases", func(t *testing.T) {
		for n := range dmgCases {
			t.Run(fmt.Sprintf("case-%d", n), func(t *testing.T) {
				t.Parallel()
				rng := rand.New(rand.NewPCG(seed, 1<<32+uint64(n)))
				c := &dmgCase{t: t, n: n, seed: seed, rng: rng, tm: tmpls[rng.IntN(len(tmpls))], logOut: &plLogBuffer{}}
				c.root = filepath.Join(tmp, fmt.Sprintf("case-%d", n))
				c.run()
				st.add(c)
				if err := os.RemoveAll(c.root); err != nil {
					t.Fatal(err)
				}
			})
		}
	})
	t.Logf("damage kinds %v; %d opens found the damage and truncated, %d did not scan it, %d reads refused a damaged batch, %d opens failed",
		st.kinds, st.truncated, st.unscanned, st.readErrors, st.openErrors)
	if st.cases == dmgCases && (st.truncated == 0 || st.unscanned == 0 || st.readErrors == 0) {
		t.Errorf("no case truncated, left damage unscanned or refused a read: the test checked too little")
	}
}

// dmgStats counts what the damage test exercised.
type dmgStats struct {
	mu                                                  sync.Mutex
	kinds                                               map[string]int
	cases, truncated, unscanned, readErrors, openErrors int
}

// add counts a finished case.
func (st *dmgStats) add(c *dmgCase) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.cases++
	st.kinds[strings.TrimSuffix(strings.Fields(c.what)[0], ":")]++
	if c.truncated {
		st.truncated++
	} else if c.unscanned {
		st.unscanned++
	}
	st.readErrors += c.readErrors
	if c.openFailed {
		st.openErrors++
	}
}

// dmgTemplate is a log written and shut down once, then only copied.
type dmgTemplate struct {
	root    string // the manager directory
	clean   bool   // shut down cleanly
	cfg     Config
	rp      int64 // the recovery point checkpointed, -1 if none
	segs    []dmgSegment
	batches [][]byte // every batch in offset order, as on disk
	leo     int64
}

// dmgSegment is the layout of one segment of a template.
type dmgSegment struct {
	base  int64
	first int     // index in batches of its first batch
	pos   []int64 // positions of its batches
	size  int64
}

// dmgBuildTemplate writes a log of several segments and leader epochs on the
// real file system and shuts it down cleanly or abandons it, after a
// checkpoint at a random moment or none.
func dmgBuildTemplate(t *testing.T, rng *rand.Rand, root string, clean bool) *dmgTemplate {
	t.Helper()
	cfg := smallConfig()
	cfg.SegmentBytes = 1200 + rng.Int64N(1200)
	cfg.IndexIntervalBytes = 64 + rng.Int64N(300)
	clock := &testClock{ms: 1_700_000_000_000}
	m, err := OpenManager(ManagerConfig{Dir: root, Now: clock.now, NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	l, err := m.OpenLog(dmgTP, cfg, dmgTopicID)
	if err != nil {
		t.Fatal(err)
	}
	calls := 20 + rng.IntN(20)
	checkpointAt := -1
	if !clean && rng.IntN(3) > 0 {
		checkpointAt = rng.IntN(calls)
	}
	epoch, key := int32(0), 0
	for i := range calls {
		if rng.IntN(8) == 0 {
			epoch += 1 + rng.Int32N(2)
		}
		var buf []byte
		for range []int{1, 1, 1, 2, 3}[rng.IntN(5)] {
			n := 1 + rng.IntN(4)
			buf = append(buf, makeBatch(t, key, n, clock.ms, 10+rng.IntN(100))...)
			key += n
			clock.ms += 1 + rng.Int64N(20)
		}
		if _, err := l.Append(buf, AppendOptions{AssignOffsets: true, LeaderEpoch: epoch}); err != nil {
			t.Fatal(err)
		}
		if i == checkpointAt {
			if err := l.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := m.Checkpoint(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if clean {
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	} else {
		m.Abandon()
	}
	tm := &dmgTemplate{root: root, clean: clean, cfg: cfg}
	tm.load(t)
	return tm
}

// load reads the template's layout and recovery point back from its files.
func (tm *dmgTemplate) load(t *testing.T) {
	t.Helper()
	part := filepath.Join(tm.root, dmgTP.String())
	names, err := OSFS{}.ReadDir(part)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		base, ok := parseSegmentFileName(name, logSuffix)
		if !ok {
			continue
		}
		data, err := os.ReadFile(filepath.Join(part, name))
		if err != nil {
			t.Fatal(err)
		}
		bs, err := batch.Split(data)
		if err != nil {
			t.Fatalf("template %s: %v", name, err)
		}
		seg := dmgSegment{base: base, first: len(tm.batches), size: int64(len(data))}
		pos := int64(0)
		for _, b := range bs {
			if _, err := batch.Validate(b); err != nil || batch.BaseOffset(b) != tm.leo && len(tm.batches) > 0 {
				t.Fatalf("template %s at %d: batch at offset %d after %d: %v", name, pos, batch.BaseOffset(b), tm.leo, err)
			}
			seg.pos = append(seg.pos, pos)
			tm.batches = append(tm.batches, b)
			tm.leo = batch.LastOffset(b) + 1
			pos += int64(len(b))
		}
		tm.segs = append(tm.segs, seg)
	}
	if len(tm.segs) < 3 {
		t.Fatalf("template with %d segments, want several", len(tm.segs))
	}
	tm.rp = -1
	if data, err := os.ReadFile(filepath.Join(tm.root, recoveryPointFile)); err == nil {
		rps, err := decodeOffsetCheckpoint(recoveryPointFile, data)
		if err != nil {
			t.Fatal(err)
		}
		if rp, ok := rps[dmgTP]; ok {
			tm.rp = rp
		}
	}
}

// segFor returns the index of the segment holding offset.
func (tm *dmgTemplate) segFor(offset int64) int {
	return max(sort.Search(len(tm.segs), func(i int) bool { return tm.segs[i].base > offset })-1, 0)
}

// batchAt returns the index of the batch at position pos of segment s (the
// last one starting at or before it).
func (tm *dmgTemplate) batchAt(s int, pos int64) int {
	seg := tm.segs[s]
	return seg.first + max(sort.Search(len(seg.pos), func(i int) bool { return seg.pos[i] > pos })-1, 0)
}

// segEnd is the offset just past segment s.
func (tm *dmgTemplate) segEnd(s int) int64 {
	if s+1 < len(tm.segs) {
		return tm.segs[s+1].base
	}
	return tm.leo
}

// dmgCase is one damaged copy of a template.
type dmgCase struct {
	t      *testing.T
	n      int
	seed   uint64
	rng    *rand.Rand
	tm     *dmgTemplate
	logOut *plLogBuffer
	root   string // the copy's manager directory
	part   string // the copy's partition directory

	what       string // the damage, for messages
	seg        int    // the segment whose .log was damaged, -1 if none
	first      int    // the first damaged batch, len(tm.batches) if none
	clean      bool   // the clean-shutdown marker is there at open
	rp         int64  // the recovery point the open reads, -1 if none
	badMeta    bool   // partition.metadata holds garbage
	truncated  bool   // the open found the damage and cut the log there
	unscanned  bool   // the open left the damage alone
	openFailed bool
	readErrors int
}

func (c *dmgCase) fatalf(format string, args ...any) {
	c.t.Helper()
	c.t.Fatalf("case %d (%s; template %s, clean %v, recovery point %d, %d segments, log end %d): %s\n"+
		"replay with %s=%d go test -run 'TestCorruptionRandomDamage/cases/case-%d$' ./log/; log lines:\n%s",
		c.n, c.what, filepath.Base(c.tm.root), c.tm.clean, c.tm.rp, len(c.tm.segs), c.tm.leo, fmt.Sprintf(format, args...),
		dmgSeedEnv, c.seed, c.n, c.logOut.take())
}

// run copies the template, damages the copy, opens it and checks it.
func (c *dmgCase) run() {
	c.t.Helper()
	defer func() {
		if r := recover(); r != nil {
			c.fatalf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	c.part = filepath.Join(c.root, dmgTP.String())
	dmgCopyDir(c.t, c.tm.root, c.root)
	dmgCopyDir(c.t, filepath.Join(c.tm.root, dmgTP.String()), c.part)
	c.seg, c.first, c.rp = -1, len(c.tm.batches), c.tm.rp
	c.damage()
	_, err := os.Stat(filepath.Join(c.root, cleanShutdownFile))
	c.clean = err == nil
	m, l, ok := c.open()
	if !ok {
		return
	}
	c.checkOpened(l)
	c.appendAndReopen(m, l)
}

// dmgCopyDir copies the regular files of the directory src into a new
// directory dst.
func dmgCopyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err == nil {
			err = os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// open opens the damaged copy; a failure must name the path.
func (c *dmgCase) open() (*Manager, *Log, bool) {
	c.t.Helper()
	logger := slog.New(slog.NewTextHandler(c.logOut, &slog.HandlerOptions{Level: slog.LevelInfo}))
	m, err := OpenManager(ManagerConfig{Dir: c.root, Now: (&testClock{ms: 1_800_000_000_000}).now, NoBackground: true, Logger: logger})
	if err != nil {
		if !strings.Contains(err.Error(), c.root) {
			c.fatalf("open manager: the error does not name the directory %s: %v", c.root, err)
		}
		c.openFailed = true
		return nil, nil, false
	}
	l, err := m.OpenLog(dmgTP, c.tm.cfg, dmgTopicID)
	if err != nil {
		m.Abandon()
		if !strings.Contains(err.Error(), c.part) {
			c.fatalf("open log: the error does not name the path %s: %v", c.part, err)
		}
		c.openFailed = true
		return nil, nil, false
	}
	return m, l, true
}

// damage applies one kind of damage, chosen at random, and with a clean
// template sometimes also removes the clean-shutdown marker, so that the
// open scans the active segment.
func (c *dmgCase) damage() {
	c.t.Helper()
	kinds := []func(){c.flip, c.cut, c.zeroTail, c.lengthPastEnd, c.badMagic,
		c.indexPastEnd, c.indexShuffle, c.deleteIndex, c.garbageCheckpoint}
	if c.tm.clean && c.rng.IntN(len(kinds)+1) == 0 {
		c.what = "marker removed"
		c.removeMarker()
		return
	}
	kinds[c.rng.IntN(len(kinds))]()
	if c.tm.clean && c.rng.IntN(4) == 0 {
		c.what += ", marker removed"
		c.removeMarker()
	}
}

func (c *dmgCase) logPath(s int) string {
	return filepath.Join(c.part, segmentFileName(c.tm.segs[s].base, logSuffix))
}

// damageLog rewrites segment s's .log with fn and records the first batch
// whose bytes changed or are gone.
func (c *dmgCase) damageLog(s int, what string, fn func(d []byte) []byte) {
	c.t.Helper()
	path := c.logPath(s)
	old, err := os.ReadFile(path)
	if err != nil {
		c.t.Fatal(err)
	}
	data := fn(slices.Clone(old))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		c.t.Fatal(err)
	}
	c.what = fmt.Sprintf("%s in %s", what, filepath.Base(path))
	p := min(len(old), len(data))
	for i := range p {
		if old[i] != data[i] {
			p = i
			break
		}
	}
	if p < len(old) {
		c.seg, c.first = s, c.tm.batchAt(s, int64(p))
	}
}

// randomBatch picks a segment and one of its batches: the segment, the
// batch's index and its position.
func (c *dmgCase) randomBatch() (int, int, int64) {
	s := c.rng.IntN(len(c.tm.segs))
	seg := c.tm.segs[s]
	j := c.rng.IntN(len(seg.pos))
	return s, seg.first + j, seg.pos[j]
}

// flip flips one to three bytes of a segment, half the time in a batch
// header. The partition leader epoch field is spared: it lies outside the
// CRC by the format's design, so no reader can tell a flip there (Kafka's
// neither).
func (c *dmgCase) flip() {
	s := c.rng.IntN(len(c.tm.segs))
	seg := c.tm.segs[s]
	var at []int64
	c.damageLog(s, "flip", func(d []byte) []byte {
		for range 1 + c.rng.IntN(3) {
			p := c.rng.Int64N(int64(len(d)))
			if c.rng.IntN(2) == 0 {
				p = seg.pos[c.rng.IntN(len(seg.pos))] + c.rng.Int64N(batch.HeaderSize)
			}
			if in := p - seg.pos[c.tm.batchAt(s, p)-seg.first]; in >= 12 && in < 16 {
				continue
			}
			d[p] ^= byte(1 + c.rng.IntN(255))
			at = append(at, p)
		}
		return d
	})
	c.what += fmt.Sprintf(" at %v", at)
}

// cut cuts a segment at a random point.
func (c *dmgCase) cut() {
	s := c.rng.IntN(len(c.tm.segs))
	p := c.rng.Int64N(c.tm.segs[s].size)
	c.damageLog(s, fmt.Sprintf("cut at %d", p), func(d []byte) []byte { return d[:p] })
}

// zeroTail zeroes a segment from a random point to its end.
func (c *dmgCase) zeroTail() {
	s := c.rng.IntN(len(c.tm.segs))
	p := c.rng.Int64N(c.tm.segs[s].size)
	c.damageLog(s, fmt.Sprintf("zeros from %d", p), func(d []byte) []byte { clear(d[p:]); return d })
}

// lengthPastEnd sets a batch's length field to run past the end of the file.
func (c *dmgCase) lengthPastEnd() {
	s, _, pos := c.randomBatch()
	n := c.tm.segs[s].size - pos - batch.LengthPrefix + 1 + c.rng.Int64N(1<<16)
	c.damageLog(s, fmt.Sprintf("length %d at %d", n, pos), func(d []byte) []byte {
		binary.BigEndian.PutUint32(d[pos+8:], uint32(n))
		return d
	})
}

// badMagic sets a batch's magic to 0 or 1.
func (c *dmgCase) badMagic() {
	s, _, pos := c.randomBatch()
	magic := byte(c.rng.IntN(2))
	c.damageLog(s, fmt.Sprintf("magic %d at %d", magic, pos), func(d []byte) []byte { d[pos+16] = magic; return d })
}

// readIndex returns a segment's .index or .timeindex path, its bytes and
// the number of entries before its zero (preallocated) tail.
func (c *dmgCase) readIndex(s int, suffix string, entrySize int) (string, []byte, int) {
	c.t.Helper()
	path := filepath.Join(c.part, segmentFileName(c.tm.segs[s].base, suffix))
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.t.Fatal(err)
	}
	n := len(data) / entrySize
	for n > 0 && !slices.ContainsFunc(data[(n-1)*entrySize:n*entrySize], func(b byte) bool { return b != 0 }) {
		n--
	}
	return path, data, n
}

func (c *dmgCase) writeFile(path string, data []byte) {
	c.t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		c.t.Fatal(err)
	}
}

// indexPastEnd makes an offset index entry point past its segment.
func (c *dmgCase) indexPastEnd() {
	s := c.rng.IntN(len(c.tm.segs))
	path, data, n := c.readIndex(s, indexSuffix, indexEntrySize)
	pos := uint32(c.tm.segs[s].size + c.rng.Int64N(1<<20))
	i := 0
	if n == 0 {
		data = append(data[:0], make([]byte, indexEntrySize)...)
		binary.BigEndian.PutUint32(data, uint32(batch.LastOffset(c.tm.batches[c.tm.segs[s].first])-c.tm.segs[s].base))
	} else {
		i = c.rng.IntN(n)
	}
	binary.BigEndian.PutUint32(data[i*indexEntrySize+4:], pos)
	c.writeFile(path, data)
	c.what = fmt.Sprintf("index-past-end: entry %d of %s at position %d", i, filepath.Base(path), pos)
}

// indexShuffle swaps two entries of an offset or time index (an index with
// fewer than two entries gets an entry past the end instead).
func (c *dmgCase) indexShuffle() {
	s := c.rng.IntN(len(c.tm.segs))
	suffix, size := indexSuffix, indexEntrySize
	if c.rng.IntN(2) == 0 {
		suffix, size = timeIndexSuffix, timeIndexEntrySize
	}
	path, data, n := c.readIndex(s, suffix, size)
	if n < 2 {
		c.indexPastEnd()
		return
	}
	i := c.rng.IntN(n)
	j := (i + 1 + c.rng.IntN(n-1)) % n
	a, b := data[i*size:(i+1)*size], data[j*size:(j+1)*size]
	tmp := slices.Clone(a)
	copy(a, b)
	copy(b, tmp)
	c.writeFile(path, data)
	c.what = fmt.Sprintf("index-shuffle: entries %d and %d of %s swapped", i, j, filepath.Base(path))
}

// deleteIndex removes a segment's .index or .timeindex.
func (c *dmgCase) deleteIndex() {
	s := c.rng.IntN(len(c.tm.segs))
	suffix := []string{indexSuffix, timeIndexSuffix}[c.rng.IntN(2)]
	path := filepath.Join(c.part, segmentFileName(c.tm.segs[s].base, suffix))
	if err := os.Remove(path); err != nil {
		c.t.Fatal(err)
	}
	c.what = "index-deleted: " + filepath.Base(path)
}

// garbageCheckpoint overwrites one of the checkpoint files or
// partition.metadata with bytes that do not parse.
func (c *dmgCase) garbageCheckpoint() {
	files := []string{
		filepath.Join(c.root, recoveryPointFile), filepath.Join(c.root, logStartOffsetFile),
		filepath.Join(c.part, epochCheckpoint), filepath.Join(c.part, partitionMetadata),
	}
	f := c.rng.IntN(len(files))
	var data []byte
	switch c.rng.IntN(3) {
	case 0:
		data = make([]byte, c.rng.IntN(64))
		for i := range data {
			data[i] = byte(c.rng.IntN(256))
		}
	case 1:
		data = fmt.Appendf(nil, "0\n%d\n%s 0 %d\n", 2+c.rng.IntN(5), dmgTP.Topic, c.rng.Int64N(1000)) // count mismatch
	default:
		data = []byte("version: 7\ntopic_id: ?\n-1\n")
	}
	c.writeFile(files[f], data)
	switch f {
	case 0:
		c.rp = -1
	case 3:
		c.badMeta = true
	}
	c.what = fmt.Sprintf("garbage in %s: %q", filepath.Base(files[f]), data)
}

func (c *dmgCase) removeMarker() {
	if err := os.Remove(filepath.Join(c.root, cleanShutdownFile)); err != nil {
		c.t.Fatal(err)
	}
}

// mustFind reports whether the open scans the damaged segment: after an
// unclean shutdown (or without a recovery point) every segment from the one
// holding the recovery point is scanned.
func (c *dmgCase) mustFind() bool {
	if c.seg < 0 || c.clean && c.rp >= 0 {
		return false
	}
	return c.rp < 0 || c.seg >= c.tm.segFor(c.rp)
}

// checkOpened checks the log as opened: its end, what it serves, its epochs
// and topic id.
func (c *dmgCase) checkOpened(l *Log) {
	c.t.Helper()
	end, keep := l.LogEndOffset(), len(c.tm.batches)
	switch {
	case c.first == len(c.tm.batches):
		if end != c.tm.leo {
			c.fatalf("log end offset %d, want %d: no batch was damaged", end, c.tm.leo)
		}
	case end == batch.BaseOffset(c.tm.batches[c.first]):
		c.truncated, keep = true, c.first
	case end == c.tm.leo && !c.mustFind():
		c.unscanned = true
	default:
		c.fatalf("log end offset %d: want %d, the base of the first damaged batch, or %d if the open did not scan it (must scan: %v)",
			end, batch.BaseOffset(c.tm.batches[c.first]), c.tm.leo, c.mustFind())
	}
	c.checkServed(l, "after the open", c.tm.batches[:keep])
	id, err := l.TopicID()
	switch {
	case c.badMeta && (!errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), filepath.Join(c.part, partitionMetadata))):
		c.fatalf("topic id from a garbled %s: %v, %v; want ErrCorrupt naming the file", partitionMetadata, id, err)
	case !c.badMeta && (err != nil || id != dmgTopicID):
		c.fatalf("topic id %v, %v; want %v", id, err, dmgTopicID)
	}
}

// checkServed reads the log from its start to its end in reads of random
// sizes and checks it serves exactly want (a prefix of the original, then
// possibly an appended batch), byte for byte. When the damage was not
// scanned at open, reads of the damaged segment may fail with ErrCorrupt
// naming it, and its batches may be missing.
func (c *dmgCase) checkServed(l *Log, when string, want [][]byte) {
	c.t.Helper()
	errSeg := -1
	if c.seg >= 0 && !c.truncated {
		errSeg = c.seg
	}
	byBase := make(map[int64]int, len(want))
	for i, b := range want {
		byBase[batch.BaseOffset(b)] = i
	}
	if start := l.LogStartOffset(); start != 0 {
		c.fatalf("%s: log start offset %d, want 0", when, start)
	}
	seen := make([]bool, len(want))
	off, prev, end := int64(0), int64(-1), l.LogEndOffset()
	for off < end {
		data, err := l.Read(off, ReadOptions{MaxBytes: []int{1, 300, 2000, 1 << 20}[c.rng.IntN(4)]})
		if err != nil {
			s := c.tm.segFor(off)
			if s != errSeg || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.logPath(s)) {
				c.fatalf("%s: read at %d: %v", when, off, err)
			}
			c.readErrors++
			off = c.tm.segEnd(s)
			continue
		}
		bs, err := batch.Split(data)
		if err != nil || len(bs) == 0 {
			c.fatalf("%s: read at %d (log end %d): %d bytes, %v", when, off, end, len(data), err)
		}
		for _, b := range bs {
			base, last := batch.BaseOffset(b), batch.LastOffset(b)
			if _, err := batch.Validate(b); err != nil {
				c.fatalf("%s: read at %d served the batch [%d, %d], which fails validation: %v", when, off, base, last, err)
			}
			i, ok := byBase[base]
			if !ok || !bytes.Equal(b, want[i]) || base <= prev || last < off {
				c.fatalf("%s: read at %d served the batch [%d, %d] after offset %d: not the original batch there (known base: %v)",
					when, off, base, last, prev, ok)
			}
			seen[i], prev = true, last
		}
		off = prev + 1
	}
	for i, ok := range seen {
		if b := want[i]; !ok && (i >= len(c.tm.batches) || c.tm.segFor(batch.BaseOffset(b)) != errSeg) {
			c.fatalf("%s: the batch [%d, %d] was never served (log end %d)", when, batch.BaseOffset(b), batch.LastOffset(b), end)
		}
	}
	if got, w := fmt.Sprint(l.Epochs()), fmt.Sprint(dmgEpochs(want)); got != w {
		c.fatalf("%s: leader epochs %s, the data kept holds %s", when, got, w)
	}
}

// dmgEpochs is the leader-epoch cache of a run of batches.
func dmgEpochs(bs [][]byte) []EpochEntry {
	var out []EpochEntry
	for _, b := range bs {
		if e := batch.PartitionLeaderEpoch(b); e >= 0 && (len(out) == 0 || e > out[len(out)-1].Epoch) {
			out = append(out, EpochEntry{Epoch: e, StartOffset: batch.BaseOffset(b)})
		}
	}
	return out
}

// appendAndReopen appends under a new leader epoch, shuts down cleanly and
// reopens: the append and what the log held are there.
func (c *dmgCase) appendAndReopen(m *Manager, l *Log) {
	c.t.Helper()
	end := l.LogEndOffset()
	b := makeBatch(c.t, 1_000_000, 2, 1_800_000_000_000, 50)
	res, err := l.Append(b, AppendOptions{AssignOffsets: true, LeaderEpoch: max(l.LatestEpoch(), 0) + 1})
	if err != nil || res.FirstOffset != end {
		c.fatalf("append at the log end %d after the open: %+v, %v", end, res, err)
	}
	if err := m.Close(); err != nil {
		c.fatalf("close after the append: %v", err)
	}
	keep := len(c.tm.batches)
	if c.truncated {
		keep = c.first
	}
	m, l, ok := c.open()
	if !ok {
		c.fatalf("a clean reopen after the append failed")
	}
	defer m.Abandon() // nothing more to make durable
	if !m.CleanShutdown() || l.LogEndOffset() != res.LastOffset+1 {
		c.fatalf("clean reopen after the append [%d, %d]: clean shutdown %v, log end offset %d",
			res.FirstOffset, res.LastOffset, m.CleanShutdown(), l.LogEndOffset())
	}
	c.checkServed(l, "after an append and a clean reopen", append(slices.Clone(c.tm.batches[:keep]), b))
}
