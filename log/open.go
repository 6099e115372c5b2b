package log

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/weirmq/weir/log/batch"
)

// loadLog opens the partition directory dir, recovering it when the last
// shutdown was not clean.
func (m *Manager) loadLog(tp TopicPartition, dir string, cfg Config) (*Log, error) {
	return m.loadLogFrom(tp, dir, cfg, -1)
}

// loadLogFrom is loadLog; with forceFrom >= 0 it recovers from that offset
// whatever the checkpoints say (ReopenLog: the log failed in this process).
func (m *Manager) loadLogFrom(tp TopicPartition, dir string, cfg Config, forceFrom int64) (*Log, error) {
	l := &Log{m: m, tp: tp, dir: dir, cfg: cfg}
	names, err := m.fs.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("open log %s: %w", dir, err)
	}
	if names, err = m.removeLeftovers(dir, names); err != nil {
		return nil, err
	}
	for _, name := range names {
		base, ok := parseSegmentFileName(name, logSuffix)
		if !ok {
			continue
		}
		seg := newSegment(dir, base)
		if seg.size, err = m.fs.Stat(seg.logPath); err != nil {
			return nil, fmt.Errorf("open log %s: %w", dir, err)
		}
		seg.synced, seg.created = seg.size, m.nowMs()
		l.segs = append(l.segs, seg)
	}
	sort.Slice(l.segs, func(i, j int) bool { return l.segs[i].base < l.segs[j].base })
	logStart, hasStart := m.logStarts[tp] // the caller holds m.mu
	recoveryPoint, hasRecovery := m.recoveryPoints[tp]
	clean := m.cleanShutdown
	if forceFrom >= 0 {
		clean, recoveryPoint = false, min(recoveryPoint, forceFrom)
		if !hasRecovery {
			recoveryPoint = forceFrom
		}
	}
	// A lost epoch checkpoint is rebuilt from the segments recovery will not
	// scan (recovery assigns epochs from the batches it validates).
	trusted := len(l.segs)
	if !clean || !hasRecovery {
		trusted = max(l.segmentFor(recoveryPoint), 0)
	}
	rebuilt, err := l.loadEpochs(trusted)
	if err != nil {
		return nil, err
	}
	if len(l.segs) == 0 {
		seg, err := l.createSegment(logStart)
		if err != nil {
			return nil, err
		}
		l.segs = []*segment{seg}
		l.leo = logStart
	} else if clean && hasRecovery {
		if err := l.loadClean(); err != nil {
			if !isCorruption(err) {
				return nil, err
			}
			m.logger.Warn("clean load failed, recovering", "partition", tp.String(), "reason", err)
			err = l.recover(recoveryPoint)
			if err != nil {
				return nil, err
			}
		}
	} else if err := l.recover(recoveryPoint); err != nil {
		return nil, err
	}
	l.logStart = l.segs[0].base
	if hasStart && logStart > l.logStart {
		l.logStart = logStart
	}
	if l.logStart > l.leo {
		if err := l.truncateFullyLocked(l.logStart); err != nil {
			return nil, err
		}
	}
	l.flushed, l.recoveryPoint = l.leo, l.leo
	a := l.epochs.truncateFromEnd(l.leo)
	b := l.epochs.truncateFromStart(l.logStart)
	if a || b || rebuilt && len(l.epochs.entries) > 0 {
		if err := l.writeEpochsLocked(); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// removeLeftovers deletes temporary and half-deleted files and completes an
// interrupted compaction swap; it returns the remaining names.
func (m *Manager) removeLeftovers(dir string, names []string) ([]string, error) {
	var swaps, keep []string
	for _, name := range names {
		switch {
		case strings.HasSuffix(name, ".tmp"), strings.HasSuffix(name, cleanedSuffix), strings.HasSuffix(name, deletedSuffix):
			if err := m.fs.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("remove leftover %s: %w", filepath.Join(dir, name), err)
			}
		case strings.HasSuffix(name, swapSuffix):
			swaps = append(swaps, name)
		default:
			keep = append(keep, name)
		}
	}
	if len(swaps) == 0 {
		return keep, nil
	}
	if err := m.completeSwaps(dir, swaps, keep); err != nil {
		return nil, err
	}
	names, err := m.fs.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("open log %s: %w", dir, err)
	}
	return names, nil
}

// loadEpochs reads leader-epoch-checkpoint. A missing or unreadable file is
// rebuilt from the batch headers of the first trusted segments.
func (l *Log) loadEpochs(trusted int) (rebuilt bool, err error) {
	path := filepath.Join(l.dir, epochCheckpoint)
	data, err := ReadFile(l.m.fs, path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("open log %s: %w", l.dir, err)
	}
	if err == nil {
		c, derr := decodeEpochCheckpoint(path, data)
		if derr == nil {
			l.epochs = c
			return false, nil
		}
		l.m.logger.Warn("rebuilding leader epoch checkpoint", "reason", derr)
	}
	return true, l.rebuildEpochs(l.segs[:trusted])
}

