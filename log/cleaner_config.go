package log

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"
)

// CleanerConfig configures the log cleaner (compaction), Kafka's
// log.cleaner.* settings.
type CleanerConfig struct {
	// Enable is log.cleaner.enable. Default true (set Disable to turn off).
	Enable bool
	// Disable turns the cleaner off (the zero value keeps it on).
	Disable bool
	// DedupeBufferSize is log.cleaner.dedupe.buffer.size: the memory of the
	// key-to-offset map, which bounds the cleaner's memory. Each key takes
	// 24 bytes (a 128-bit digest and an offset). Default 16 MiB (Kafka:
	// 128 MiB shared by its threads); the smallest map holds one key.
	DedupeBufferSize int
	// LoadFactor is log.cleaner.io.buffer.load.factor: how full the map may
	// get. Default 0.9.
	LoadFactor float64
	// IOBufferSize is log.cleaner.io.buffer.size: the bytes the cleaner
	// buffers before writing a cleaned segment. Default 512 KiB. (Reads go
	// through the log's chunked scanner: one chunk plus one batch.)
	IOBufferSize int
	// Backoff is log.cleaner.backoff.ms: the pause between cleaning passes
	// when nothing is cleanable. Default 15 s.
	Backoff time.Duration
}

func (c *CleanerConfig) setDefaults() {
	c.Enable = !c.Disable
	if c.DedupeBufferSize <= 0 {
		c.DedupeBufferSize = 16 << 20
	}
	if c.LoadFactor <= 0 || c.LoadFactor > 1 {
		c.LoadFactor = 0.9
	}
	if c.IOBufferSize <= 0 {
		c.IOBufferSize = 512 << 10
	}
	if c.Backoff <= 0 {
		c.Backoff = 15 * time.Second
	}
}

// Errors of the cleaner.
var (
	// ErrNotCompacted is CleanLog on a log whose cleanup.policy does not
	// include compact.
	ErrNotCompacted = errors.New("log: cleanup.policy does not include compact")
	// ErrCleanAborted is a cleaning stopped because the log changed under it
	// (truncation, retention, deletion, close) or the manager is closing.
	// Nothing is lost; the next pass starts over.
	ErrCleanAborted = errors.New("log: cleaning aborted")
	// ErrLogNotOpen is CleanLog on a partition the manager has not opened.
	ErrLogNotOpen = errors.New("log: log not open")
)

// CleanStats describes what cleaning one log did.
type CleanStats struct {
	// Passes is the number of passes: one per filling of the offset map.
	Passes int
	// BytesRead and BytesWritten count the batches read from and written to
	// the rewritten segments.
	BytesRead, BytesWritten int64
	// RecordsRead, RecordsKept and RecordsRemoved count records of the
	// rewritten segments (control records included).
	RecordsRead, RecordsKept, RecordsRemoved int64
	// TombstonesRemoved counts tombstones removed after their delete horizon.
	TombstonesRemoved int64
	// InvalidRecords counts records removed for having no key.
	InvalidRecords int64
	// BatchesCopied were kept byte for byte, BatchesRewritten re-encoded,
	// BatchesRemoved dropped; EmptyBatchesKept lost every record but stay as
	// a bare header, the last batch of their producer id.
	BatchesCopied, BatchesRewritten, BatchesRemoved, EmptyBatchesKept int64
	// BadBatchesKept were kept byte for byte because their records could
	// not be read (logged once each); their keys are not mapped.
	BadBatchesKept int64
	// SegmentsReplaced were swapped for SegmentsWritten new ones.
	SegmentsReplaced, SegmentsWritten int
	// MapKeys is the largest number of keys a pass mapped; MapFill the
	// largest fraction of the offset map's capacity a pass used.
	MapKeys int
	MapFill float64
	// CleanedTo is the cleaner checkpoint afterwards: below it the log is
	// clean.
	CleanedTo int64
}

func (s *CleanStats) add(o CleanStats) {
	s.Passes += o.Passes
	s.BytesRead += o.BytesRead
	s.BytesWritten += o.BytesWritten
	s.RecordsRead += o.RecordsRead
	s.RecordsKept += o.RecordsKept
	s.RecordsRemoved += o.RecordsRemoved
	s.TombstonesRemoved += o.TombstonesRemoved
	s.InvalidRecords += o.InvalidRecords
	s.BatchesCopied += o.BatchesCopied
	s.BatchesRewritten += o.BatchesRewritten
	s.BatchesRemoved += o.BatchesRemoved
	s.EmptyBatchesKept += o.EmptyBatchesKept
	s.BadBatchesKept += o.BadBatchesKept
	s.SegmentsReplaced += o.SegmentsReplaced
	s.SegmentsWritten += o.SegmentsWritten
	s.MapKeys = max(s.MapKeys, o.MapKeys)
	s.MapFill = max(s.MapFill, o.MapFill)
	s.CleanedTo = max(s.CleanedTo, o.CleanedTo)
}

