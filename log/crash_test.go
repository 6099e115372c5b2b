package log_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirmq/weir/bench/logbench"
	"github.com/weirmq/weir/internal/harness"
	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

func TestMain(m *testing.M) { harness.Main(m) }

// The crash test's child: `weir bench log` with these settings.
const (
	crashRounds       = 20
	crashPartitions   = 4
	crashWriters      = 8
	crashBatchBytes   = 4096
	crashSegmentBytes = 128 << 10 // small, so segments roll across rounds
	crashMinDelay     = 50 * time.Millisecond
	crashMaxDelay     = 500 * time.Millisecond
	// crashSeedEnv and crashRoundsEnv override the seed and the number of
	// rounds (never below crashRounds), to replay or soak.
	crashSeedEnv   = "WEIR_CRASH_SEED"
	crashRoundsEnv = "WEIR_CRASH_ROUNDS"
)

// TestCrashGroupCommit appends with group-commit fsync in a child process
// and SIGKILLs it at a random moment, round after round on one directory.
// After each kill the directory is opened (recovered) in-process and
// checked: every append the child reported synced, in any round, is present
// at its offsets with its content; offsets are contiguous from the log start;
// every batch passes its CRC; and every batch seen after an earlier recovery
// (which fsyncs what it keeps) is still there, byte for byte. Rounds take
// turns leaving the directory closed cleanly, recovered but without a clean
// shutdown, or as the killed child left it (checked after the next round),
// so the next child starts from each of these states (see leaveMode).
func TestCrashGroupCommit(t *testing.T) {
	seed, rounds := crashSettings(t)
	t.Logf("seed %d, %d rounds (replay with %s=%d)", seed, rounds, crashSeedEnv, seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	harness.MustBuildWeir(t)
	c := &crashChecker{
		t: t, dir: t.TempDir(),
		logCfg: crashBenchConfig("", 1).LogConfig(),
		ledger: make(map[int32][]ledgerEntry),
		seen:   make(map[int32][]batchMark),
	}
	for round := range rounds {
		leave := leaveMode(round % 3)
		if round == rounds-1 {
			leave = leaveClosed // the last round's appends are checked too
		}
		c.playRound(round, leave, rng)
		if t.Failed() {
			t.Fatalf("round %d failed (replay with %s=%d)", round, crashSeedEnv, seed)
		}
	}
	total := 0
	for _, entries := range c.ledger {
		total += len(entries)
	}
	t.Logf("%d rounds, %d appends reported synced, all present", rounds, total)
	if total == 0 {
		t.Errorf("no append was reported synced in any round: the test checked nothing")
	}
}

// playRound runs a child with a random record size, kills it a random time
// after it is ready, and checks the directory unless leave is
// leaveUnchecked.
func (c *crashChecker) playRound(round int, leave leaveMode, rng *rand.Rand) {
	start := time.Now()
	recordSize := 16 + rng.IntN(1009) // 4 to 256 records per batch
	delay := crashMinDelay + time.Duration(rng.Int64N(int64(crashMaxDelay-crashMinDelay)))
	child := c.runChild(round, recordSize, delay)
	if want := fmt.Sprintf("clean_shutdown=%t", c.leftClean); !strings.Contains(child.ready, want) {
		c.t.Errorf("round %d: child's ready line %q: want %s", round, child.ready, want)
	}
	c.leftClean = leave == leaveClosed
	outcome := "directory left as killed, checked after the next round"
	if leave != leaveUnchecked {
		rec := c.verify(round, leave == leaveAbandoned)
		outcome = fmt.Sprintf("reopened: clean_shutdown=%t, torn tails cut %d, end offsets %v, segments %v, %s",
			rec.clean, rec.truncations, rec.ends, rec.segments, leave)
	}
	c.t.Logf("round %d: record size %d, killed %v after ready, %d appends reported synced, child cut %d torn tails; %s; round took %v",
		round, recordSize, delay, len(child.synced), child.truncations, outcome, time.Since(start).Round(time.Millisecond))
}

// crashSettings returns the seed and round count, from the environment
// when set.
func crashSettings(t *testing.T) (seed uint64, rounds int) {
	seed, rounds = uint64(time.Now().UnixNano()), crashRounds
	if s := os.Getenv(crashSeedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", crashSeedEnv, s, err)
		}
		seed = v
	}
	if s := os.Getenv(crashRoundsEnv); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < crashRounds {
			t.Fatalf("%s=%q: want a number >= %d", crashRoundsEnv, s, crashRounds)
		}
		rounds = v
	}
	return seed, rounds
}