// rebuildEpochs reads the batch headers of segs to rebuild the epoch cache;
// a corrupt tail is left for recovery to judge.
func (l *Log) rebuildEpochs(segs []*segment) error {
	l.epochs = epochCache{}
	for _, seg := range segs {
		if seg.size == 0 {
			continue
		}
		cf, err := l.m.files.acquire(seg.logPath, false)
		if err != nil {
			return err
		}
		sc := newBatchScanner(cf.f, seg.logPath, 0, seg.size, false)
		for _, b, ok := sc.next(); ok; _, b, ok = sc.next() {
			l.epochs.assign(batch.PartitionLeaderEpoch(b), batch.BaseOffset(b))
		}
		l.m.files.release(cf)
		if sc.err != nil {
			break
		}
	}
	return nil
}

// writeEpochsLocked persists the leader-epoch cache.
func (l *Log) writeEpochsLocked() error {
	return WriteFileAtomic(l.m.fs, filepath.Join(l.dir, epochCheckpoint), l.epochs.encode())
}

// loadClean opens a cleanly shut down log: indexes are trusted (and checked
// when loaded); only the active segment's tail is read to find the log end.
func (l *Log) loadClean() error {
	l.leo = math.MaxInt64 // unknown until the tail is read: no bound for index checks
	end, err := l.endOfSegment(len(l.segs) - 1)
	if err != nil {
		return err
	}
	l.leo = end
	return nil
}

// recover scans every segment from the one holding recoveryPoint: each
// batch's length, magic, CRC and offsets are checked and the indexes and
// epoch cache rebuilt; the log is truncated at the first bad batch and later
// segments are deleted. Unless the log is compacted, offsets must also be
// contiguous: a roll always starts the next segment at the log end, so a
// hole means the tail before it never reached the disk (a power cut can make
// a new segment's name durable before the previous one's data). Recovered
// data, the directory and the epoch cache are then made durable.
func (l *Log) recover(recoveryPoint int64) error {
	from := max(l.segmentFor(recoveryPoint), 0)
	next, err := l.endOfSegment(from - 1)
	for err != nil {
		if !isCorruption(err) {
			return err
		}
		// The segment below the recovery point is damaged too: scan it.
		l.m.logger.Warn("recovering from an earlier segment", "partition", l.tp.String(), "reason", err)
		from--
		next, err = l.endOfSegment(from - 1)
	}
	for i := from; i < len(l.segs); i++ {
		seg := l.segs[i]
		end, last, err := l.recoverSegment(seg, next)
		if last >= 0 {
			next = last + 1
		} else if l.cfg.CleanupCompact || i == 0 {
			next = max(next, seg.base)
		}
		if err == nil && (seg.size > 0 || seg.base <= next || i == 0) {
			continue
		}
		if err != nil && !isCorruption(err) {
			return fmt.Errorf("recover %s: %w", l.dir, err)
		}
		if err == nil {
			// An empty segment past a hole: its predecessor's tail was lost.
			err = fmt.Errorf("%w: %s: empty segment based at %d after the log ends at %d", ErrCorrupt, seg.logPath, seg.base, next)
		}
		l.m.logger.Warn("found invalid data, truncating log", "partition", l.tp.String(), "segment", seg.logPath, "position", end, "reason", err)
		keep := i + 1
		if end == 0 && i > 0 {
			keep = i // nothing valid in it: drop the segment itself
		}
		if keep > i {
			if terr := l.truncateSegmentFile(seg, end); terr != nil {
				return terr
			}
		}
		for _, gone := range l.segs[keep:] {
			if derr := l.deleteSegmentFiles(gone); derr != nil {
				return derr
			}
		}
		l.segs = l.segs[:keep]
		break
	}
	from = min(from, len(l.segs)-1)
	for _, seg := range l.segs[from : len(l.segs)-1] {
		seg.sealTimeIndex() // rolled segments end with their max timestamp
	}
	l.leo = max(next, l.active().base)
	for _, seg := range l.segs[from:] {
		if err := l.syncSegment(seg); err != nil {
			return fmt.Errorf("recover %s: %w", l.dir, err)
		}
		seg.synced = seg.size
	}
	// Names the crashed process created may not be durable yet.
	l.dirDirty = true
	if err := l.syncDirIfDirty(); err != nil {
		return err
	}
	if err := l.m.fs.SyncDir(l.m.dir); err != nil {
		return fmt.Errorf("recover %s: %w", l.dir, err)
	}
	l.epochs.truncateFromEnd(l.leo)
	return l.writeEpochsLocked()
}

