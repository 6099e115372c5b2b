package log

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirmq/weir/log/batch"
)

// The power-loss test runs chains of cycles on one MemFS each: every cycle
// appends from several goroutines with group commit and cuts the power at a
// random moment, then reopens and checks.
const (
	plChains       = 40
	plCutsPerChain = 6 // 240 power cuts in all
	plDir          = "/data"
	// plSeedEnv overrides the seed, to replay a failure.
	plSeedEnv = "WEIR_POWERLOSS_SEED"
)

// TestPowerLoss appends with group commit (flush.messages=1) from several
// goroutines to one to four logs with small segments, each goroutine waiting
// for its append to be durable, and cuts the power at a random moment while
// appends, fsync rounds and sometimes a checkpoint are in flight: MemFS
// keeps a random prefix (or none) of what was not synced. The manager is
// then abandoned and the directory reopened by a new one. Checks: every
// append reported synced is present at its offsets byte for byte; every
// batch served is one that was appended at that offset and passes its CRC;
// offsets are contiguous; the log end is past every synced append; the
// leader-epoch cache matches the data; and what a recovery kept survives
// later cuts. Some cycles shut down cleanly first, truncate a log, or crash
// the process only (the page cache survives, so every append must).
func TestPowerLoss(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(plSeedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", plSeedEnv, s, err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with %s=%d)", seed, plSeedEnv, seed)
	var st plStats
	for chain := range plChains {
		c := newPLChain(t, seed, chain, &st)
		c.run()
		if t.Failed() {
			t.Fatalf("chain %d failed (replay with %s=%d)", chain, plSeedEnv, seed)
		}
	}
	t.Logf("%d power cuts (%d dropping everything unsynced), %d process crashes, %d clean restarts, %d truncations; "+
		"%d appends reported synced, %d appended batches lost unsynced, %d recoveries cut a torn or corrupt tail",
		st.cuts, st.dropAll, st.crashes, st.cleanRestarts, st.truncations, st.synced, st.lost, st.recoveryCuts)
	if st.cuts < 200 {
		t.Errorf("only %d power cuts, want at least 200", st.cuts)
	}
	if st.synced == 0 || st.lost == 0 {
		t.Errorf("the cuts never hit a synced append or never lost an unsynced one: the test checked too little")
	}
}

// plStats counts what the power-loss test exercised.
type plStats struct {
	cuts, dropAll, crashes, cleanRestarts, truncations int
	synced, lost, recoveryCuts                         int
}

// plProcessFS is one process's view of a MemFS. kill marks the process dead
// and cuts the power atomically: from then on every call fails, so the
// goroutines of an abandoned manager that still run cannot reach the
// rebooted file system, and the handles they hold were lost in the cut.
type plProcessFS struct {
	mem  *MemFS
	mu   sync.RWMutex
	dead bool
}

var (
	_ FS = (*plProcessFS)(nil)

	errPLKilled = errors.New("the process was killed")
)

// enter takes the read lock unless the process is dead; the caller releases it.
func (p *plProcessFS) enter(op, path string) error {
	p.mu.RLock()
	if p.dead {
		p.mu.RUnlock()
		return &fs.PathError{Op: op, Path: path, Err: errPLKilled}
	}
	return nil
}

func (p *plProcessFS) kill(cut func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dead = true
	cut()
}

func (p *plProcessFS) killed() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.dead
}

func (p *plProcessFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	if err := p.enter("open", name); err != nil {
		return nil, err
	}
	defer p.mu.RUnlock()
	return p.mem.OpenFile(name, flag, perm)
}

func (p *plProcessFS) MkdirAll(path string, perm os.FileMode) error {
	if err := p.enter("mkdir", path); err != nil {
		return err
	}
	defer p.mu.RUnlock()
	return p.mem.MkdirAll(path, perm)
}

func (p *plProcessFS) ReadDir(path string) ([]string, error) {
	if err := p.enter("readdir", path); err != nil {
		return nil, err
	}
	defer p.mu.RUnlock()
	return p.mem.ReadDir(path)
}

func (p *plProcessFS) Stat(name string) (int64, error) {
	if err := p.enter("stat", name); err != nil {
		return 0, err
	}
	defer p.mu.RUnlock()
	return p.mem.Stat(name)
}

func (p *plProcessFS) Rename(oldpath, newpath string) error {
	if err := p.enter("rename", oldpath); err != nil {
		return err
	}
	defer p.mu.RUnlock()
	return p.mem.Rename(oldpath, newpath)
}

