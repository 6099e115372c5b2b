package log

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ManagerConfig configures a log directory (Kafka's log.dirs entry). Zero
// fields take the defaults given.
type ManagerConfig struct {
	// Dir is the log directory; partitions are its "<topic>-<partition>"
	// subdirectories.
	Dir string
	// FS is the file system; nil means OSFS.
	FS FS
	// Now is the wall clock (segment.ms, retention.ms, flush.ms); nil means
	// time.Now.
	Now func() time.Time
	// Logger receives one line per notable event; nil discards.
	Logger *slog.Logger
	// MaxOpenFiles bounds the segment files held open at once. Default 4096.
	MaxOpenFiles int
	// RetentionCheckInterval is log.retention.check.interval.ms. Default 5 min.
	RetentionCheckInterval time.Duration
	// FlushCheckInterval is log.flush.scheduler.interval.ms: how often
	// flush.ms is checked. Default 1 s.
	FlushCheckInterval time.Duration
	// CheckpointInterval is log.flush.offset.checkpoint.interval.ms: how often
	// the recovery point is checkpointed. Default 60 s.
	CheckpointInterval time.Duration
	// IdleUnloadAfter drops the in-memory indexes of segments unused this
	// long. Default 5 min.
	IdleUnloadAfter time.Duration
	// Cleaner configures compaction.
	Cleaner CleanerConfig
	// NoBackground disables the periodic retention, flush, checkpoint and
	// cleaner work; tests call RunRetention, Checkpoint and Clean instead.
	// The fsync goroutine always runs.
	NoBackground bool
}

func (c *ManagerConfig) setDefaults() {
	if c.FS == nil {
		c.FS = OSFS{}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.MaxOpenFiles <= 0 {
		c.MaxOpenFiles = 4096
	}
	if c.RetentionCheckInterval <= 0 {
		c.RetentionCheckInterval = 5 * time.Minute
	}
	if c.FlushCheckInterval <= 0 {
		c.FlushCheckInterval = time.Second
	}
	if c.CheckpointInterval <= 0 {
		c.CheckpointInterval = time.Minute
	}
	if c.IdleUnloadAfter <= 0 {
		c.IdleUnloadAfter = 5 * time.Minute
	}
	c.Cleaner.setDefaults()
}

// Manager owns one log directory: its partition logs, the node's fsync
// goroutine (group commit), checkpoints, retention and the cleaner.
type Manager struct {
	cfg    ManagerConfig
	fs     FS
	dir    string
	logger *slog.Logger
	lock   io.Closer // the directory's .lock, held until Close or Abandon
	// poison remembers the bad stored batches already logged.
	poison poisonReports
	files  *fileCache
	syncer *syncer
	tick   atomic.Int64 // seconds since open, for idle unloading
	loadMu sync.Mutex   // serializes index loads by readers

	mu             sync.Mutex
	logs           map[TopicPartition]*Log
	cleanShutdown  bool
	recoveryPoints map[TopicPartition]int64
	logStarts      map[TopicPartition]int64
	cleanerOffsets map[TopicPartition]int64
	cleaner        logCleaner // compaction state (cleaner.go)
	checkpointMu   sync.Mutex
	closed         bool

	stop chan struct{}
	wg   sync.WaitGroup
}

// OpenManager opens (creating if needed) a log directory. It reads and
// removes the clean-shutdown marker, so a crash from now on forces recovery
// of the logs opened afterwards, and starts the background goroutines.
func OpenManager(cfg ManagerConfig) (*Manager, error) {
	cfg.setDefaults()
	m := &Manager{
		cfg: cfg, fs: cfg.FS, dir: cfg.Dir, logger: cfg.Logger,
		files:  newFileCache(cfg.FS, cfg.MaxOpenFiles),
		syncer: newSyncer(),
		logs:   make(map[TopicPartition]*Log),
		stop:   make(chan struct{}),
	}
	if err := m.fs.MkdirAll(m.dir, 0o755); err != nil {
		return nil, fmt.Errorf("open log dir %s: %w", m.dir, err)
	}
	if err := m.lockDir(); err != nil {
		return nil, err
	}
	opened := false
	defer func() {
		if !opened {
			_ = m.lock.Close()
		}
	}()
	marker := filepath.Join(m.dir, cleanShutdownFile)
	if _, err := m.fs.Stat(marker); err == nil {
		m.cleanShutdown = true
		if err := m.fs.Remove(marker); err != nil {
			return nil, fmt.Errorf("remove %s: %w", marker, err)
		}
		if err := m.fs.SyncDir(m.dir); err != nil {
			return nil, fmt.Errorf("open log dir %s: %w", m.dir, err)
		}
	}
	m.recoveryPoints = m.readCheckpoint(recoveryPointFile)
	m.logStarts = m.readCheckpoint(logStartOffsetFile)
	m.cleanerOffsets = m.readCheckpoint(cleanerOffsetFile)
	if err := m.removeDeletedDirs(); err != nil {
		return nil, err
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.syncer.run(m.stop, func(l *Log, err error) {
			m.logger.Error("flush failed", "partition", l.tp.String(), "err", err)
		})
	}()
	if !cfg.NoBackground {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.background()
		}()
	}
	opened = true
	return m, nil
}

// lockFile is the lock every open Manager holds in its directory, as
// Kafka's log manager holds one in each log directory.
const lockFile = ".lock"

// lockDir takes the directory's lock, so a second process (or a second
// Manager in this one) cannot open the directory while this one runs.
func (m *Manager) lockDir() error {
	l, err := m.fs.Lock(filepath.Join(m.dir, lockFile))
	if errors.Is(err, ErrLocked) {
		return fmt.Errorf("log directory %s is in use by another weir process or node (lock file %s held): %w",
			m.dir, lockFile, err)
	}
	if err != nil {
		return fmt.Errorf("open log dir %s: %w", m.dir, err)
	}
	m.lock = l
	return nil
}

// readCheckpoint reads a per-directory offset checkpoint; a missing or
// corrupt one is empty (recovery then scans everything).
func (m *Manager) readCheckpoint(name string) map[TopicPartition]int64 {
	path := filepath.Join(m.dir, name)
	data, err := ReadFile(m.fs, path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			m.logger.Warn("ignoring checkpoint", "path", path, "err", err)
		}
		return map[TopicPartition]int64{}
	}
	offsets, err := decodeOffsetCheckpoint(path, data)
	if err != nil {
		m.logger.Warn("ignoring checkpoint", "path", path, "err", err)
		return map[TopicPartition]int64{}
	}
	return offsets
}