// crashBenchConfig is the child's configuration.
func crashBenchConfig(dir string, recordSize int) logbench.Config {
	cfg := logbench.DefaultConfig()
	cfg.Dir = dir
	cfg.Partitions, cfg.Writers = crashPartitions, crashWriters
	cfg.RecordSize, cfg.BatchBytes = recordSize, crashBatchBytes
	cfg.SegmentBytes = crashSegmentBytes
	cfg.Fsync, cfg.ReportSynced = true, true
	cfg.Duration = time.Minute // never reached: the child is killed first
	return cfg
}

// ledgerEntry is an append a child reported synced, in the round it ran.
type ledgerEntry struct {
	round int
	logbench.Synced
}

// batchMark identifies a batch found in the log, and whose append it was.
type batchMark struct {
	base, last int64
	crc        int32
	key        logbench.Key // of its first record; Index 0
}

// crashChecker carries what the rounds learned.
type crashChecker struct {
	t      *testing.T
	dir    string
	logCfg log.Config
	// ledger holds, per partition, every append reported synced so far.
	ledger map[int32][]ledgerEntry
	// seen holds, per partition, the batches found by the last check, in
	// offset order; the next check must find them again.
	seen map[int32][]batchMark
	// leftClean is whether the last round closed the directory cleanly,
	// which the next child's ready line must report (a new directory has
	// no clean-shutdown marker).
	leftClean bool
}

// childRun is what one child printed before it was killed.
type childRun struct {
	ready       string
	synced      []logbench.Synced
	truncations int // recoveries that cut a torn tail, from its stderr
}

// runChild starts `weir bench log` on the directory, kills its process
// group delay after it is ready, and returns what it reported. The delay is
// the fault injection: nothing waits on it for synchronization.
func (c *crashChecker) runChild(round, recordSize int, delay time.Duration) childRun {
	t := c.t
	lines := &syncedLines{}
	opts := harness.Options{
		Args:      benchArgs(crashBenchConfig(c.dir, recordSize), round),
		Name:      fmt.Sprintf("bench-log-round-%d", round),
		ReadyLine: "^" + logbench.ReadyPrefix + " ",
		OnLine:    lines.add,
	}
	p := harness.Start(t, opts)
	ready, err := p.WaitForLine(t.Context(), opts.ReadyLine)
	if err != nil {
		t.Fatal(err)
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-p.Done():
		t.Fatalf("round %d: the child exited by itself before it was killed", round)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if code, _ := p.Wait(); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("round %d: child exit status %d, want %d (killed)", round, code, 128+int(syscall.SIGKILL))
	}
	// Wait returned: the output is drained and OnLine has seen every line.
	synced, bad := lines.result()
	if len(bad) > 0 {
		t.Fatalf("round %d: unparsable synced lines: %q", round, bad)
	}
	for _, s := range synced {
		c.ledger[s.Partition] = append(c.ledger[s.Partition], ledgerEntry{round: round, Synced: s})
	}
	return childRun{ready: ready, synced: synced, truncations: strings.Count(p.Stderr(), "truncating log")}
}

// syncedLines collects a child's synced lines as its OnLine callback.
type syncedLines struct {
	mu     sync.Mutex
	synced []logbench.Synced
	bad    []string // lines that start like synced lines but do not parse
}

// add takes one line of stdout. The child writes each line with one
// write(2) of less than PIPE_BUF bytes, so no line arrives cut short.
func (l *syncedLines) add(line string) {
	if !strings.HasPrefix(line, "synced ") {
		return
	}
	s, err := logbench.ParseSynced(line)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.bad = append(l.bad, line)
		return
	}
	l.synced = append(l.synced, s)
}

// result returns the lines collected so far.
func (l *syncedLines) result() (synced []logbench.Synced, bad []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.synced, l.bad
}

// benchArgs is the command line of a child.
func benchArgs(cfg logbench.Config, round int) []string {
	return []string{
		"bench", "log", "--dir", cfg.Dir, "--keep", "--fsync", "--report-synced",
		"--partitions", strconv.Itoa(cfg.Partitions), "--writers", strconv.Itoa(cfg.Writers),
		"--record-size", strconv.Itoa(cfg.RecordSize), "--batch-bytes", strconv.Itoa(cfg.BatchBytes),
		"--segment-bytes", strconv.FormatInt(cfg.SegmentBytes, 10), "--duration", cfg.Duration.String(),
		"--run", strconv.Itoa(round),
	}
}

// leaveMode is how a round leaves the directory for the next child.
type leaveMode int