func (p *plProcessFS) Remove(name string) error {
	if err := p.enter("remove", name); err != nil {
		return err
	}
	defer p.mu.RUnlock()
	return p.mem.Remove(name)
}

func (p *plProcessFS) RemoveAll(path string) error {
	if err := p.enter("removeall", path); err != nil {
		return err
	}
	defer p.mu.RUnlock()
	return p.mem.RemoveAll(path)
}

func (p *plProcessFS) Lock(name string) (io.Closer, error) {
	if err := p.enter("lock", name); err != nil {
		return nil, err
	}
	defer p.mu.RUnlock()
	return p.mem.Lock(name)
}

func (p *plProcessFS) SyncDir(path string) error {
	if err := p.enter("syncdir", path); err != nil {
		return err
	}
	defer p.mu.RUnlock()
	return p.mem.SyncDir(path)
}

// plLogModel is what one log must and may hold. Its maps are guarded by
// plChain.mu while appenders run.
type plLogModel struct {
	tp    TopicPartition
	epoch int32 // leader epoch of this cycle's appends
	// stable holds, by base offset, the batches that must be present: those
	// reported synced, and those a recovery served (recovery syncs them).
	stable map[int64][]byte
	// written holds, by base offset, every version appended since the last
	// check: a served batch must be one of them or stable.
	written map[int64][][]byte
	// inCache holds the batches whose Append returned without error this
	// cycle: after a process crash (no power loss) they must all be there.
	inCache   map[int64][]byte
	syncedEnd int64 // every offset below was reported synced or recovered
}

// plAppend is one Append call: one or more batches for one log.
type plAppend struct {
	log int
	buf []byte
}

// plChain is one MemFS that goes through plCutsPerChain cycles.
type plChain struct {
	t      *testing.T
	st     *plStats
	chain  int
	name   string
	rng    *rand.Rand
	mem    *MemFS
	proc   *plProcessFS
	clock  *testClock
	cfg    Config
	logOut *plLogBuffer
	logger *slog.Logger
	m      *Manager
	logs   []*Log
	models []*plLogModel
	key    int // next record key number, so every record is unique

	mu sync.Mutex // guards the models' maps while appenders run
}

// plLogBuffer keeps the manager's log lines of the current cycle, shown when
// the test fails.
type plLogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *plLogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *plLogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *plLogBuffer) take() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	b.buf.Reset()
	return s
}

func newPLChain(t *testing.T, seed uint64, chain int, st *plStats) *plChain {
	rng := rand.New(rand.NewPCG(seed, uint64(chain)))
	cfg := smallConfig()
	cfg.SegmentBytes = 1024 * (1 + rng.Int64N(4))
	cfg.IndexIntervalBytes = 64 + rng.Int64N(512)
	cfg.FlushMessages = 1
	c := &plChain{
		t: t, st: st, chain: chain, name: fmt.Sprintf("chain %d", chain), rng: rng,
		mem: NewMemFS(), clock: &testClock{ms: 1_700_000_000_000}, cfg: cfg, logOut: &plLogBuffer{},
	}
	c.logger = slog.New(slog.NewTextHandler(c.logOut, &slog.HandlerOptions{Level: slog.LevelInfo}))
	for i := range 1 + rng.IntN(4) {
		c.models = append(c.models, &plLogModel{
			tp:     TopicPartition{"power", int32(i)},
			stable: map[int64][]byte{}, written: map[int64][][]byte{}, inCache: map[int64][]byte{},
		})
	}
	c.logs = make([]*Log, len(c.models))
	return c
}

// fatalf fails the test with the chain's context and the log lines of the
// cycle.
func (c *plChain) fatalf(format string, args ...any) {
	c.t.Helper()
	c.t.Fatalf("%s: %s\nsegment.bytes %d, index.interval.bytes %d; log lines:\n%s",
		c.name, fmt.Sprintf(format, args...), c.cfg.SegmentBytes, c.cfg.IndexIntervalBytes, c.logOut.take())
}