// The cleaner's choice of logs and ranges, by the topic settings
// min.cleanable.dirty.ratio and min.compaction.lag.ms.

// cleanable lists the logs due for cleaning, the highest dirty ratio first.
func (m *Manager) cleanable() []*Log {
	type candidate struct {
		l     *Log
		ratio float64
	}
	var cands []candidate
	now := m.nowMs()
	for _, l := range m.Logs() {
		r, cfg, err := m.dirtyRange(l, now)
		if err != nil {
			if !errors.Is(err, ErrNotCompacted) && !errors.Is(err, ErrClosed) {
				m.logger.Error("cleaner: measuring dirty range failed", "partition", l.tp.String(), "err", err)
			}
			continue
		}
		h := m.cleaner.horizons[l.tp]
		if r.dirtyBytes > 0 && r.ratio() >= cfg.MinCleanableDirtyRatio || h > 0 && h <= now {
			cands = append(cands, candidate{l, r.ratio()})
		}
	}
	slices.SortStableFunc(cands, func(a, b candidate) int { return cmp.Compare(b.ratio, a.ratio) })
	out := make([]*Log, len(cands))
	for i, c := range cands {
		out[i] = c.l
	}
	return out
}

// dirtyRange is the part of a log a pass may clean.
type dirtyRange struct {
	firstDirty, end        int64 // [firstDirty, end) is dirty and cleanable
	cleanBytes, dirtyBytes int64 // sizes of the segments below and in it
}

// ratio is Kafka's dirty ratio: dirty bytes over clean plus dirty bytes.
func (r dirtyRange) ratio() float64 {
	if total := r.cleanBytes + r.dirtyBytes; total > 0 {
		return float64(r.dirtyBytes) / float64(total)
	}
	return 0
}

// dirtyRange measures l's cleanable range now, with the log's settings.
func (m *Manager) dirtyRange(l *Log, now int64) (dirtyRange, Config, error) {
	checkpoint, ok := m.cleanerOffset(l.tp)
	l.mu.RLock()
	defer l.mu.RUnlock()
	if err := l.compactedLocked(); err != nil {
		return dirtyRange{}, l.cfg, err
	}
	r, err := l.dirtyRangeLocked(checkpoint, ok, now)
	return r, l.cfg, err
}

// cleanerOffset reads tp's cleaner checkpoint.
func (m *Manager) cleanerOffset(tp TopicPartition) (int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	off, ok := m.cleanerOffsets[tp]
	return off, ok
}

// compactedLocked checks that l is open and compacted.
func (l *Log) compactedLocked() error {
	if l.closed {
		return fmt.Errorf("clean %s: %w", l.tp, ErrClosed)
	}
	if !l.cfg.CleanupCompact {
		return fmt.Errorf("clean %s: %w", l.tp, ErrNotCompacted)
	}
	return nil
}

// dirtyRangeLocked computes the cleanable range from the cleaner checkpoint
// (the log start offset if missing or out of the log, as after a
// truncation), as Kafka's LogCleanerManager.cleanableOffsets does.
func (l *Log) dirtyRangeLocked(checkpoint int64, ok bool, now int64) (dirtyRange, error) {
	first := l.logStart
	if ok && checkpoint >= l.logStart && checkpoint <= l.leo {
		first = checkpoint
	}
	end := l.active().base
	if lag := l.cfg.MinCompactionLagMs; lag > 0 {
		for i := max(l.segmentFor(first), 0); i < len(l.segs)-1; i++ {
			seg := l.segs[i]
			if err := l.ensureLoadedShared(seg); err != nil {
				return dirtyRange{}, fmt.Errorf("clean %s: %w", l.tp, err)
			}
			if seg.maxTs > now-lag {
				end = min(end, seg.base)
				break
			}
		}
	}
	first = min(first, end)
	r := dirtyRange{firstDirty: first, end: end}
	for i, seg := range l.segs[:len(l.segs)-1] {
		next := l.segs[i+1].base
		if seg.base < first && next > l.logStart {
			r.cleanBytes += seg.size
		}
		if seg.base < end && next > first {
			r.dirtyBytes += seg.size
		}
	}
	return r, nil
}
