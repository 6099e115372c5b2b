package log

// Throughput benchmarks of the storage engine, each beside a plain-file
// reference that moves the same bytes in the same pattern, so a run reports
// weir and its reference measured under the same conditions (the machine is
// shared). docs/benchmarks.md holds the figures and the commands to rerun.
//
// Sub-benchmark names are key=value pairs so benchstat can pivot them:
//
//	BenchmarkAppend/rec=1KiB/batch=16KiB/mode=nofsync
//	BenchmarkPlainFile/rec=1KiB/batch=16KiB/mode=write
//
// They only run with -bench; plain `go test` runs none of this code.

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirmq/weir/log/batch"
)

const (
	// benchRecycleBytes bounds what a no-fsync benchmark keeps on disk: after
	// this many bytes the log (or plain file) is thrown away and a fresh one
	// started, with the timer stopped. Dirty pages then stay far below the
	// kernel's writeback thresholds and are dropped with the file, so neither
	// side is throttled by the disk, and a run writes little to it.
	benchRecycleBytes = 256 << 20
	// benchSyncEvery is the plain file's fdatasync interval: the reference
	// that group commit's goal is set against (docs/benchmarks.md).
	benchSyncEvery = 1 << 20
	// Group commit: appenders over partitions, as docs/benchmarks.md
	// describes the measurement.
	benchAppenders  = 64
	benchPartitions = 16
	// benchReadSize is the log (and plain file) size read through.
	benchReadSize = 256 << 20
	benchReadMax  = 1 << 20
)

// benchShape is one cell of the record size x batch size matrix.
type benchShape struct {
	name   string
	record int // value bytes per record (no key, no headers)
	batch  int // exact encoded batch size, header included
}

var benchShapes = []benchShape{
	{"rec=1KiB/batch=16KiB", 1 << 10, 16 << 10},
	{"rec=1KiB/batch=1MiB", 1 << 10, 1 << 20},
	{"rec=100B/batch=16KiB", 100, 16 << 10},
	{"rec=100B/batch=1MiB", 100, 1 << 20},
}

// benchBatch builds an uncompressed v2 batch of records with random values of
// the shape's record size, exactly the shape's batch size long: the last
// record's value absorbs the rounding.
func benchBatch(b *testing.B, s benchShape, seed uint64) []byte {
	b.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	n := max(1, (s.batch-batch.HeaderSize)/(s.record+12))
	recs := make([]kmsg.Record, n)
	for i := range recs {
		v := make([]byte, s.record)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		recs[i] = kmsg.Record{OffsetDelta: int32(i), Value: v}
	}
	opts := batch.Options{
		ProducerID: batch.NoProducerID, ProducerEpoch: batch.NoProducerEpoch, BaseSequence: batch.NoSequence,
		PartitionLeaderEpoch: batch.NoPartitionLeaderEpoch, BaseTimestamp: time.Now().UnixMilli(),
	}
	last := &recs[n-1]
	for range 8 {
		buf, err := batch.Build(opts, recs)
		if err != nil {
			b.Fatalf("build batch: %v", err)
		}
		if len(buf) == s.batch {
			return buf
		}
		size := len(last.Value) + s.batch - len(buf)
		if size < 0 {
			b.Fatalf("batch of %d records is %d bytes, over %d", n, len(buf), s.batch)
		}
		last.Value = append(last.Value[:0], make([]byte, size)...)
	}
	b.Fatalf("cannot build a batch of exactly %d bytes", s.batch)
	return nil
}

// openBenchLog opens a fresh manager in dir with one log per partition. The
// manager is abandoned (no final fsync) and its files closed at cleanup.
func openBenchLog(b *testing.B, dir string, cfg Config, partitions int) (*Manager, []*Log) {
	b.Helper()
	m, err := OpenManager(ManagerConfig{Dir: dir, NoBackground: true})
	if err != nil {
		b.Fatalf("open manager: %v", err)
	}
	logs := make([]*Log, partitions)
	for p := range logs {
		if logs[p], err = m.OpenLog(TopicPartition{"bench", int32(p)}, cfg, [16]byte{}); err != nil {
			b.Fatalf("open log: %v", err)
		}
	}
	return m, logs
}

// BenchmarkAppend measures Log.Append. nofsync: one appender on one
// partition, flush.messages never (the default). groupcommit: 64 appenders
// over 16 partitions with flush.messages=1, each append followed by
// WaitFlushed for its last offset. segment.bytes is the default 1 GiB; the
// no-fsync log is recycled every 256 MiB, so no segment rolls are measured.
func BenchmarkAppend(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(s.name+"/mode=nofsync", func(b *testing.B) { benchAppendNoFsync(b, s) })
		b.Run(s.name+"/mode=groupcommit", func(b *testing.B) { benchAppendGroupCommit(b, s) })
	}
}

