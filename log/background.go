package log

import (
	"time"
)

// background runs the periodic work of the directory: flush.ms, retention,
// recovery-point checkpoints, idle index unloading, and compaction.
func (m *Manager) background() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	start := time.Now()
	var lastFlush, lastRetention, lastCheckpoint, lastClean, lastIdle time.Duration
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		el := time.Since(start)
		m.tick.Store(int64(el / time.Second))
		if el-lastFlush >= m.cfg.FlushCheckInterval {
			lastFlush = el
			m.RunFlushPolicy()
		}
		if el-lastRetention >= m.cfg.RetentionCheckInterval {
			lastRetention = el
			m.RunRetention()
		}
		if el-lastCheckpoint >= m.cfg.CheckpointInterval {
			lastCheckpoint = el
			if err := m.Checkpoint(); err != nil {
				m.logger.Error("checkpoint failed", "dir", m.dir, "err", err)
			}
		}
		if el-lastIdle >= time.Second {
			lastIdle = el
			m.unloadIdle(int64(m.cfg.IdleUnloadAfter / time.Second))
		}
		if m.cfg.Cleaner.Enable && el-lastClean >= m.cfg.Cleaner.Backoff {
			lastClean = el
			m.Clean()
		}
	}
}

// RunFlushPolicy asks the fsync goroutine to flush every log whose unflushed
// data is older than its flush.ms.
func (m *Manager) RunFlushPolicy() {
	now := m.nowMs()
	for _, l := range m.Logs() {
		l.mu.RLock()
		due := l.flushed < l.leo && now-l.unflushedSinceMs >= l.cfg.FlushMs
		l.mu.RUnlock()
		if due {
			m.syncer.request(l)
		}
	}
}

// RunRetention applies retention to every log and returns the bytes deleted.
func (m *Manager) RunRetention() int64 {
	now := m.nowMs()
	var freed int64
	for _, l := range m.Logs() {
		n, err := l.applyRetention(now)
		freed += n
		if err != nil {
			m.logger.Error("retention failed", "partition", l.tp.String(), "err", err)
		}
	}
	if freed > 0 {
		if err := m.writeLogStartCheckpoint(); err != nil {
			m.logger.Error("checkpoint failed", "dir", m.dir, "err", err)
		}
	}
	return freed
}

// unloadIdle drops the in-memory indexes of inactive segments unused for
// idleTicks seconds, after making them durable.
func (m *Manager) unloadIdle(idleTicks int64) {
	now := m.tick.Load()
	for _, l := range m.Logs() {
		l.mu.Lock()
		for _, s := range l.segs[:len(l.segs)-1] {
			if !s.loaded || now-s.lastUse < idleTicks {
				continue
			}
			if s.index.write(m.fs, 0, true) != nil || s.timeIndex.write(m.fs, 0, true) != nil {
				continue
			}
			s.index.buf, s.timeIndex.buf = nil, nil
			s.index.written, s.timeIndex.written = 0, 0
			s.loaded = false
		}
		l.mu.Unlock()
	}
}