// removeDeletedDirs finishes the deletion of partitions deleted before a crash.
func (m *Manager) removeDeletedDirs() error {
	names, err := m.fs.ReadDir(m.dir)
	if err != nil {
		return fmt.Errorf("open log dir %s: %w", m.dir, err)
	}
	for _, name := range names {
		if strings.HasSuffix(name, "-delete") {
			if err := m.fs.RemoveAll(filepath.Join(m.dir, name)); err != nil {
				return fmt.Errorf("remove deleted partition %s: %w", name, err)
			}
		}
	}
	return nil
}

// Dir returns the log directory.
func (m *Manager) Dir() string { return m.dir }

// CleanShutdown reports whether the previous shutdown of the directory was
// clean.
func (m *Manager) CleanShutdown() bool { return m.cleanShutdown }

// nowMs is the wall clock in milliseconds.
func (m *Manager) nowMs() int64 { return m.cfg.Now().UnixMilli() }

// OpenFiles is the number of segment files held open.
func (m *Manager) OpenFiles() int { return m.files.openCount() }

// SyncRounds is the number of group-commit fsync rounds so far.
func (m *Manager) SyncRounds() uint64 {
	m.syncer.mu.Lock()
	defer m.syncer.mu.Unlock()
	return m.syncer.rounds
}

// Partitions lists the partition directories present in the log directory.
func (m *Manager) Partitions() ([]TopicPartition, error) {
	names, err := m.fs.ReadDir(m.dir)
	if err != nil {
		return nil, fmt.Errorf("list log dir %s: %w", m.dir, err)
	}
	var out []TopicPartition
	for _, name := range names {
		if tp, ok := parseTopicPartition(name); ok {
			out = append(out, tp)
		}
	}
	return out, nil
}