func (c *plChain) run() {
	c.t.Helper()
	defer func() {
		if c.t.Failed() {
			c.t.Logf("%s: log lines:\n%s", c.name, c.logOut.take())
		}
	}()
	c.open()
	c.check("new")
	for cycle := range plCutsPerChain {
		c.name = fmt.Sprintf("chain %d cycle %d", c.chain, cycle)
		c.cycle(cycle)
	}
	c.name = fmt.Sprintf("chain %d end", c.chain)
	// Appends work after all that, and survive a clean restart.
	c.appendPhase(nil, false)
	if err := c.m.Close(); err != nil {
		c.fatalf("final close: %v", err)
	}
	c.open()
	c.check("final clean reopen")
	if err := c.m.Close(); err != nil {
		c.fatalf("close: %v", err)
	}
}

// cycle runs one power cut (or crash), with the variations around it.
func (c *plChain) cycle(n int) {
	c.t.Helper()
	c.logger.Info("test: cycle", "name", c.name)
	if c.rng.IntN(5) == 0 {
		c.cleanRestart()
	}
	if c.rng.IntN(5) == 0 {
		c.truncateOne()
	}
	for _, mod := range c.models {
		if c.rng.IntN(3) == 0 {
			mod.epoch += 0
		}
	}
	kind, cut := c.pickFailure(n)
	c.logger.Info("test: failure", "kind", kind)
	c.appendPhase(cut, c.rng.IntN(3) == 0)
	if kind == "crash" {
		// The page cache survived: every append that returned is there.
		for _, mod := range c.models {
			for base, b := range mod.inCache {
				mod.stable[base] = b
				mod.syncedEnd = max(mod.syncedEnd, batch.LastOffset(b)+1)
			}
		}
	}
	c.open()
	if c.m.CleanShutdown() {
		c.fatalf("the directory reports a clean shutdown after a %s", kind)
	}
	c.check("after " + kind)
}

// pickFailure chooses a power cut keeping a random prefix of unsynced data,
// one dropping all of it, or a process crash.
// Every tenth cycle of the whole test is a crash, so the number of power
// cuts is the same in every run; which kind of cut is random.
func (c *plChain) pickFailure(cycle int) (string, func()) {
	if (c.chain*plCutsPerChain+cycle)%10 == 9 {
		c.st.crashes++
		return "crash", c.mem.Crash
	}
	c.st.cuts++
	if c.rng.IntN(9) < 7 {
		return "power cut", func() { c.mem.PowerCut(c.rng) }
	}
	c.st.dropAll++
	return "power cut dropping all unsynced data", c.mem.PowerCutDropAll
}

// open starts a new process on the file system: a manager and every log.
func (c *plChain) open() {
	c.t.Helper()
	c.proc = &plProcessFS{mem: c.mem}
	m, err := OpenManager(ManagerConfig{Dir: plDir, FS: c.proc, Now: c.clock.now, NoBackground: true, Logger: c.logger})
	if err != nil {
		c.fatalf("open manager: %v", err)
	}
	c.m = m
	for i, mod := range c.models {
		l, err := m.OpenLog(mod.tp, c.cfg, [16]byte{1, byte(i)})
		if err != nil {
			c.fatalf("open %s: %v", mod.tp, err)
		}
		c.logs[i] = l
	}
	c.st.recoveryCuts += strings.Count(c.logOut.String(), "found invalid data")
}

// cleanRestart appends, shuts down cleanly and reopens.
func (c *plChain) cleanRestart() {
	c.t.Helper()
	c.st.cleanRestarts++
	c.appendPhase(nil, c.rng.IntN(2) == 0)
	if err := c.m.Close(); err != nil {
		c.fatalf("close: %v", err)
	}
	if n := c.mem.OpenFiles(); n != 0 {
		c.fatalf("%d files open after a clean close", n)
	}
	c.open()
	if !c.m.CleanShutdown() {
		c.fatalf("no clean shutdown recorded after Close")
	}
	c.check("after clean restart")
}

// truncateOne truncates a random log at a random offset, durably.
func (c *plChain) truncateOne() {
	c.t.Helper()
	c.st.truncations++
	i := c.rng.IntN(len(c.logs))
	l, mod := c.logs[i], c.models[i]
	to := c.rng.Int64N(l.LogEndOffset() + 1)
	end, err := l.TruncateTo(to)
	c.logger.Info("test: truncated", "log", mod.tp.String(), "to", to, "end", end, "err", err)
	if err != nil {
		c.fatalf("truncate %s to %d: %v", mod.tp, to, err)
	}
	for base := range mod.stable {
		if base >= end {
			delete(mod.stable, base)
		}
	}
	mod.syncedEnd = min(mod.syncedEnd, end)
	mod.epoch++ // a new leader follows the truncation
	c.check(fmt.Sprintf("after truncating %s to %d (end %d)", mod.tp, to, end))
}

