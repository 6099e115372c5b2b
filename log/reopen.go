package log

import "fmt"

// Err returns the error that failed the log for good (wrapping
// ErrLogFailed, after an fsync error), or nil.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// ReopenLog replaces a log that failed (Err is not nil) with the same
// partition's log read again from disk, keeping only what was durable: it
// closes old, recovers the directory from old's flushed offset (checking
// every batch past it) and truncates, durably, to that offset. What old
// appended past it was never reported durable; after a failed fsync the
// page cache may hold it while the disk does not (ErrLogFailed), so it is
// cut rather than trusted. A log that did not fail is returned as is. The
// caller must no longer use old. On an error (the cause of the failure may
// persist, such as EMFILE or EIO) nothing is open for the partition, and
// ReopenLog(old) may be called again.
func (m *Manager) ReopenLog(old *Log) (*Log, error) {
	l, cut, err := m.reopenLog(old)
	if err != nil || !cut {
		return l, err
	}
	// The checkpointed recovery point may lie past the cut: lower it, as
	// TruncateTo does.
	if err := m.writeRecoveryCheckpoint(); err != nil {
		m.logger.Warn("recovery checkpoint not lowered after a reopen; the next checkpoint retries", "partition", old.tp.String(), "err", err)
	}
	return l, nil
}

// reopenLog is ReopenLog under the manager's lock; cut reports a log that
// was truncated.
func (m *Manager) reopenLog(old *Log) (_ *Log, cut bool, _ error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, false, ErrClosed
	}
	tp := old.tp
	if cur, ok := m.logs[tp]; ok && cur != old {
		return cur, false, nil // reopened already
	}
	old.mu.Lock()
	failed, closed, durable, cfg, dir := old.failed, old.closed, old.flushed, old.cfg, old.dir
	old.mu.Unlock()
	if failed == nil && !closed {
		return old, false, nil
	}
	delete(m.logs, tp)
	old.closeFiles()
	l, err := m.loadLogFrom(tp, dir, cfg, durable)
	if err != nil {
		return nil, false, fmt.Errorf("reopen %s: %w", tp, err)
	}
	l.mu.Lock()
	cut = l.leo > durable
	if cut {
		_, err = l.truncateLocked(durable)
	}
	l.mu.Unlock()
	if err != nil {
		l.closeFiles()
		return nil, false, fmt.Errorf("reopen %s: cut to the durable offset %d: %w", tp, durable, err)
	}
	m.logs[tp] = l
	m.logger.Info("log reopened after a failure", "partition", tp.String(), "durable_offset", durable, "cause", failed)
	return l, cut, nil
}