// OpenLog opens the log of tp, creating its directory (and, with a non-zero
// topicID, partition.metadata) if new. A log already open is returned as is.
func (m *Manager) OpenLog(tp TopicPartition, cfg Config, topicID [16]byte) (*Log, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if tp.Topic == "" || strings.ContainsAny(tp.Topic, "/\\") || tp.Topic == "." || tp.Topic == ".." || tp.Partition < 0 {
		return nil, fmt.Errorf("%w: partition name %q", ErrInvalidConfig, tp.String())
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	if l, ok := m.logs[tp]; ok {
		return l, nil
	}
	dir := filepath.Join(m.dir, tp.String())
	if _, err := m.fs.ReadDir(dir); errors.Is(err, fs.ErrNotExist) {
		if err := m.createPartitionDir(dir, topicID); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("open log %s: %w", dir, err)
	} else if err := m.ensurePartitionMetadata(dir, topicID); err != nil {
		return nil, err
	}
	l, err := m.loadLog(tp, dir, cfg)
	if err != nil {
		return nil, err
	}
	m.logs[tp] = l
	return l, nil
}

// ensurePartitionMetadata writes partition.metadata if it is missing (a
// creation that failed half way).
func (m *Manager) ensurePartitionMetadata(dir string, topicID [16]byte) error {
	if topicID == ([16]byte{}) {
		return nil
	}
	path := filepath.Join(dir, partitionMetadata)
	_, err := m.fs.Stat(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return WriteFileAtomic(m.fs, path, encodePartitionMetadata(topicID))
}

// createPartitionDir makes a partition directory durable, with its metadata.
func (m *Manager) createPartitionDir(dir string, topicID [16]byte) error {
	if err := m.fs.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create partition dir %s: %w", dir, err)
	}
	if topicID != ([16]byte{}) {
		if err := WriteFileAtomic(m.fs, filepath.Join(dir, partitionMetadata), encodePartitionMetadata(topicID)); err != nil {
			return err
		}
	}
	if err := m.fs.SyncDir(m.dir); err != nil {
		return fmt.Errorf("create partition dir %s: %w", dir, err)
	}
	return nil
}

// DirTopicID reads the topic id in the partition.metadata of tp's
// directory, whether or not its log is open; ok is false when the
// directory or the file does not exist.
func (m *Manager) DirTopicID(tp TopicPartition) (id [16]byte, ok bool, err error) {
	path := filepath.Join(m.dir, tp.String(), partitionMetadata)
	data, err := ReadFile(m.fs, path)
	if errors.Is(err, fs.ErrNotExist) {
		return id, false, nil
	}
	if err != nil {
		return id, false, fmt.Errorf("read %s: %w", path, err)
	}
	id, err = decodePartitionMetadata(path, data)
	return id, err == nil, err
}

// TopicID reads a partition's topic id from partition.metadata.
func (l *Log) TopicID() ([16]byte, error) {
	path := filepath.Join(l.dir, partitionMetadata)
	data, err := ReadFile(l.m.fs, path)
	if err != nil {
		return [16]byte{}, fmt.Errorf("read %s: %w", path, err)
	}
	return decodePartitionMetadata(path, data)
}

// Log returns an open log.
func (m *Manager) Log(tp TopicPartition) (*Log, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.logs[tp]
	return l, ok
}

// Logs returns every open log.
func (m *Manager) Logs() []*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Log, 0, len(m.logs))
	for _, l := range m.logs {
		out = append(out, l)
	}
	return out
}

// DeleteLog closes and deletes a partition's log (DeleteTopics): the
// directory is renamed aside durably, then removed.
func (m *Manager) DeleteLog(tp TopicPartition) error {
	return m.DeleteLogs([]TopicPartition{tp})
}

// DeleteLogs closes and deletes partitions' logs (DeleteTopics) as one
// step: every directory is renamed aside, the data directory is synced
// once, the renamed directories are removed, and the checkpoint files are
// written once without the deleted partitions, so deleting a topic of
// thousands of partitions costs a few fsyncs rather than a few per
// partition. A partition without a directory is not an error. On an error
// the rest are still attempted; the first error is returned.
func (m *Manager) DeleteLogs(tps []TopicPartition) error {
	asides, err := m.setAside(tps, "delete")
	if err != nil {
		return err
	}
	for _, aside := range asides {
		if rerr := m.fs.RemoveAll(aside); rerr != nil && err == nil {
			err = fmt.Errorf("delete partition directory %s: %w", aside, rerr)
		}
	}
	return err
}

// SetAsideLogs closes partitions' logs and renames their directories to
// "<name>.<time>-stray", durably, without deleting anything: the logs are
// out of the way of partitions created under the same names, and an
// operator can still look at them or remove them. It returns the new
// paths. Errors are as DeleteLogs's.
func (m *Manager) SetAsideLogs(tps []TopicPartition) ([]string, error) {
	return m.setAside(tps, "stray")
}