// plan builds the appends of one phase: one to four appenders, each with a
// queue of Append calls of one to three batches to random logs.
func (c *plChain) plan() [][]plAppend {
	queues := make([][]plAppend, 1+c.rng.IntN(4))
	for q := range queues {
		for range 2 + c.rng.IntN(12) {
			a := plAppend{log: c.rng.IntN(len(c.logs))}
			for range []int{1, 1, 1, 2, 3}[c.rng.IntN(5)] {
				n := 1 + c.rng.IntN(4)
				c.clock.ms += int64(c.rng.IntN(5))
				b := makeBatch(c.t, c.key, n, c.clock.ms, c.rng.IntN(200))
				batch.SetBaseOffset(b, -1) // unplaced: Append sets it
				c.key += n
				a.buf = append(a.buf, b...)
			}
			queues[q] = append(queues[q], a)
		}
	}
	return queues
}

// appendPhase runs the appenders. With cut set, it cuts the power (or
// crashes) after a random number of Append calls returned, possibly all of
// them, abandons the manager and waits for the appenders to notice. With
// checkpoint set, a checkpoint runs at a random moment before that.
func (c *plChain) appendPhase(cut func(), checkpoint bool) {
	c.t.Helper()
	queues := c.plan()
	total := 0
	for _, q := range queues {
		total += len(q)
	}
	cutAt := total
	if cut != nil {
		cutAt = c.rng.IntN(total + 1)
	}
	ckptAt := -1
	if checkpoint {
		ckptAt = c.rng.IntN(cutAt + 1)
	}
	for _, mod := range c.models {
		clear(mod.inCache)
	}
	var returned atomic.Int64
	progress := make(chan int64, total)
	finished := make(chan struct{})
	var wg sync.WaitGroup
	for _, q := range queues {
		wg.Go(func() {
			c.appendAll(q, func() { progress <- returned.Add(1) })
		})
	}
	go func() {
		wg.Wait()
		close(finished)
	}()
	seen := int64(0)
	waitFor := func(n int) {
		for seen < int64(n) {
			select {
			case v := <-progress:
				seen = max(seen, v)
			case <-finished:
				return
			}
		}
	}
	if ckptAt >= 0 {
		waitFor(ckptAt)
		c.logger.Info("test: checkpoint")
		if err := c.m.Checkpoint(); err != nil {
			wg.Wait()
			c.fatalf("checkpoint: %v", err)
		}
	}
	if cut == nil {
		wg.Wait()
		return
	}
	c.logger.Info("test: phase", "total", total, "cutAt", cutAt, "ckptAt", ckptAt)
	waitFor(cutAt)
	c.logger.Info("test: cut")
	c.proc.kill(cut)
	c.m.Abandon()
	wg.Wait()
}

// appendAll is one appender: append, wait until durable, record. It stops
// at the first error, which must come from the cut.
func (c *plChain) appendAll(q []plAppend, returned func()) {
	for _, a := range q {
		l, mod := c.logs[a.log], c.models[a.log]
		res, err := l.Append(a.buf, AppendOptions{AssignOffsets: true, LeaderEpoch: mod.epoch})
		c.logger.Info("test: appended", "log", mod.tp.String(), "first", res.FirstOffset, "last", res.LastOffset, "err", err)
		c.recordWritten(mod, a.buf, err == nil)
		returned()
		if err != nil {
			c.expectKilled(mod, "append", err)
			return
		}
		if err := l.WaitFlushed(res.LastOffset + 1); err != nil {
			c.expectKilled(mod, "wait flushed", err)
			return
		}
		c.recordSynced(mod, a.buf, res)
		c.logger.Info("test: synced", "log", mod.tp.String(), "first", res.FirstOffset, "last", res.LastOffset)
	}
}

func (c *plChain) expectKilled(mod *plLogModel, op string, err error) {
	if !c.proc.killed() {
		c.t.Errorf("%s: %s %s before any failure: %v", c.name, op, mod.tp, err)
	}
}

// recordWritten notes the versions an Append may have stored (it sets each
// batch's base offset in place once it places it), even when it failed.
func (c *plChain) recordWritten(mod *plLogModel, buf []byte, ok bool) {
	bs, _ := batch.Split(buf)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range bs {
		if base := batch.BaseOffset(b); base >= 0 {
			mod.written[base] = append(mod.written[base], b)
			if ok {
				mod.inCache[base] = b
			}
		}
	}
}

