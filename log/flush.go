package log

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"
)

// flushWaiter is a caller waiting for offsets below upTo to be durable.
type flushWaiter struct {
	upTo int64
	fn   func(error)
}

// OnFlushed calls fn (from the node's fsync goroutine, or at once if already
// true) when every record below upTo is durable, or with the error that
// prevented it. It asks the next fsync round to include this log: this is
// the group commit a flush.messages=1 acknowledgement waits on.
func (l *Log) OnFlushed(upTo int64, fn func(error)) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		fn(fmt.Errorf("flush %s: %w", l.tp, ErrClosed))
		return
	}
	if upTo <= l.flushed {
		l.mu.Unlock()
		fn(nil)
		return
	}
	if failed := l.failed; failed != nil {
		l.mu.Unlock()
		fn(fmt.Errorf("flush %s: %w", l.tp, failed))
		return
	}
	l.waiters = append(l.waiters, flushWaiter{upTo: upTo, fn: fn})
	l.mu.Unlock()
	l.m.syncer.request(l)
}

// WaitFlushed blocks until every record below upTo is durable.
func (l *Log) WaitFlushed(upTo int64) error {
	done := make(chan error, 1)
	l.OnFlushed(upTo, func(err error) { done <- err })
	return <-done
}

// Flush makes everything appended so far durable in the calling goroutine.
func (l *Log) Flush() error { return l.flush() }

// flush syncs the segment files holding data appended since the last flush
// (and the directory, when names changed), then advances the flushed offset
// and completes waiters. Appends proceed while it syncs.
func (l *Log) flush() error {
	_, err := l.flushCounted()
	return err
}

// flushCounted is flush, also reporting whether it synced anything. Flushes
// of one log are serialized: a flush reports data durable only after every
// sync it depends on (including another flusher's directory sync) is done.
func (l *Log) flushCounted() (bool, error) {
	l.flushMu.Lock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		l.flushMu.Unlock()
		return false, nil
	}
	if failed := l.failed; failed != nil {
		done := l.waiters
		l.waiters = nil
		l.mu.Unlock()
		l.flushMu.Unlock()
		err := fmt.Errorf("flush %s: %w", l.tp, failed)
		for _, w := range done {
			w.fn(err)
		}
		return false, err
	}
	target := l.leo
	type pending struct {
		seg  *segment
		size int64
	}
	var todo []pending
	for _, s := range l.segs {
		if s.synced < s.size {
			todo = append(todo, pending{s, s.size})
		}
	}
	syncDir := l.dirDirty
	l.dirDirty = false
	msgs := l.unflushedMsgs
	l.mu.Unlock()

	var err error
	for _, p := range todo {
		if err = l.syncSegment(p.seg); err != nil {
			break
		}
	}
	if err == nil && syncDir {
		err = l.m.fs.SyncDir(l.dir)
	}

	l.mu.Lock()
	var done []flushWaiter
	if err != nil {
		l.dirDirty = l.dirDirty || syncDir
		done, l.waiters = l.waiters, nil
		l.failed = fmt.Errorf("%w: %w", ErrLogFailed, err)
	} else {
		for _, p := range todo {
			p.seg.synced = max(p.seg.synced, p.size)
		}
		l.flushed = max(l.flushed, min(target, l.leo))
		l.unflushedMsgs = max(0, l.unflushedMsgs-msgs)
		if l.flushed >= l.leo {
			l.unflushedSinceMs = 0
		}
		keep := l.waiters[:0]
		for _, w := range l.waiters {
			if w.upTo <= l.flushed {
				done = append(done, w)
			} else {
				keep = append(keep, w)
			}
		}
		l.waiters = keep
	}
	pendingWaiters := len(l.waiters) > 0
	l.mu.Unlock()
	l.flushMu.Unlock() // waiters may flush again
	if err != nil {
		err = fmt.Errorf("flush %s: %w", l.tp, err)
	}
	for _, w := range done {
		w.fn(err)
	}
	if pendingWaiters {
		l.m.syncer.request(l)
	}
	return len(todo) > 0 || syncDir, err
}

// syncSegment fsyncs one segment's .log file.
func (l *Log) syncSegment(seg *segment) error {
	cf, err := l.m.files.acquire(seg.logPath, false)
	if errors.Is(err, fs.ErrNotExist) && l.segmentGone(seg) {
		return nil // deleted by retention, truncation or a compaction swap
	}
	if err != nil {
		return err
	}
	defer l.m.files.release(cf)
	return cf.f.Sync()
}

// segmentGone reports whether seg is no longer one of the log's segments.
func (l *Log) segmentGone(seg *segment) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, s := range l.segs {
		if s == seg {
			return false
		}
	}
	return true
}

// syncParallelism bounds the fsyncs one round runs at once.
const syncParallelism = 8

// syncer is the node's one fsync goroutine: each round it flushes every log
// that asked since the previous round, so many appends share one fsync per
// file (group commit).
type syncer struct {
	mu      sync.Mutex
	pending map[*Log]struct{}
	wake    chan struct{}
	rounds  uint64 // rounds that synced at least one file
	// hold is held by each round while it runs; tests hold it to keep the
	// next round from starting ("the fsync round has not come yet").
	hold sync.Mutex
}

func newSyncer() *syncer {
	return &syncer{pending: make(map[*Log]struct{}), wake: make(chan struct{}, 1)}
}

// request adds l to the next round.
func (s *syncer) request(l *Log) {
	s.mu.Lock()
	s.pending[l] = struct{}{}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run performs rounds until stop closes, then one last round.
func (s *syncer) run(stop <-chan struct{}, onErr func(*Log, error)) {
	for {
		select {
		case <-s.wake:
			s.round(onErr)
		case <-stop:
			s.round(onErr)
			return
		}
	}
}

// round flushes every pending log once.
func (s *syncer) round(onErr func(*Log, error)) {
	s.hold.Lock()
	defer s.hold.Unlock()
	s.mu.Lock()
	logs := s.pending
	s.pending = make(map[*Log]struct{}, len(logs))
	s.mu.Unlock()
	// The round's logs are flushed by a few goroutines at once: devices
	// serve concurrent fdatasyncs of different files faster than a queue of
	// them, and the round still ends when every log is durable.
	work := make(chan *Log, len(logs))
	for l := range logs {
		work <- l
	}
	close(work)
	var synced atomic.Bool
	var wg sync.WaitGroup
	for range min(len(logs), syncParallelism) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l := range work {
				did, err := l.flushCounted()
				if err != nil {
					onErr(l, err)
				}
				if did {
					synced.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	if synced.Load() {
		s.mu.Lock()
		s.rounds++
		s.mu.Unlock()
	}
}