// setAside closes tps' logs, renames their directories to
// "<name>.<time>-<suffix>", syncs the data directory once and rewrites the
// checkpoint files without them. It returns the renamed paths; on an error
// the rest are still attempted and the first error is returned, but if the
// sync fails the renames may not be durable and none is returned.
func (m *Manager) setAside(tps []TopicPartition, suffix string) ([]string, error) {
	if len(tps) == 0 {
		return nil, nil
	}
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	asides := make([]string, 0, len(tps))
	for _, tp := range tps {
		m.mu.Lock()
		l, ok := m.logs[tp]
		delete(m.logs, tp)
		delete(m.recoveryPoints, tp)
		delete(m.logStarts, tp)
		delete(m.cleanerOffsets, tp)
		m.mu.Unlock()
		dir := filepath.Join(m.dir, tp.String())
		if ok {
			l.closeFiles()
			dir = l.dir
		}
		aside := fmt.Sprintf("%s.%x-%s", dir, m.cfg.Now().UnixNano(), suffix)
		if err := m.fs.Rename(dir, aside); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				keep(fmt.Errorf("set aside partition %s: %w", tp, err))
			}
			continue
		}
		asides = append(asides, aside)
	}
	if len(asides) > 0 {
		if err := m.fs.SyncDir(m.dir); err != nil {
			// The renames may not be durable: leave the directories where
			// recovery finds them (an aside directory is removed at open).
			keep(fmt.Errorf("set aside %d partitions: %w", len(tps), err))
			return nil, first
		}
	}
	if err := m.forgetDeleted(); err != nil {
		keep(err)
	}
	return asides, first
}

// forgetDeleted rewrites the checkpoint files without the partitions
// deleted from the maps, so that a partition created again under the same
// name never inherits a deleted one's recovery point, start offset or
// cleaner offset. No entry of a live log rises here.
func (m *Manager) forgetDeleted() error {
	m.checkpointMu.Lock()
	defer m.checkpointMu.Unlock()
	if err := m.persistOffsetsLocked(recoveryPointFile, m.recoveryPoints, func(l *Log, old int64) int64 { return min(old, l.recoveryPoint) }); err != nil {
		return err
	}
	if err := m.persistOffsetsLocked(logStartOffsetFile, m.logStarts, func(l *Log, _ int64) int64 { return l.logStart }); err != nil {
		return err
	}
	m.mu.Lock()
	data := encodeOffsetCheckpoint(m.cleanerOffsets)
	m.mu.Unlock()
	return WriteFileAtomic(m.fs, filepath.Join(m.dir, cleanerOffsetFile), data)
}

// closeFiles marks the log closed, completes waiters with ErrClosed, and
// forgets its open files.
func (l *Log) closeFiles() {
	l.mu.Lock()
	l.closed = true
	waiters := l.waiters
	l.waiters = nil
	for _, s := range l.segs {
		for _, p := range []string{s.logPath, s.index.path, s.timeIndex.path} {
			l.m.files.drop(p)
		}
	}
	l.mu.Unlock()
	for _, w := range waiters {
		w.fn(fmt.Errorf("flush %s: %w", l.tp, ErrClosed))
	}
}

