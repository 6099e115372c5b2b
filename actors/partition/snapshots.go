package partition

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

// Producer snapshot files, as Kafka's ProducerStateManager keeps them: one
// "<offset>.snapshot" per snapshot in the partition directory, named by the
// 20-digit offset the log must be replayed from (ProducerState.EndOffset).
const (
	snapshotSuffix = ".snapshot"
	// snapshotsToKeep is how many snapshots survive a new one: the newest
	// and one older, to fall back on if the newest is corrupt.
	snapshotsToKeep = 2
)

// snapshotFileName is the file name of the snapshot at offset.
func snapshotFileName(offset int64) string {
	return fmt.Sprintf("%020d%s", offset, snapshotSuffix)
}

// parseSnapshotFileName returns the offset of a snapshot file name.
func parseSnapshotFileName(name string) (int64, bool) {
	digits, ok := strings.CutSuffix(name, snapshotSuffix)
	if !ok || len(digits) != 20 {
		return 0, false
	}
	off, err := strconv.ParseInt(digits, 10, 64)
	return off, err == nil && off >= 0
}

// listSnapshots returns the offsets of the snapshots in dir, ascending.
func listSnapshots(fsys log.FS, dir string) ([]int64, error) {
	names, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("partition: list producer snapshots in %s: %w", dir, err)
	}
	var offs []int64
	for _, n := range names {
		if off, ok := parseSnapshotFileName(n); ok {
			offs = append(offs, off)
		}
	}
	slices.Sort(offs)
	return offs, nil
}

// removeSnapshot deletes the snapshot at offset; a missing file is fine.
func removeSnapshot(fsys log.FS, dir string, offset int64) error {
	p := filepath.Join(dir, snapshotFileName(offset))
	if err := fsys.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("partition: remove producer snapshot %s: %w", p, err)
	}
	return nil
}

// replayInfo says how the producer state was rebuilt.
type replayInfo struct {
	// snapshot is the offset of the snapshot loaded, -1 if none.
	snapshot int64
	// batches is the number of batch headers replayed from the log.
	batches int
}

// recoverProducerState rebuilds the producer state of l (duty 1): the
// snapshots outside [log start, log end] are deleted (a truncated log, a
// moved log start), the newest valid one is loaded (a corrupt one is
// logged once, deleted, and an older one tried), and the batch headers
// from its offset to the log end are replayed.
func recoverProducerState(l *log.Log, logger *slog.Logger) (*ProducerState, replayInfo, error) {
	fsys, dir := l.FS(), l.Dir()
	start, end := l.LogStartOffset(), l.LogEndOffset()
	offs, err := listSnapshots(fsys, dir)
	if err != nil {
		return nil, replayInfo{}, err
	}
	ps, info := NewProducerState(), replayInfo{snapshot: -1}
	for i := len(offs) - 1; i >= 0; i-- {
		off := offs[i]
		if off > end || off < start {
			if err := removeSnapshot(fsys, dir, off); err != nil {
				return nil, replayInfo{}, err
			}
			continue
		}
		if info.snapshot >= 0 {
			continue // keep the older ones as fallbacks
		}
		loaded, err := readSnapshot(fsys, dir, off)
		if err != nil {
			logger.Warn("partition actor: ignoring producer snapshot", "offset", off, "err", err)
			if err := removeSnapshot(fsys, dir, off); err != nil {
				return nil, replayInfo{}, err
			}
			continue
		}
		ps, info.snapshot = loaded, off
	}
	n, err := replayHeaders(l, ps, max(ps.EndOffset(), start), end)
	if err != nil {
		return nil, replayInfo{}, err
	}
	info.batches = n
	ps.SkipTo(end)
	return ps, info, nil
}

// readSnapshot loads the snapshot at off, checking that it covers the log
// below off.
func readSnapshot(fsys log.FS, dir string, off int64) (*ProducerState, error) {
	data, err := log.ReadFile(fsys, filepath.Join(dir, snapshotFileName(off)))
	if err != nil {
		return nil, fmt.Errorf("partition: read producer snapshot: %w", err)
	}
	ps := NewProducerState()
	if err := ps.LoadSnapshot(data); err != nil {
		return nil, err
	}
	if ps.EndOffset() != off {
		return nil, fmt.Errorf("%w: end offset %d in a file named %d", ErrCorruptSnapshot, ps.EndOffset(), off)
	}
	return ps, nil
}

// replayHeaders feeds every batch header of l in [from, end) to ps and
// returns how many it read.
func replayHeaders(l *log.Log, ps *ProducerState, from, end int64) (int, error) {
	n := 0
	for off := from; off < end; {
		buf, err := l.Read(off, log.ReadOptions{MaxBytes: 1 << 20})
		if err != nil {
			return n, fmt.Errorf("partition: replaying %s at %d: %w", l.TopicPartition(), off, err)
		}
		bs, err := batch.Split(buf)
		if err != nil {
			return n, fmt.Errorf("partition: replaying %s at %d: %w", l.TopicPartition(), off, err)
		}
		if len(bs) == 0 {
			return n, fmt.Errorf("partition: replaying %s: no batch at %d below log end %d: %w", l.TopicPartition(), off, end, ErrNotStarted)
		}
		for _, b := range bs {
			h, err := batch.ParseHeader(b)
			if err != nil {
				return n, fmt.Errorf("partition: replaying %s at %d: %w", l.TopicPartition(), off, err)
			}
			ps.ObserveBatch(BatchFromHeader(h))
			off = batch.LastOffset(b) + 1
			n++
		}
	}
	return n, nil
}

// snapshotJob is one snapshot to write.
type snapshotJob struct {
	offset int64
	data   []byte
}

// snapshotWriter writes producer snapshots off the actor's mailbox: one
// goroutine at a time, started on demand, writes the latest job (a newer
// job replaces one not yet started) with log.WriteFileAtomic, then keeps
// only the newest snapshotsToKeep snapshots. write and wait are called
// from the actor only.
type snapshotWriter struct {
	fsys   log.FS
	dir    string
	logger *slog.Logger
	wg     sync.WaitGroup

	mu      sync.Mutex
	next    *snapshotJob
	running bool
	// written counts the snapshots written, for tests.
	written int
}

// write schedules a snapshot; it never waits.
func (w *snapshotWriter) write(offset int64, data []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.next = &snapshotJob{offset: offset, data: data}
	if w.running {
		return
	}
	w.running = true
	w.wg.Add(1)
	go w.loop()
}

// wait blocks until every scheduled snapshot is written.
func (w *snapshotWriter) wait() { w.wg.Wait() }

func (w *snapshotWriter) loop() {
	defer w.wg.Done()
	for {
		w.mu.Lock()
		j := w.next
		w.next = nil
		if j == nil {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		if err := w.do(j); err != nil {
			w.logger.Warn("partition actor: producer snapshot not written", "offset", j.offset, "err", err)
		}
	}
}

// do writes j durably and deletes the snapshots older than the newest
// snapshotsToKeep.
func (w *snapshotWriter) do(j *snapshotJob) error {
	if err := log.WriteFileAtomic(w.fsys, filepath.Join(w.dir, snapshotFileName(j.offset)), j.data); err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	w.mu.Lock()
	w.written++
	w.mu.Unlock()
	offs, err := listSnapshots(w.fsys, w.dir)
	if err != nil {
		return err
	}
	for len(offs) > snapshotsToKeep {
		if err := removeSnapshot(w.fsys, w.dir, offs[0]); err != nil {
			return err
		}
		offs = offs[1:]
	}
	return nil
}

// writtenCount returns how many snapshots were written.
func (w *snapshotWriter) writtenCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written
}
