package log

import (
	"fmt"

	"github.com/weirmq/weir/log/batch"
)

// TruncateTo removes every batch at or past offset (a follower diverging from
// its leader). A batch that straddles offset is removed whole, so the new log
// end offset may be below offset; it is returned. The cut is durable on
// return.
func (l *Log) TruncateTo(offset int64) (int64, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return 0, fmt.Errorf("truncate %s: %w", l.tp, ErrClosed)
	}
	if offset < 0 {
		l.mu.Unlock()
		return 0, fmt.Errorf("truncate %s to %d: %w", l.tp, offset, ErrInvalidOffset)
	}
	if offset >= l.leo {
		defer l.mu.Unlock()
		return l.leo, nil
	}
	end, err := l.truncateLocked(offset)
	l.mu.Unlock()
	if err != nil {
		return 0, err
	}
	// The checkpointed recovery point may lie past the new end: lower it
	// durably, or a crash would trust index files the cut made stale.
	if err := l.m.writeRecoveryCheckpoint(); err != nil {
		return 0, fmt.Errorf("truncate %s to %d: %w", l.tp, offset, err)
	}
	// Data appended past the cut is dirty again for the cleaner.
	if err := l.m.writeCleanerCheckpoint(l.tp, end, true); err != nil {
		return 0, fmt.Errorf("truncate %s to %d: %w", l.tp, offset, err)
	}
	return end, nil
}

// TruncateFullyAndStartAt deletes every segment and restarts the log empty
// at offset, which becomes its log start and log end offset, whatever they
// were (a follower whose log ends below its leader's log start offset, or
// whose first fetched batch starts below its empty log's start: Kafka's
// UnifiedLog.truncateFullyAndStartAt). The leader-epoch cache is cleared.
// The cut is durable on return.
func (l *Log) TruncateFullyAndStartAt(offset int64) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return fmt.Errorf("truncate %s fully: %w", l.tp, ErrClosed)
	}
	if offset < 0 {
		l.mu.Unlock()
		return fmt.Errorf("truncate %s fully to start at %d: %w", l.tp, offset, ErrInvalidOffset)
	}
	err := l.truncateFullyLocked(offset)
	if err == nil && len(l.epochs.entries) > 0 {
		l.epochs.entries = nil
		err = l.writeEpochsLocked()
	}
	if err == nil {
		l.flushed = offset // nothing below the empty log's end to flush
	}
	l.mu.Unlock()
	if err != nil {
		return fmt.Errorf("truncate %s fully to start at %d: %w", l.tp, offset, err)
	}
	if err := l.m.writeRecoveryCheckpoint(); err != nil {
		return fmt.Errorf("truncate %s fully to start at %d: %w", l.tp, offset, err)
	}
	if err := l.m.writeLogStartCheckpoint(); err != nil {
		return fmt.Errorf("truncate %s fully to start at %d: %w", l.tp, offset, err)
	}
	if err := l.m.writeCleanerCheckpoint(l.tp, offset, true); err != nil {
		return fmt.Errorf("truncate %s fully to start at %d: %w", l.tp, offset, err)
	}
	return nil
}

// truncateLocked cuts the log below its end; see TruncateTo.
func (l *Log) truncateLocked(offset int64) (int64, error) {
	if offset <= l.logStart {
		return offset, l.truncateFullyLocked(offset)
	}
	i := l.segmentFor(offset)
	for len(l.segs) > i+1 {
		if err := l.deleteSegmentFiles(l.active()); err != nil {
			return 0, err
		}
		l.segs = l.segs[:len(l.segs)-1]
	}
	seg := l.segs[i]
	if err := l.ensureLoaded(seg); err != nil {
		return 0, err
	}
	pos, _, _, found, err := l.findBatch(seg, offset)
	if err != nil {
		return 0, err
	}
	newEnd := l.leo
	if found {
		newEnd, err = l.baseOffsetAt(seg, pos)
		if err != nil {
			return 0, err
		}
		if err := l.truncateSegmentFile(seg, pos); err != nil {
			return 0, err
		}
	}
	newEnd = max(newEnd, seg.base)
	seg.timeIndex.truncateTimesFrom(newEnd)
	if err := l.rescanAfterCut(seg); err != nil {
		return 0, err
	}
	if err := l.afterTruncateLocked(newEnd); err != nil {
		return 0, err
	}
	if err := l.syncDirIfDirty(); err != nil {
		return 0, err
	}
	return newEnd, nil
}

// baseOffsetAt reads the base offset of the batch at pos in seg.
func (l *Log) baseOffsetAt(seg *segment, pos int64) (int64, error) {
	cf, err := l.m.files.acquire(seg.logPath, false)
	if err != nil {
		return 0, err
	}
	defer l.m.files.release(cf)
	var hdr [batch.LengthPrefix]byte
	if err := readFull(cf.f, hdr[:], pos, seg.logPath); err != nil {
		return 0, err
	}
	return batch.BaseOffset(hdr[:]), nil
}

// rescanAfterCut recomputes a truncated segment's timestamps and the bytes
// since its last index entry.
func (l *Log) rescanAfterCut(seg *segment) error {
	seg.maxTs, seg.maxTsOff = seg.timeIndex.lastTime()
	seg.firstTs = -1
	if seg.size == 0 {
		seg.sinceIdx = 0
		return nil
	}
	return l.rescanTail(seg)
}