// seal flushes the log and makes its trimmed indexes durable, so the
// recovery point reaches the log end (clean shutdown).
func (l *Log) seal() error {
	if err := l.flush(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.sealLocked(); err != nil {
		return err
	}
	l.recoveryPoint = max(l.recoveryPoint, l.flushed)
	return nil
}

// sealLocked writes and trims every segment's indexes and syncs them, so the
// next open trusts them.
func (l *Log) sealLocked() error {
	for _, s := range l.segs {
		if !s.loaded {
			continue
		}
		if s == l.active() {
			s.sealTimeIndex()
		}
		if err := s.index.write(l.m.fs, 0, true); err != nil {
			return err
		}
		if err := s.timeIndex.write(l.m.fs, 0, true); err != nil {
			return err
		}
	}
	return l.syncDirIfDirty()
}

// Checkpoint writes every log's index entries, syncs them, and records the
// flushed offsets as recovery points, with the log start offsets.
func (m *Manager) Checkpoint() error {
	m.checkpointMu.Lock()
	defer m.checkpointMu.Unlock()
	for _, l := range m.Logs() {
		if err := l.checkpointIndexes(); err != nil {
			return err
		}
	}
	return m.writeCheckpointFilesLocked()
}

// writeCheckpointFilesLocked records every log's recovery point and start
// offset; the caller holds checkpointMu.
func (m *Manager) writeCheckpointFilesLocked() error {
	err := m.persistOffsetsLocked(recoveryPointFile, m.recoveryPoints, func(l *Log, _ int64) int64 { return l.recoveryPoint })
	if err != nil {
		return err
	}
	return m.persistOffsetsLocked(logStartOffsetFile, m.logStarts, func(l *Log, _ int64) int64 { return l.logStart })
}

// persistOffsetsLocked sets each open log's entry in offsets to value(log,
// previous entry) and writes them as the checkpoint file name; the caller
// holds checkpointMu.
func (m *Manager) persistOffsetsLocked(name string, offsets map[TopicPartition]int64, value func(l *Log, old int64) int64) error {
	m.mu.Lock()
	for tp, l := range m.logs {
		l.mu.RLock()
		offsets[tp] = value(l, offsets[tp])
		l.mu.RUnlock()
	}
	data := encodeOffsetCheckpoint(offsets)
	m.mu.Unlock()
	return WriteFileAtomic(m.fs, filepath.Join(m.dir, name), data)
}

// writeRecoveryCheckpoint persists the recovery points now (after a
// truncation lowered one); an entry never rises here, since only Checkpoint
// makes the indexes durable.
func (m *Manager) writeRecoveryCheckpoint() error {
	m.checkpointMu.Lock()
	defer m.checkpointMu.Unlock()
	return m.persistOffsetsLocked(recoveryPointFile, m.recoveryPoints, func(l *Log, old int64) int64 { return min(old, l.recoveryPoint) })
}

// writeLogStartCheckpoint persists the log start offsets now.
func (m *Manager) writeLogStartCheckpoint() error {
	m.checkpointMu.Lock()
	defer m.checkpointMu.Unlock()
	return m.persistOffsetsLocked(logStartOffsetFile, m.logStarts, func(l *Log, _ int64) int64 { return l.logStart })
}

// writeCleanerCheckpoint sets tp's cleaner offset (or only lowers it, with
// lower) and persists cleaner-offset-checkpoint when it changed.
func (m *Manager) writeCleanerCheckpoint(tp TopicPartition, offset int64, lower bool) error {
	m.checkpointMu.Lock()
	defer m.checkpointMu.Unlock()
	m.mu.Lock()
	old, ok := m.cleanerOffsets[tp]
	if lower && (!ok || old <= offset) {
		m.mu.Unlock()
		return nil
	}
	m.cleanerOffsets[tp] = offset
	data := encodeOffsetCheckpoint(m.cleanerOffsets)
	m.mu.Unlock()
	return WriteFileAtomic(m.fs, filepath.Join(m.dir, cleanerOffsetFile), data)
}

// checkpointIndexes makes the index entries of flushed data durable and moves
// the recovery point up to the flushed offset.
func (l *Log) checkpointIndexes() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	point := l.flushed
	for _, s := range l.segs {
		if !s.loaded || s.base > point {
			continue
		}
		size := int64(0)
		if s == l.active() {
			size = l.cfg.SegmentIndexBytes
		}
		if err := s.index.write(l.m.fs, size, true); err != nil {
			return err
		}
		if err := s.timeIndex.write(l.m.fs, size, true); err != nil {
			return err
		}
	}
	if err := l.syncDirIfDirty(); err != nil {
		return err
	}
	l.recoveryPoint = max(l.recoveryPoint, point)
	return nil
}

// Close shuts the directory down cleanly: background work stops, every log
// is flushed and its indexes trimmed, checkpoints are written, and the
// clean-shutdown marker is written last.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	close(m.stop)
	m.wg.Wait()
	var errs []error
	for _, l := range m.Logs() {
		if err := l.seal(); err != nil {
			errs = append(errs, err)
		}
	}
	m.checkpointMu.Lock()
	if err := m.writeCheckpointFilesLocked(); err != nil {
		errs = append(errs, err)
	}
	m.checkpointMu.Unlock()
	for _, l := range m.Logs() {
		l.closeFiles()
	}
	m.files.closeAll()
	if len(errs) == 0 {
		marker := filepath.Join(m.dir, cleanShutdownFile)
		err := WriteFileAtomic(m.fs, marker, nil)
		if err != nil {
			errs = append(errs, err)
		}
	}
	// The lock goes last: the directory is another opener's only after
	// the marker is written.
	if err := m.lock.Close(); err != nil {
		errs = append(errs, fmt.Errorf("unlock log dir %s: %w", m.dir, err))
	}
	return errors.Join(errs...)
}

// Abandon stops the manager without a clean shutdown (tests that simulate a
// crash): nothing is flushed and no marker is written.
func (m *Manager) Abandon() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	m.mu.Unlock()
	close(m.stop)
	m.wg.Wait()
	for _, l := range m.Logs() {
		l.mu.Lock()
		l.closed = true
		waiters := l.waiters
		l.waiters = nil
		l.mu.Unlock()
		for _, w := range waiters {
			w.fn(ErrClosed)
		}
	}
	m.files.closeAll()
	_ = m.lock.Close()
}