// endOfSegment returns the offset after the last batch of segment i (trusted,
// below the recovery point), or the first segment's base for i < 0.
func (l *Log) endOfSegment(i int) (int64, error) {
	if i < 0 {
		return l.segs[0].base, nil
	}
	seg := l.segs[i]
	if err := l.ensureLoaded(seg); err != nil {
		return 0, err
	}
	idxOff, pos := seg.index.lookupOffset(math.MaxInt64)
	cf, err := l.m.files.acquire(seg.logPath, false)
	if err != nil {
		return 0, err
	}
	defer l.m.files.release(cf)
	// The end comes from the last batch: check the tail (at most one index
	// interval) as recovery would, so a damaged header never sets it. Base
	// offsets lie outside the CRC: the batch at the indexed position must
	// end where its index entry says, and every batch must fit the
	// segment's offset range, so a flipped high bit is caught too.
	chain := l.newOffsetChain(seg)
	chain.end = math.MaxInt64
	if pos == 0 && !chain.gaps {
		chain.prev = seg.base - 1
	}
	end := seg.base
	sc := newBatchScanner(cf.f, seg.logPath, pos, seg.size, true)
	for p, b, ok := sc.next(); ok; p, b, ok = sc.next() {
		if _, err := batch.Validate(b); err != nil {
			return 0, fmt.Errorf("%w: %s at position %d: %w", ErrCorrupt, seg.logPath, p, err)
		}
		if p == pos && pos > 0 && batch.LastOffset(b) != idxOff {
			return 0, fmt.Errorf("%w: %s at position %d: batch ends at %d, its index entry says %d",
				ErrCorrupt, seg.logPath, p, batch.LastOffset(b), idxOff)
		}
		if !seg.fitsOffset(batch.LastOffset(b)) {
			return 0, fmt.Errorf("%w: %s at position %d: batch offsets [%d, %d] outside a segment based at %d",
				ErrCorrupt, seg.logPath, p, batch.BaseOffset(b), batch.LastOffset(b), seg.base)
		}
		if err := chain.check(p, b); err != nil {
			return 0, err
		}
		end = batch.LastOffset(b) + 1
	}
	if sc.err != nil {
		return 0, fmt.Errorf("%w: %w", ErrCorrupt, sc.err)
	}
	return end, nil
}

// recoverSegment validates seg's batches from position 0 and rebuilds its
// indexes. It returns the end of the valid data, the last valid offset (-1
// if none) and, when it stopped early, why.
func (l *Log) recoverSegment(seg *segment, next int64) (int64, int64, error) {
	cf, err := l.m.files.acquire(seg.logPath, false)
	if err != nil {
		return 0, -1, err
	}
	defer l.m.files.release(cf)
	size := seg.size
	seg.resetIndexes()
	seg.size = 0
	last := int64(-1)
	sc := newBatchScanner(cf.f, seg.logPath, 0, size, true)
	for p, b, ok := sc.next(); ok; p, b, ok = sc.next() {
		if _, err := batch.Validate(b); err != nil {
			return p, last, fmt.Errorf("%w: %s at position %d: %w", ErrCorrupt, seg.logPath, p, err)
		}
		base := batch.BaseOffset(b)
		gap := base != next && !l.cfg.CleanupCompact
		if base < next || gap || base < seg.base || !seg.fitsOffset(batch.LastOffset(b)) {
			return p, last, fmt.Errorf("%w: %s at position %d: batch offsets [%d, %d] do not follow %d in a segment based at %d",
				ErrCorrupt, seg.logPath, p, base, batch.LastOffset(b), next, seg.base)
		}
		seg.observe(b, p, int64(len(b)), l.cfg.IndexIntervalBytes)
		seg.size = p + int64(len(b))
		last = batch.LastOffset(b)
		next = last + 1
		l.epochs.assign(batch.PartitionLeaderEpoch(b), base)
	}
	if sc.err != nil {
		return seg.size, last, sc.err
	}
	return seg.size, last, nil
}

// truncateSegmentFile cuts seg's .log at size and drops index entries past it.
func (l *Log) truncateSegmentFile(seg *segment, size int64) error {
	cf, err := l.m.files.acquire(seg.logPath, false)
	if err != nil {
		return err
	}
	defer l.m.files.release(cf)
	if err := cf.f.Truncate(size); err != nil {
		return fmt.Errorf("truncate %s to %d: %w", seg.logPath, size, err)
	}
	if err := cf.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", seg.logPath, err)
	}
	seg.size = size
	seg.synced = min(seg.synced, size)
	seg.index.truncateOffsetsFrom(size)
	return nil
}

// deleteSegmentFiles removes a segment's files.
func (l *Log) deleteSegmentFiles(seg *segment) error {
	for _, p := range []string{seg.logPath, seg.index.path, seg.timeIndex.path} {
		l.m.files.drop(p)
		if err := l.m.fs.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete segment file %s: %w", p, err)
		}
	}
	l.dirDirty = true
	return nil
}