func (c *plChain) recordSynced(mod *plLogModel, buf []byte, res AppendResult) {
	bs, _ := batch.Split(buf)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range bs {
		mod.stable[batch.BaseOffset(b)] = b
	}
	mod.syncedEnd = max(mod.syncedEnd, res.LastOffset+1)
	c.st.synced++
}

// check reads every log whole and compares it with its model; what it
// serves becomes stable (recovery synced it) and the only version written.
func (c *plChain) check(what string) {
	c.t.Helper()
	for i, l := range c.logs {
		mod := c.models[i]
		served := readAll(c.t, l, 1+c.rng.IntN(6000))
		c.checkServed(what, l, mod, served)
		c.checkEpochs(what, l, mod, served)
		lost := 0
		for base, versions := range mod.written {
			if _, ok := mod.stable[base]; !ok && !slices.ContainsFunc(served, func(b []byte) bool { return batch.BaseOffset(b) == base }) {
				lost += len(versions)
			}
		}
		c.st.lost += lost
		clear(mod.stable)
		clear(mod.written)
		for _, b := range served {
			b = slices.Clone(b)
			mod.stable[batch.BaseOffset(b)] = b
			mod.written[batch.BaseOffset(b)] = [][]byte{b}
		}
		mod.syncedEnd = l.LogEndOffset()
	}
}

// checkServed checks contiguity, provenance and that nothing stable is lost.
func (c *plChain) checkServed(what string, l *Log, mod *plLogModel, served [][]byte) {
	c.t.Helper()
	next := l.LogStartOffset()
	if next != 0 {
		c.fatalf("%s: %s: log start offset %d, want 0", what, mod.tp, next)
	}
	byBase := make(map[int64][]byte, len(served))
	for _, b := range served {
		base := batch.BaseOffset(b)
		if base != next {
			c.fatalf("%s: %s: batch [%d, %d] follows offset %d: offsets are not contiguous", what, mod.tp, base, batch.LastOffset(b), next-1)
		}
		next = batch.LastOffset(b) + 1
		byBase[base] = b
		ok := bytes.Equal(mod.stable[base], b) ||
			slices.ContainsFunc(mod.written[base], func(v []byte) bool { return bytes.Equal(v, b) })
		if !ok {
			c.fatalf("%s: %s: batch [%d, %d] (%d bytes, epoch %d) was never appended at that offset (stable: %v, %d versions written)",
				what, mod.tp, base, batch.LastOffset(b), len(b), batch.PartitionLeaderEpoch(b), mod.stable[base] != nil, len(mod.written[base]))
		}
	}
	if end := l.LogEndOffset(); end != next {
		c.fatalf("%s: %s: log end offset %d, but the batches end at %d", what, mod.tp, end, next)
	}
	if end := l.LogEndOffset(); end < mod.syncedEnd {
		c.fatalf("%s: %s: log end offset %d below %d, reported synced", what, mod.tp, end, mod.syncedEnd)
	}
	for _, base := range slices.Sorted(maps.Keys(mod.stable)) {
		want := mod.stable[base]
		got, ok := byBase[base]
		if !ok {
			c.fatalf("%s: %s: synced batch [%d, %d] is missing (log end %d)", what, mod.tp, base, batch.LastOffset(want), l.LogEndOffset())
		}
		if !bytes.Equal(got, want) {
			c.fatalf("%s: %s: synced batch at %d changed: %d bytes, crc %#x, epoch %d; want %d bytes, crc %#x, epoch %d", what, mod.tp, base,
				len(got), batch.ComputeCRC(got), batch.PartitionLeaderEpoch(got), len(want), batch.ComputeCRC(want), batch.PartitionLeaderEpoch(want))
		}
	}
}

