package log

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// TestManyPartitionsFitOpenFileLimit opens thousands of partitions with a
// small open-file budget and checks every one is written, read back and
// reopened while the files held open stay within the budget.
func TestManyPartitionsFitOpenFileLimit(t *testing.T) {
	const partitions, budget = 1000, 32
	if testing.Short() {
		t.Skip("writes thousands of files")
	}
	dir := t.TempDir()
	clock := &testClock{ms: 1_700_000_000_000}
	baseline := openFDs(t)
	// The process may hold a few more descriptors briefly (an index being
	// written, the test's own files); never anything near one per partition.
	checkFDs := func(when string) {
		t.Helper()
		if n := openFDs(t) - baseline; n > budget+8 {
			t.Fatalf("%s: %d more descriptors open than at the start, budget %d", when, n, budget)
		}
	}
	open := func() *Manager {
		m, err := OpenManager(ManagerConfig{Dir: dir, Now: clock.now, NoBackground: true, MaxOpenFiles: budget})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := open()
	cfg := DefaultConfig()
	for p := range partitions {
		l, err := m.OpenLog(TopicPartition{"wide", int32(p)}, cfg, [16]byte{1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(makeBatch(t, p, 2, clock.ms, 10), AppendOptions{AssignOffsets: true}); err != nil {
			t.Fatal(err)
		}
		if p%100 == 0 {
			checkFDs(fmt.Sprintf("partition %d", p))
		}
	}
	for _, l := range m.Logs() {
		if got := readAll(t, l, 1<<20); len(got) != 1 {
			t.Fatalf("%s: %d batches", l.TopicPartition(), len(got))
		}
	}
	checkFDs("after reads")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if n := openFDs(t) - baseline; n > 0 {
		t.Fatalf("%d descriptors still open after close", n)
	}
	m = open()
	defer m.Close()
	parts, err := m.Partitions()
	if err != nil || len(parts) != partitions {
		t.Fatalf("found %d partitions (%v)", len(parts), err)
	}
	for _, tp := range parts {
		l, err := m.OpenLog(tp, cfg, [16]byte{})
		if err != nil {
			t.Fatal(err)
		}
		if l.LogEndOffset() != 2 {
			t.Fatalf("%s: log end %d after reopen", tp, l.LogEndOffset())
		}
	}
	checkFDs("after reopen")
}

// openFDs counts this process's open file descriptors.
func openFDs(t testing.TB) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count descriptors: %v", err)
	}
	return len(entries)
}

// TestGroupCommitSharesFsync runs many appenders that each wait for their
// append to be durable and checks that fsync rounds are shared and every
// acknowledged append survives a power cut.
func TestGroupCommitSharesFsync(t *testing.T) {
	const partitions, appenders, perAppender = 8, 32, 20
	fsys := NewMemFS()
	clock := &testClock{ms: 1_700_000_000_000}
	m := openTestManager(t, fsys, "/d", clock)
	// A disk whose fsync takes a while, as real ones do.
	fsys.SetFaults(func(op, _ string) error {
		if op == "sync" {
			time.Sleep(200 * time.Microsecond)
		}
		return nil
	})
	cfg := smallConfig()
	cfg.FlushMessages = 1
	logs := make([]*Log, partitions)
	for p := range logs {
		var err error
		if logs[p], err = m.OpenLog(TopicPartition{"gc", int32(p)}, cfg, [16]byte{2}); err != nil {
			t.Fatal(err)
		}
	}
	type ack struct {
		p    int
		last int64
	}
	acks := make(chan ack, appenders*perAppender)
	var wg sync.WaitGroup
	for a := range appenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := logs[a%partitions]
			for i := range perAppender {
				res, err := l.Append(makeBatch(t, a*1000+i, 3, 1, 40), AppendOptions{AssignOffsets: true})
				if err != nil {
					t.Error(err)
					return
				}
				if err := l.WaitFlushed(res.LastOffset + 1); err != nil {
					t.Error(err)
					return
				}
				if l.FlushedOffset() <= res.LastOffset {
					t.Errorf("flushed offset %d after waiting for %d", l.FlushedOffset(), res.LastOffset)
				}
				acks <- ack{a % partitions, res.LastOffset}
			}
		}()
	}
	wg.Wait()
	close(acks)
	rounds, syncs := m.SyncRounds(), fsys.SyncCount()
	total := appenders * perAppender
	t.Logf("%d appends acknowledged with %d fsyncs in %d rounds", total, syncs, rounds)
	if rounds >= uint64(total) || syncs >= total {
		t.Fatalf("%d fsyncs in %d rounds for %d appends: group commit shares nothing", syncs, rounds, total)
	}
	fsys.PowerCutDropAll()
	m.Abandon()
	m = openTestManager(t, fsys, "/d", clock)
	defer m.Close()
	ends := map[int]int64{}
	for a := range acks {
		ends[a.p] = max(ends[a.p], a.last+1)
	}
	for p, end := range ends {
		l, err := m.OpenLog(TopicPartition{"gc", int32(p)}, cfg, [16]byte{})
		if err != nil {
			t.Fatal(err)
		}
		if l.LogEndOffset() < end {
			t.Fatalf("partition %d: log end %d after power cut, %d acknowledged as synced", p, l.LogEndOffset(), end)
		}
		readAll(t, l, 1<<16)
	}
}