func benchAppendNoFsync(b *testing.B, s benchShape) {
	buf := benchBatch(b, s, 1)
	root := b.TempDir()
	generation := 0
	var m *Manager
	var l *Log
	fresh := func() {
		if m != nil {
			m.Abandon()
			if err := os.RemoveAll(filepath.Join(root, fmt.Sprint(generation-1))); err != nil {
				b.Fatal(err)
			}
		}
		var logs []*Log
		m, logs = openBenchLog(b, filepath.Join(root, fmt.Sprint(generation)), DefaultConfig(), 1)
		l = logs[0]
		generation++
	}
	fresh()
	b.Cleanup(func() { m.Abandon() })
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	written := 0
	b.ResetTimer()
	for range b.N {
		if written+len(buf) > benchRecycleBytes {
			b.StopTimer()
			fresh()
			written = 0
			b.StartTimer()
		}
		if _, err := l.Append(buf, AppendOptions{AssignOffsets: true}); err != nil {
			b.Fatal(err)
		}
		written += len(buf)
	}
	b.StopTimer()
}

func benchAppendGroupCommit(b *testing.B, s benchShape) {
	cfg := DefaultConfig()
	cfg.FlushMessages = 1
	m, logs := openBenchLog(b, b.TempDir(), cfg, benchPartitions)
	b.Cleanup(m.Abandon)
	// One buffer per appender: Append sets the base offset in place.
	bufs := make([][]byte, benchAppenders)
	bufs[0] = benchBatch(b, s, 1)
	for i := 1; i < len(bufs); i++ {
		bufs[i] = bytes.Clone(bufs[0])
	}
	b.SetBytes(int64(s.batch))
	b.ReportAllocs()
	start := make(chan struct{})
	errs := make(chan error, benchAppenders)
	var wg sync.WaitGroup
	for i := range benchAppenders {
		n := b.N / benchAppenders
		if i < b.N%benchAppenders {
			n++
		}
		l, buf := logs[i%benchPartitions], bufs[i]
		wg.Go(func() {
			<-start
			for range n {
				res, err := l.Append(buf, AppendOptions{AssignOffsets: true})
				if err == nil {
					err = l.WaitFlushed(res.LastOffset + 1)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	rounds := m.SyncRounds()
	b.ResetTimer()
	close(start)
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	if r := m.SyncRounds() - rounds; r > 0 {
		b.ReportMetric(float64(b.N)/float64(r), "appends/round")
	}
}

// BenchmarkPlainFile is the reference: the same batch bytes written to plain
// files with os.File.Write (write(2)), sequentially, in the same chunk sizes.
//
//	write: one file, no fsync, recycled every 256 MiB like the no-fsync log.
//	fdatasync=1MiB: one file, fdatasync after each MiB written (group
//	  commit's reference in docs/benchmarks.md).
//	groupsync=16files: group commit's own pattern with no log around it:
//	  each round writes 64 chunks round-robin over 16 files, then one
//	  goroutine fdatasyncs the 16 files, one after another.
//	groupsync=16files-parallel: the same, with the 16 fdatasyncs of a round
//	  issued at once from 16 goroutines (the file system can then commit
//	  them together).
func BenchmarkPlainFile(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(s.name+"/mode=write", func(b *testing.B) { benchPlainWrite(b, s) })
		b.Run(s.name+"/mode=fdatasync=1MiB", func(b *testing.B) { benchPlainFdatasync(b, s) })
		b.Run(s.name+"/mode=groupsync=16files", func(b *testing.B) { benchPlainGroupSync(b, s, false) })
		b.Run(s.name+"/mode=groupsync=16files-parallel", func(b *testing.B) { benchPlainGroupSync(b, s, true) })
	}
}

func createBenchFile(b *testing.B, path string) *os.File {
	b.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

func benchPlainWrite(b *testing.B, s benchShape) {
	buf := benchBatch(b, s, 1)
	path := filepath.Join(b.TempDir(), "plain")
	f := createBenchFile(b, path)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	written := 0
	b.ResetTimer()
	for range b.N {
		if written+len(buf) > benchRecycleBytes {
			b.StopTimer()
			f.Close()
			if err := os.Remove(path); err != nil {
				b.Fatal(err)
			}
			f = createBenchFile(b, path)
			written = 0
			b.StartTimer()
		}
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		written += len(buf)
	}
	b.StopTimer()
}

func benchPlainFdatasync(b *testing.B, s benchShape) {
	buf := benchBatch(b, s, 1)
	f := createBenchFile(b, filepath.Join(b.TempDir(), "plain"))
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	unsynced := 0
	b.ResetTimer()
	for i := range b.N {
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		unsynced += len(buf)
		if unsynced >= benchSyncEvery || i == b.N-1 {
			if err := syscall.Fdatasync(int(f.Fd())); err != nil {
				b.Fatal(err)
			}
			unsynced = 0
		}
	}
	b.StopTimer()
}

func benchPlainGroupSync(b *testing.B, s benchShape, parallel bool) {
	buf := benchBatch(b, s, 1)
	dir := b.TempDir()
	files := make([]*os.File, benchPartitions)
	for i := range files {
		files[i] = createBenchFile(b, filepath.Join(dir, fmt.Sprint(i)))
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		round := min(benchAppenders, b.N-done)
		for i := range round {
			if _, err := files[i%len(files)].Write(buf); err != nil {
				b.Fatal(err)
			}
		}
		if err := fdatasyncAll(files[:min(round, len(files))], parallel); err != nil {
			b.Fatal(err)
		}
		done += round
	}
	b.StopTimer()
	b.ReportMetric(float64(benchAppenders), "appends/round")
}

// fdatasyncAll syncs files one after another, or all at once.
func fdatasyncAll(files []*os.File, parallel bool) error {
	if !parallel {
		for _, f := range files {
			if err := syscall.Fdatasync(int(f.Fd())); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Go(func() { errs[i] = syscall.Fdatasync(int(f.Fd())) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// BenchmarkRead reads a 256 MiB log, already in the page cache, through from
// start to end and again, 1 MiB (ReadOptions.MaxBytes) per Log.Read, beside
// os.File.ReadAt of 1 MiB chunks of a plain file of the same size (into one
// reused buffer, and into a new buffer per read as Log.Read returns one).
// The log holds 16 KiB batches of 1 KiB records, so each read returns
// exactly 1 MiB.
func BenchmarkRead(b *testing.B) {
	s := benchShapes[0]
	buf := benchBatch(b, s, 1)
	dir := b.TempDir()
	m, logs := openBenchLog(b, filepath.Join(dir, "log"), DefaultConfig(), 1)
	b.Cleanup(m.Abandon)
	l := logs[0]
	f := createBenchFile(b, filepath.Join(dir, "plain"))
	for range benchReadSize / len(buf) {
		if _, err := l.Append(buf, AppendOptions{AssignOffsets: true}); err != nil {
			b.Fatal(err)
		}
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
	}
	// Write both back now so background writeback does not run during reads.
	if err := l.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	b.Run("src=weir", func(b *testing.B) { benchReadLog(b, l, len(buf)) })
	b.Run("src=plain/buf=reused", func(b *testing.B) { benchReadPlain(b, f, true) })
	b.Run("src=plain/buf=new", func(b *testing.B) { benchReadPlain(b, f, false) })
}

func benchReadLog(b *testing.B, l *Log, batchSize int) {
	b.SetBytes(benchReadMax)
	b.ReportAllocs()
	defer reportFaults(b)()
	off, end := l.LogStartOffset(), l.LogEndOffset()
	buf := make([]byte, benchReadMax)
	for range b.N {
		if off >= end {
			off = l.LogStartOffset()
		}
		data, err := l.Read(off, ReadOptions{MaxBytes: benchReadMax, Buf: buf})
		if err != nil {
			b.Fatal(err)
		}
		if len(data) != benchReadMax {
			b.Fatalf("read at %d: %d bytes, want %d", off, len(data), benchReadMax)
		}
		off = batch.LastOffset(data[len(data)-batchSize:]) + 1
	}
}

func benchReadPlain(b *testing.B, f *os.File, reuse bool) {
	b.SetBytes(benchReadMax)
	b.ReportAllocs()
	defer reportFaults(b)()
	var buf []byte
	pos := int64(0)
	for range b.N {
		if pos >= benchReadSize {
			pos = 0
		}
		if buf == nil || !reuse {
			buf = make([]byte, benchReadMax)
		}
		if _, err := f.ReadAt(buf, pos); err != nil {
			b.Fatal(err)
		}
		pos += benchReadMax
	}
}

// reportFaults reports the process's minor page faults per op between the
// call and the call of the function it returns: a new buffer per read makes
// the runtime hand back memory its scavenger returned to the OS, which the
// kernel then faults in (and zeroes) page by page.
func reportFaults(b *testing.B) func() {
	minflt := func() int64 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return ru.Minflt
	}
	start := minflt()
	return func() { b.ReportMetric(float64(minflt()-start)/float64(b.N), "faults/op") }
}