// checkEpochs compares the leader-epoch cache with the epochs of the data.
func (c *plChain) checkEpochs(what string, l *Log, mod *plLogModel, served [][]byte) {
	c.t.Helper()
	var want []EpochEntry
	for _, b := range served {
		if e := batch.PartitionLeaderEpoch(b); len(want) == 0 || e > want[len(want)-1].Epoch {
			want = append(want, EpochEntry{Epoch: e, StartOffset: batch.BaseOffset(b)})
		}
	}
	if got := l.Epochs(); fmt.Sprint(got) != fmt.Sprint(want) {
		// The cache may also know the current epoch of a leader that has
		// appended nothing since a truncation or loss: only at the end.
		if n := len(got); n == len(want)+1 && fmt.Sprint(got[:n-1]) == fmt.Sprint(want) && got[n-1].StartOffset == l.LogEndOffset() {
			return
		}
		c.fatalf("%s: %s: leader epochs %v, the data holds %v", what, mod.tp, got, want)
	}
}

// plOpen opens a manager with background work off and one log with group
// commit and 1 KiB segments on fsys.
func plOpen(t *testing.T, fsys FS, clock *testClock) (*Manager, *Log) {
	t.Helper()
	m := openTestManager(t, fsys, plDir, clock)
	cfg := smallConfig()
	cfg.SegmentBytes = 1024
	cfg.FlushMessages = 1
	l, err := m.OpenLog(TopicPartition{"cut", 0}, cfg, [16]byte{1})
	if err != nil {
		t.Fatalf("open log: %v", err)
	}
	return m, l
}

// plFault fails the operations on paths that match while it is on.
type plFault struct {
	on     atomic.Bool
	op     string
	suffix string
}

func (f *plFault) hook(op, path string) error {
	if f.on.Load() && op == f.op && strings.HasSuffix(path, f.suffix) {
		return fmt.Errorf("injected %s fault on %s", op, path)
	}
	return nil
}

