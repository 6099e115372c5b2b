package log

import (
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weirmq/weir/log/batch"
)

// countingFS counts the bytes read from segment files.
type countingFS struct {
	FS
	read atomic.Int64
}

func (c *countingFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := c.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return &countingFile{File: f, read: &c.read}, nil
}

type countingFile struct {
	File
	read *atomic.Int64
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.read.Add(int64(n))
	return n, err
}

// A read takes from the segment at most MaxBytes, or the first batch when
// it is larger (KIP-74), which it reads once; with HardMaxBytes such a
// batch is neither read nor returned.
func TestReadBoundedByMaxBytes(t *testing.T) {
	fs := &countingFS{FS: OSFS{}}
	m := openTestManager(t, fs, t.TempDir(), &testClock{ms: 1_700_000_000_000})
	defer m.Close()
	l, err := m.OpenLog(TopicPartition{"r", 0}, DefaultConfig(), [16]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	small := len(makeBatch(t, 0, 1, 1, 30<<10))
	for i := range 12 {
		size := 30 << 10
		if i == 0 {
			size = 200 << 10
		}
		if _, err := l.Append(makeBatch(t, i, 1, 1, size), AppendOptions{AssignOffsets: true}); err != nil {
			t.Fatal(err)
		}
	}
	read := func(offset int64, opts ReadOptions) ([]byte, int64) {
		t.Helper()
		before := fs.read.Load()
		data, err := l.Read(offset, opts)
		if err != nil {
			t.Fatal(err)
		}
		return data, fs.read.Load() - before
	}
	const scan = headerScanChunk // locating the batch
	// The 200 KiB first batch, asked for with 64 KiB: read once, whole.
	data, n := read(0, ReadOptions{MaxBytes: 64 << 10})
	if bs, _ := batch.Split(data); len(bs) != 1 || len(data) < 200<<10 || n > int64(len(data))+scan {
		t.Fatalf("oversized first batch: %d bytes in %d batches, %d read", len(data), len(bs), n)
	}
	// With a hard limit it is not read at all.
	if data, n = read(0, ReadOptions{MaxBytes: 64 << 10, HardMaxBytes: true}); len(data) != 0 || n > scan {
		t.Fatalf("hard limit: %d bytes returned, %d read", len(data), n)
	}
	// Batches that fit: at most MaxBytes read, every whole batch within it returned.
	data, n = read(1, ReadOptions{MaxBytes: 100 << 10})
	if bs, _ := batch.Split(data); len(bs) != (100<<10)/small || n > 100<<10+scan {
		t.Fatalf("small batches: %d bytes in %d batches, %d read", len(data), len(bs), n)
	}
}