const (
	// leaveClosed checks (and so recovers) the directory and closes it
	// cleanly: the next child opens it without recovery.
	leaveClosed leaveMode = iota
	// leaveAbandoned checks the directory and abandons it (no flush, no
	// clean-shutdown marker): the next child recovers it again.
	leaveAbandoned
	// leaveUnchecked leaves the directory as the killed child left it: the
	// next child recovers its torn tails itself before appending, and the
	// next round's check covers both rounds' appends.
	leaveUnchecked
)

func (m leaveMode) String() string {
	return [...]string{"closed", "abandoned", "unchecked"}[m]
}

// recovery describes one in-process open of the directory.
type recovery struct {
	clean       bool
	truncations int
	ends        []int64
	segments    []int
}

// verify opens the directory after a kill, checks every partition, and
// closes it cleanly or abandons it (no flush, no clean-shutdown marker).
func (c *crashChecker) verify(round int, abandon bool) recovery {
	t := c.t
	logs := &testLogWriter{t: t, prefix: fmt.Sprintf("round %d: log: ", round)}
	m, err := log.OpenManager(log.ManagerConfig{
		Dir: c.dir, NoBackground: true,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	if err != nil {
		t.Fatalf("round %d: open manager: %v", round, err)
	}
	rec := recovery{clean: m.CleanShutdown()}
	if rec.clean {
		t.Errorf("round %d: the directory reports a clean shutdown after the child was killed", round)
	}
	for p := range int32(crashPartitions) {
		l, err := m.OpenLog(logbench.TopicPartition(p), c.logCfg, logbench.TopicID())
		if err != nil {
			m.Abandon()
			t.Fatalf("round %d: open partition %d: %v", round, p, err)
		}
		c.checkPartition(round, p, l)
		rec.ends = append(rec.ends, l.LogEndOffset())
		rec.segments = append(rec.segments, l.SegmentCount())
	}
	rec.truncations = logs.count("truncating log")
	if abandon {
		m.Abandon()
	} else if err := m.Close(); err != nil {
		t.Fatalf("round %d: close manager: %v", round, err)
	}
	return rec
}

// checkPartition reads partition p whole and checks it against what earlier
// rounds saw and what every child reported synced.
func (c *crashChecker) checkPartition(round int, p int32, l *log.Log) {
	t := c.t
	scan := &partitionScan{p: p, start: l.LogStartOffset(), prev: c.seen[p]}
	if err := scanLog(l, scan.check); err != nil {
		t.Errorf("round %d: partition %d: %v", round, p, err)
		return
	}
	if n := len(scan.prev); len(scan.marks) < n {
		t.Errorf("round %d: partition %d holds %d batches, up to offset %d; an earlier round saw %d, up to offset %d",
			round, p, len(scan.marks), l.LogEndOffset(), n, scan.prev[n-1].last)
		return
	}
	if scan.start != 0 {
		t.Errorf("round %d: partition %d: log start offset %d, want 0 (retention is off)", round, p, scan.start)
	}
	c.seen[p] = scan.marks
	c.checkLedger(round, p, l.LogEndOffset(), scan.marks)
}

// partitionScan checks the batches of one partition in offset order.
type partitionScan struct {
	p     int32
	start int64       // log start offset
	prev  []batchMark // what the last check found
	marks []batchMark // what this one found so far
}

// check takes the next batch b: it must pass its CRC, start right after the
// previous batch, and be the batch an earlier check saw at its place, or,
// past those, hold records that verify.
func (s *partitionScan) check(b []byte) error {
	rb, err := batch.Validate(b)
	if err != nil {
		return fmt.Errorf("batch at offset %d fails validation: %w", batch.BaseOffset(b), err)
	}
	want := s.start
	if n := len(s.marks); n > 0 {
		want = s.marks[n-1].last + 1
	}
	if rb.FirstOffset != want {
		return fmt.Errorf("batch at offset %d, want %d: offsets are not contiguous", rb.FirstOffset, want)
	}
	mark := batchMark{base: rb.FirstOffset, last: batch.LastOffset(b), crc: rb.CRC}
	if i := len(s.marks); i < len(s.prev) {
		// An earlier check recovered, and so fsynced, this batch: it must
		// still be the very same one.
		old := s.prev[i]
		mark.key = old.key
		if mark != old {
			return fmt.Errorf("batch %d (offsets [%d, %d], crc %#x) replaced the one an earlier round saw (offsets [%d, %d], crc %#x)",
				i, mark.base, mark.last, uint32(mark.crc), old.base, old.last, uint32(old.crc))
		}
	} else if mark.key, err = checkRecords(s.p, b); err != nil {
		return err
	}
	s.marks = append(s.marks, mark)
	return nil
}

// checkLedger checks that every append reported synced for partition p is
// the batch found at its offsets.
func (c *crashChecker) checkLedger(round int, p int32, end int64, marks []batchMark) {
	byBase := make(map[int64]batchMark, len(marks))
	for _, mk := range marks {
		byBase[mk.base] = mk
	}
	missing := 0
	for _, e := range c.ledger[p] {
		mk, ok := byBase[e.FirstOffset]
		want := logbench.Key{Run: int64(e.round), Partition: p, Writer: e.Writer, Seq: e.Seq}
		switch {
		case e.LastOffset >= end:
			c.t.Errorf("round %d: partition %d ends at offset %d, but round %d reported [%d, %d] synced (writer %d, append %d)",
				round, p, end, e.round, e.FirstOffset, e.LastOffset, e.Writer, e.Seq)
		case !ok:
			c.t.Errorf("round %d: partition %d: no batch starts at offset %d, reported synced in round %d as [%d, %d] (writer %d, append %d)",
				round, p, e.FirstOffset, e.round, e.FirstOffset, e.LastOffset, e.Writer, e.Seq)
		case mk.last != e.LastOffset || mk.key != want:
			c.t.Errorf("round %d: partition %d: batch [%d, %d] with records of %s, reported synced in round %d as [%d, %d] of %s",
				round, p, mk.base, mk.last, mk.key, e.round, e.FirstOffset, e.LastOffset, want)
		default:
			continue
		}
		if missing++; missing >= 10 {
			c.t.Errorf("round %d: partition %d: stopping after %d bad synced appends", round, p, missing)
			return
		}
	}
}

// checkRecords verifies each record of b, a batch of partition p: its value
// matches its key, the key names this partition and the record's offset
// delta, and all records come from one append. It returns the first
// record's key.
func checkRecords(p int32, b []byte) (logbench.Key, error) {
	var first logbench.Key
	n := int32(0)
	err := batch.ForEachRecord(b, len(b), func(r *kmsg.Record) error {
		k, err := logbench.VerifyRecord(r.Key, r.Value)
		if err != nil {
			return err
		}
		if n == 0 {
			first = k
		}
		same := k.Run == first.Run && k.Writer == first.Writer && k.Seq == first.Seq
		if k.Partition != p || k.Index != n || r.OffsetDelta != n || !same {
			return fmt.Errorf("record %d (offset delta %d) has key %s, want partition %d, index %d, append of %s", n, r.OffsetDelta, k, p, n, first)
		}
		n++
		return nil
	})
	if err != nil {
		return first, fmt.Errorf("batch at offset %d: %w", batch.BaseOffset(b), err)
	}
	if last := batch.LastOffsetDelta(b); n == 0 || last != n-1 {
		return first, fmt.Errorf("batch at offset %d holds %d records, last offset delta %d", batch.BaseOffset(b), n, last)
	}
	return first, nil
}

// scanLog calls fn with every batch of l, from its start to its end, in
// order.
func scanLog(l *log.Log, fn func(b []byte) error) error {
	end := l.LogEndOffset()
	for off := l.LogStartOffset(); off < end; {
		data, err := l.Read(off, log.ReadOptions{MaxBytes: 1 << 20})
		if err != nil {
			return fmt.Errorf("read at offset %d: %w", off, err)
		}
		if len(data) == 0 {
			return fmt.Errorf("read at offset %d returned nothing, log end offset %d", off, end)
		}
		batches, err := batch.Split(data)
		if err != nil {
			return fmt.Errorf("read at offset %d: %w", off, err)
		}
		for _, b := range batches {
			if batch.LastOffset(b) < off {
				return fmt.Errorf("read at offset %d returned the batch [%d, %d] before it", off, batch.BaseOffset(b), batch.LastOffset(b))
			}
			if err := fn(b); err != nil {
				return err
			}
			off = batch.LastOffset(b) + 1
		}
	}
	return nil
}

// testLogWriter passes the log manager's lines to the test log and keeps
// them for counting.
type testLogWriter struct {
	t      *testing.T
	prefix string
	mu     sync.Mutex
	lines  []string
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	line := string(bytes.TrimRight(p, "\n"))
	w.t.Log(w.prefix + line)
	w.mu.Lock()
	w.lines = append(w.lines, line)
	w.mu.Unlock()
	return len(p), nil
}

// count returns the number of lines holding s.
func (w *testLogWriter) count(s string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, l := range w.lines {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}