// A process crash leaves the names it created without a directory sync.
// Recovery must make what it keeps durable, names included: an append
// acknowledged after the restart must survive a power cut.
func TestPowerLossAfterCrashRecovery(t *testing.T) {
	mem := NewMemFS()
	clock := &testClock{ms: 1_700_000_000_000}
	fault := &plFault{op: "syncdir", suffix: "cut-0"}
	mem.SetFaults(fault.hook)
	m, l := plOpen(t, mem, clock)
	if _, err := l.Append(makeBatch(t, 0, 1, clock.ms, 10), AppendOptions{AssignOffsets: true}); err != nil {
		t.Fatal(err)
	}
	// Settle the first append's flush first: a flush that ran into the
	// fault would fail the log for good (ErrLogFailed), which is not what
	// this test is about.
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	fault.on.Store(true) // the process dies before it syncs the directory again
	for i := 1; l.SegmentCount() < 2; i++ {
		if _, err := l.Append(makeBatch(t, i, 1, clock.ms, 300), AppendOptions{AssignOffsets: true}); err != nil {
			t.Fatal(err)
		}
	}
	mem.Crash()
	m.Abandon()
	fault.on.Store(false)

	m, l = plOpen(t, mem, clock)
	res, err := l.Append(makeBatch(t, 100, 1, clock.ms, 10), AppendOptions{AssignOffsets: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WaitFlushed(res.LastOffset + 1); err != nil {
		t.Fatal(err)
	}
	mem.PowerCutDropAll()
	m.Abandon()

	m, l = plOpen(t, mem, clock)
	defer m.Close()
	if end := l.LogEndOffset(); end <= res.LastOffset {
		t.Fatalf("log end offset %d after a power cut: the append [%d, %d] was reported synced", end, res.FirstOffset, res.LastOffset)
	}
}

// A rolled segment's name must not become durable (here through the
// leader-epoch checkpoint's directory sync) before the data of the segment
// before it: otherwise a power cut leaves a hole in the offsets.
func TestPowerLossRollOrdering(t *testing.T) {
	mem := NewMemFS()
	clock := &testClock{ms: 1_700_000_000_000}
	fault := &plFault{op: "sync", suffix: ".log"}
	mem.SetFaults(fault.hook)
	m, l := plOpen(t, mem, clock)
	if _, err := l.Append(makeBatch(t, 0, 1, clock.ms, 10), AppendOptions{AssignOffsets: true}); err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	release := holdSyncRounds(m) // the fsync round has not come yet
	fault.on.Store(true)         // nor will it succeed
	if _, err := l.Append(makeBatch(t, 1, 1, clock.ms, 800), AppendOptions{AssignOffsets: true}); err != nil {
		t.Fatal(err)
	}
	// The next batch rolls the segment and starts a new leader epoch, whose
	// checkpoint syncs the partition directory.
	if _, err := l.Append(makeBatch(t, 2, 1, clock.ms, 300), AppendOptions{AssignOffsets: true, LeaderEpoch: 1}); err != nil {
		t.Fatal(err)
	}
	if n := l.SegmentCount(); n != 2 {
		t.Fatalf("%d segments, want a roll", n)
	}
	mem.PowerCutDropAll()
	release() // the process is gone: the round fails on the fault
	m.Abandon()
	fault.on.Store(false)

	m, l = plOpen(t, mem, clock)
	defer m.Close()
	if end := l.LogEndOffset(); end != 1 {
		data, err := l.Read(1, ReadOptions{MaxBytes: 1 << 20})
		t.Fatalf("log end offset %d after a power cut, want 1 (only offset 0 was synced); read at 1: %d bytes, %v", end, len(data), err)
	}
}

// The leader-epoch cache that recovery rebuilds from the batches must be
// persisted: a clean restart afterwards trusts the checkpoint file.
func TestPowerLossRecoveredEpochsPersist(t *testing.T) {
	mem := NewMemFS()
	clock := &testClock{ms: 1_700_000_000_000}
	m, l := plOpen(t, mem, clock)
	if _, err := l.Append(makeBatch(t, 0, 1, clock.ms, 10), AppendOptions{AssignOffsets: true, LeaderEpoch: 3}); err != nil {
		t.Fatal(err)
	}
	// The process dies and the checkpoint file is lost: recovery must
	// rebuild the cache from the batches.
	mem.Crash()
	m.Abandon()
	if err := mem.Remove(plDir + "/" + l.TopicPartition().String() + "/" + epochCheckpoint); err != nil {
		t.Fatal(err)
	}

	m, l = plOpen(t, mem, clock)
	want := fmt.Sprint([]EpochEntry{{Epoch: 3, StartOffset: 0}})
	if got := fmt.Sprint(l.Epochs()); got != want {
		t.Fatalf("epochs after recovery %s, want %s", got, want)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m, l = plOpen(t, mem, clock)
	defer m.Close()
	if got := fmt.Sprint(l.Epochs()); got != want {
		t.Fatalf("epochs after recovery and a clean restart %s, want %s", got, want)
	}
}

// A truncation moves the recovery point back, and that must reach the
// checkpoint file before a power cut can make recovery trust it: else the
// truncated segment, rewritten since, is not rescanned and its index file,
// stale since the truncation (its rewrite on roll is not synced), is used.
func TestPowerLossTruncateThenRecover(t *testing.T) {
	mem := NewMemFS()
	clock := &testClock{ms: 1_700_000_000_000}
	m, l := plOpen(t, mem, clock)
	for i := 0; l.SegmentCount() < 4; i++ {
		if _, err := l.Append(makeBatch(t, i, 1, clock.ms, 100), AppendOptions{AssignOffsets: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Close(); err != nil { // checkpoints the recovery point, syncs the indexes
		t.Fatal(err)
	}
	m, l = plOpen(t, mem, clock)
	segs := l.segs
	cut := segs[1].base + 2
	if _, err := l.TruncateTo(cut); err != nil {
		t.Fatal(err)
	}
	// Batches of another size, so the old index entries point into them.
	for i := 0; l.SegmentCount() < 4; i++ {
		if _, err := l.Append(makeBatch(t, 1000+i, 1, clock.ms, 37), AppendOptions{AssignOffsets: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	want := readAll(t, l, 1<<20)
	mem.PowerCutDropAll()
	m.Abandon()

	m, l = plOpen(t, mem, clock)
	defer m.Close()
	if end := l.LogEndOffset(); end != batch.LastOffset(want[len(want)-1])+1 {
		t.Fatalf("log end offset %d after the power cut, want %d", end, batch.LastOffset(want[len(want)-1])+1)
	}
	for _, w := range want {
		base := batch.BaseOffset(w)
		data, err := l.Read(base, ReadOptions{MaxBytes: 1})
		if err != nil {
			t.Fatalf("read at %d: %v", base, err)
		}
		if !bytes.Equal(data, w) {
			bs, _ := batch.Split(data)
			got := "nothing"
			if len(bs) > 0 {
				got = fmt.Sprintf("batch [%d, %d]", batch.BaseOffset(bs[0]), batch.LastOffset(bs[0]))
			}
			t.Fatalf("read at %d: %s, want the batch [%d, %d] synced there", base, got, base, batch.LastOffset(w))
		}
	}
}