// afterTruncateLocked updates offsets, flush state and the epoch cache after
// the log end moved back to end.
func (l *Log) afterTruncateLocked(end int64) error {
	l.leo = end
	l.flushed = min(l.flushed, end)
	l.recoveryPoint = min(l.recoveryPoint, end)
	if l.epochs.truncateFromEnd(end) {
		return l.writeEpochsLocked()
	}
	return nil
}

// truncateFullyLocked deletes every segment and restarts the log empty at
// offset (a follower behind the leader's log start offset).
func (l *Log) truncateFullyLocked(offset int64) error {
	for _, seg := range l.segs {
		if err := l.deleteSegmentFiles(seg); err != nil {
			return err
		}
	}
	seg, err := l.createSegment(offset)
	if err != nil {
		return err
	}
	l.segs = []*segment{seg}
	l.logStart = offset
	if err := l.afterTruncateLocked(offset); err != nil {
		return err
	}
	l.epochs.truncateFromStart(offset)
	if err := l.writeEpochsLocked(); err != nil {
		return err
	}
	return l.syncDirIfDirty()
}

// syncDirIfDirty makes created and removed names durable now.
func (l *Log) syncDirIfDirty() error {
	if !l.dirDirty {
		return nil
	}
	if err := l.m.fs.SyncDir(l.dir); err != nil {
		return fmt.Errorf("sync %s: %w", l.dir, err)
	}
	l.dirDirty = false
	return nil
}

// DeleteRecordsBefore advances the log start offset to offset (DeleteRecords)
// and deletes the segments wholly below it. The new start offset is durable
// on return. It returns the log start offset, which never moves back.
func (l *Log) DeleteRecordsBefore(offset int64) (int64, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return 0, fmt.Errorf("delete records in %s: %w", l.tp, ErrClosed)
	}
	if offset < 0 || offset > l.leo {
		l.mu.Unlock()
		return 0, fmt.Errorf("delete records in %s before %d (log end %d): %w", l.tp, offset, l.leo, ErrOffsetOutOfRange)
	}
	changed := offset > l.logStart
	if changed {
		l.logStart = offset
		if l.epochs.truncateFromStart(offset) {
			if err := l.writeEpochsLocked(); err != nil {
				l.mu.Unlock()
				return 0, err
			}
		}
	}
	_, err := l.deleteSegmentsLocked(func(seg *segment, next int64) bool { return next <= l.logStart }, "log start offset")
	start := l.logStart
	l.mu.Unlock()
	if err != nil {
		return 0, err
	}
	if changed {
		if err := l.m.writeLogStartCheckpoint(); err != nil {
			return 0, err
		}
	}
	return start, nil
}

// deleteSegmentsLocked deletes the oldest segments while doomed says so,
// never the active one; the log start offset moves to the first kept
// segment's base if that is higher. It returns the bytes deleted.
func (l *Log) deleteSegmentsLocked(doomed func(seg *segment, next int64) bool, reason string) (int64, error) {
	var freed int64
	for len(l.segs) > 1 {
		seg := l.segs[0]
		if !doomed(seg, l.segs[1].base) {
			break
		}
		if err := l.deleteSegmentFiles(seg); err != nil {
			return freed, err
		}
		freed += seg.size
		l.segs = l.segs[1:]
		l.m.logger.Info("deleted segment", "partition", l.tp.String(), "segment", seg.logPath, "reason", reason)
	}
	if freed > 0 {
		l.logStart = max(l.logStart, l.segs[0].base)
		if l.epochs.truncateFromStart(l.logStart) {
			if err := l.writeEpochsLocked(); err != nil {
				return freed, err
			}
		}
		if err := l.syncDirIfDirty(); err != nil {
			return freed, err
		}
	}
	return freed, nil
}

// applyRetention deletes whole segments by retention.ms, retention.bytes and
// the log start offset, never the active segment, when cleanup.policy
// includes delete. It returns the bytes deleted.
func (l *Log) applyRetention(nowMs int64) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, nil
	}
	freed, err := l.deleteSegmentsLocked(func(_ *segment, next int64) bool { return next <= l.logStart }, "log start offset")
	if err != nil || !l.cfg.CleanupDelete {
		return freed, err
	}
	if ms := l.cfg.RetentionMs; ms >= 0 {
		n, err := l.deleteSegmentsLocked(func(seg *segment, _ int64) bool {
			if l.ensureLoaded(seg) != nil {
				return false
			}
			return seg.maxTs >= 0 && nowMs-seg.maxTs > ms
		}, fmt.Sprintf("retention.ms %d", ms))
		freed += n
		if err != nil {
			return freed, err
		}
	}
	if limit := l.cfg.RetentionBytes; limit >= 0 {
		var total int64
		for _, s := range l.segs {
			total += s.size
		}
		n, err := l.deleteSegmentsLocked(func(seg *segment, _ int64) bool {
			if total-seg.size < limit {
				return false
			}
			total -= seg.size
			return true
		}, fmt.Sprintf("retention.bytes %d", limit))
		freed += n
		if err != nil {
			return freed, err
		}
	}
	return freed, nil
}
