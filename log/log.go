package log

import (
	"fmt"
	"math"
	"os"
	"sort"
	"sync"

	"github.com/weirmq/weir/log/batch"
)

// Log is one partition's log on disk. It is safe for concurrent use: appends,
// truncation and retention take the write lock; reads share the read lock.
// Decision logic above it (the partition actor) owns what is appended.
type Log struct {
	m   *Manager
	tp  TopicPartition
	dir string

	flushMu          sync.Mutex // serializes flushes
	mu               sync.RWMutex
	cfg              Config
	segs             []*segment // ascending base offsets; the last is active
	leo              int64      // log end offset: the next offset to assign
	logStart         int64      // log start offset
	epochs           epochCache
	flushed          int64 // every offset below is durable
	recoveryPoint    int64 // flushed and indexed; what the checkpoint records
	unflushedMsgs    int64
	unflushedSinceMs int64 // wall time of the oldest unflushed append (flush.ms)
	dirDirty         bool  // a name in dir was created or removed since the last dir sync
	waiters          []flushWaiter
	closed           bool
	// failed is set, for good, by the first fsync error (ErrLogFailed).
	failed      error
	cleanerBusy bool
}

// AppendOptions says how Append treats the batches' offsets.
type AppendOptions struct {
	// AssignOffsets is the leader's append: base offsets are assigned from the
	// log end offset and the partition leader epoch is set to LeaderEpoch,
	// both in place in the caller's buffer. Without it (a follower), batches
	// keep their offsets and epochs; they must start at or after the log end
	// offset and ascend.
	AssignOffsets bool
	LeaderEpoch   int32
	// CRCChecked says the caller verified the CRC of every batch of these
	// exact bytes just before (batch.Validate); Append then checks the
	// batches' shape but does not compute their CRCs again.
	CRCChecked bool
}

// AppendResult describes one append.
type AppendResult struct {
	FirstOffset          int64 // base offset of the first batch
	LastOffset           int64 // last offset of the last batch
	MaxTimestamp         int64 // largest batch max timestamp, -1 if none
	OffsetOfMaxTimestamp int64
	Records              int64 // sum of the batches' record counts
	Bytes                int
	LogStartOffset       int64
}

// TopicPartition returns the partition this log stores.
func (l *Log) TopicPartition() TopicPartition { return l.tp }

// Dir returns the partition's directory.
func (l *Log) Dir() string { return l.dir }

// Config returns the log's current settings.
func (l *Log) Config() Config {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.cfg
}

// SetConfig changes the log's settings (AlterConfigs); they apply to the
// next append, roll, flush, retention or cleaning decision.
func (l *Log) SetConfig(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cfg = cfg
	return nil
}

// LogEndOffset is the offset the next appended record gets.
func (l *Log) LogEndOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.leo
}

// LogStartOffset is the first offset a read may ask for.
func (l *Log) LogStartOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.logStart
}

// FlushedOffset is the offset below which every record is durable.
func (l *Log) FlushedOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.flushed
}

// Size is the total size of the partition's segments in bytes.
func (l *Log) Size() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var n int64
	for _, s := range l.segs {
		n += s.size
	}
	return n
}

// SegmentCount is the number of segments.
func (l *Log) SegmentCount() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.segs)
}

// ActiveSegmentBase is the base offset of the segment appends go to; it
// changes exactly when the log rolls (or is truncated fully).
func (l *Log) ActiveSegmentBase() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.active().base
}

// FS is the file system the log's files live on, for the files a caller
// keeps beside them in Dir (the partition actor's producer snapshots).
func (l *Log) FS() FS { return l.m.fs }

// LatestEpoch is the newest leader epoch in the log, or -1.
func (l *Log) LatestEpoch() int32 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.epochs.latest()
}

// Epochs returns a copy of the leader-epoch cache.
func (l *Log) Epochs() []EpochEntry {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return append([]EpochEntry(nil), l.epochs.entries...)
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch: the largest epoch <= epoch
// held by the log and the offset where that epoch ends (the start of the next
// higher epoch, or the log end offset for the latest). (-1, -1) when unknown.
func (l *Log) EndOffsetForEpoch(epoch int32) (int32, int64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.epochs.endOffsetFor(epoch, l.leo)
}

// Append validates and appends the batches in buf (one or many whole v2
// batches, as produced), as one unit: if any batch fails validation nothing
// is written. Batches are written byte for byte; only their base offset and
// (with AssignOffsets) leader epoch are set, in place. The data is in the
// page cache on return; use OnFlushed or WaitFlushed for durability.
func (l *Log) Append(buf []byte, opts AppendOptions) (AppendResult, error) {
	batches, err := splitAndValidate(buf, !opts.CRCChecked)
	if err != nil {
		return AppendResult{}, fmt.Errorf("append to %s: %w", l.tp, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return AppendResult{}, fmt.Errorf("append to %s: %w", l.tp, ErrClosed)
	}
	if l.failed != nil {
		return AppendResult{}, fmt.Errorf("append to %s: %w", l.tp, l.failed)
	}
	res, err := l.placeLocked(batches, opts)
	if err != nil {
		return AppendResult{}, err
	}
	if err := l.writeLocked(batches); err != nil {
		l.undoAppendLocked(res.FirstOffset)
		return AppendResult{}, err
	}
	res.LogStartOffset = l.logStart
	if l.unflushedSinceMs == 0 {
		l.unflushedSinceMs = l.m.nowMs()
	}
	l.unflushedMsgs += res.Records
	if l.unflushedMsgs >= l.cfg.FlushMessages {
		l.m.syncer.request(l)
	}
	return res, nil
}

// splitAndValidate cuts buf into batches and checks each one's length, magic
// and (with checkCRC) CRC.
func splitAndValidate(buf []byte, checkCRC bool) ([][]byte, error) {
	if len(buf) == 0 {
		return nil, fmt.Errorf("%w: empty append", batch.ErrCorrupt)
	}
	batches, err := batch.Split(buf)
	if err != nil {
		pos := 0
		for _, b := range batches {
			pos += len(b)
		}
		// A legacy (v0/v1) message has its magic at the same byte: say so
		// rather than report its short length.
		if rest := buf[pos:]; len(rest) > 16 && rest[16] != batch.CurrentMagic {
			return nil, fmt.Errorf("batch %d at byte %d: %w: magic %d", len(batches), pos, batch.ErrUnsupportedMagic, int8(rest[16]))
		}
		return nil, err
	}
	pos := 0
	for i, b := range batches {
		check := batch.Validate
		if !checkCRC {
			check = batch.ValidateShape
		}
		if _, err := check(b); err != nil {
			return nil, fmt.Errorf("batch %d at byte %d: %w", i, pos, err)
		}
		pos += len(b)
	}
	return batches, nil
}

// placeLocked assigns or checks offsets and sizes, before anything is written.
func (l *Log) placeLocked(batches [][]byte, opts AppendOptions) (AppendResult, error) {
	res := AppendResult{FirstOffset: -1, MaxTimestamp: -1, OffsetOfMaxTimestamp: -1}
	next := l.leo
	for i, b := range batches {
		if int64(len(b)) > l.cfg.SegmentBytes {
			return res, fmt.Errorf("append to %s: batch %d of %d bytes: %w (%d)", l.tp, i, len(b), ErrRecordTooLarge, l.cfg.SegmentBytes)
		}
		if opts.AssignOffsets {
			batch.SetBaseOffset(b, next)
			batch.SetPartitionLeaderEpoch(b, opts.LeaderEpoch)
		} else if base := batch.BaseOffset(b); base < next {
			return res, fmt.Errorf("append to %s: batch %d base offset %d below the expected %d: %w", l.tp, i, base, next, ErrInvalidOffset)
		}
		if res.FirstOffset < 0 {
			res.FirstOffset = batch.BaseOffset(b)
		}
		next = batch.LastOffset(b) + 1
		if ts := batch.MaxTimestamp(b); ts > res.MaxTimestamp {
			res.MaxTimestamp, res.OffsetOfMaxTimestamp = ts, next-1
		}
		res.Records += int64(batch.NumRecords(b))
		res.Bytes += len(b)
	}
	res.LastOffset = next - 1
	return res, nil
}

// undoAppendLocked takes back what a failed append wrote, so that an append
// reported failed is never served (a retry would duplicate it).
func (l *Log) undoAppendLocked(first int64) {
	if l.leo > first {
		if _, err := l.truncateLocked(first); err != nil {
			l.m.logger.Error("undo failed append", "partition", l.tp.String(), "offset", first, "err", err)
		}
	}
	l.epochs.truncateFromEnd(l.leo)
}

// writeLocked writes placed batches, rolling segments as needed, and updates
// indexes, the epoch cache and the log end offset. A new leader epoch is
// checkpointed before the data that carries it.
func (l *Log) writeLocked(batches [][]byte) error {
	if err := l.assignEpochsLocked(batches); err != nil {
		return err
	}
	for len(batches) > 0 {
		seg := l.active()
		n := 0 // batches that go into seg
		size := seg.size
		for n < len(batches) && !l.mustRoll(seg, size, batches[n]) {
			size += int64(len(batches[n]))
			n++
		}
		if n == 0 {
			if err := l.rollLocked(batch.BaseOffset(batches[0])); err != nil {
				return err
			}
			continue
		}
		if err := l.writeRun(seg, batches[:n]); err != nil {
			return err
		}
		batches = batches[n:]
	}
	return nil
}

// assignEpochsLocked records the leader epochs the batches start and
// persists the cache when it changed.
func (l *Log) assignEpochsLocked(batches [][]byte) error {
	changed := false
	for _, b := range batches {
		if l.epochs.assign(batch.PartitionLeaderEpoch(b), batch.BaseOffset(b)) {
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if err := l.writeEpochsLocked(); err != nil {
		return fmt.Errorf("append to %s: %w", l.tp, err)
	}
	return nil
}

// mustRoll applies Kafka's roll rules before putting b at position size.
func (l *Log) mustRoll(seg *segment, size int64, b []byte) bool {
	if size == 0 {
		return false // an empty segment takes any batch that fits an offset
	}
	if size+int64(len(b)) > l.cfg.SegmentBytes || !seg.fitsOffset(batch.LastOffset(b)) {
		return true
	}
	if seg.index.full(l.cfg.SegmentIndexBytes) || seg.timeIndex.full(l.cfg.SegmentIndexBytes) {
		return true
	}
	if seg.firstTs >= 0 {
		return batch.MaxTimestamp(b)-seg.firstTs > l.cfg.SegmentMs
	}
	return l.m.nowMs()-seg.created > l.cfg.SegmentMs
}

// writeRun writes consecutive batches to the end of seg (with one write when
// they are contiguous in the caller's buffer, as Split leaves them), then
// indexes them.
func (l *Log) writeRun(seg *segment, run [][]byte) error {
	if err := l.ensureLoaded(seg); err != nil {
		return err
	}
	cf, err := l.m.files.acquire(seg.logPath, true)
	if err != nil {
		return err
	}
	defer l.m.files.release(cf)
	for _, part := range contiguousParts(run) {
		if _, err := cf.f.WriteAt(part, seg.size); err != nil {
			return l.failedWrite(seg, cf, err)
		}
		for len(part) > 0 {
			n, _ := batch.Size(part)
			seg.observe(part[:n], seg.size, int64(n), l.cfg.IndexIntervalBytes)
			seg.size += int64(n)
			part = part[n:]
		}
	}
	l.leo = batch.LastOffset(run[len(run)-1]) + 1
	return nil
}

// contiguousParts joins batches that sit back to back in memory.
func contiguousParts(run [][]byte) [][]byte {
	parts := make([][]byte, 0, 1)
	cur := run[0]
	for _, b := range run[1:] {
		if n := len(cur); cap(cur) >= n+len(b) && &cur[:n+1][n] == &b[0] {
			cur = cur[:n+len(b)]
			continue
		}
		parts = append(parts, cur)
		cur = b
	}
	return append(parts, cur)
}

// failedWrite cuts a partial write back to the last whole batch so nothing
// torn is ever served, and reports the error.
func (l *Log) failedWrite(seg *segment, cf *cachedFile, err error) error {
	_ = cf.f.Truncate(seg.size)
	return fmt.Errorf("append to %s: write %s at %d: %w", l.tp, seg.logPath, seg.size, err)
}

// active returns the segment appends go to.
func (l *Log) active() *segment { return l.segs[len(l.segs)-1] }

// rollLocked seals the active segment and starts a new one at base.
func (l *Log) rollLocked(base int64) error {
	old := l.active()
	if base < l.leo {
		base = l.leo
	}
	if err := l.ensureLoaded(old); err != nil {
		return err
	}
	old.sealTimeIndex()
	// Trim the sealed indexes now; their data is synced by the next round.
	if err := old.index.write(l.m.fs, 0, false); err != nil {
		return err
	}
	if err := old.timeIndex.write(l.m.fs, 0, false); err != nil {
		return err
	}
	seg, err := l.createSegment(base)
	if err != nil {
		return err
	}
	l.segs = append(l.segs, seg)
	l.m.syncer.request(l) // flush the sealed segment soon, as Kafka does on roll
	return nil
}

// createSegment creates the files of a new, empty segment.
func (l *Log) createSegment(base int64) (*segment, error) {
	seg := newSegment(l.dir, base)
	seg.loaded, seg.tsKnown, seg.created = true, true, l.m.nowMs()
	l.dirDirty = true
	err := l.createSegmentFiles(seg)
	if err != nil {
		// Leave no stray segment behind: on reopen it would hide data
		// appended to the previous one.
		if derr := l.deleteSegmentFiles(seg); derr != nil {
			l.m.logger.Error("remove half-created segment", "segment", seg.logPath, "err", derr)
		}
		return nil, err
	}
	return seg, nil
}

// createSegmentFiles creates an empty .log and preallocated indexes.
func (l *Log) createSegmentFiles(seg *segment) error {
	f, err := l.m.fs.OpenFile(seg.logPath, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("create segment %s: %w", seg.logPath, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("create segment %s: %w", seg.logPath, err)
	}
	if err := seg.index.write(l.m.fs, l.cfg.SegmentIndexBytes, false); err != nil {
		return err
	}
	return seg.timeIndex.write(l.m.fs, l.cfg.SegmentIndexBytes, false)
}

// ensureLoaded loads a segment's index entries from its files, rebuilding
// them from the .log when missing or inconsistent.
func (l *Log) ensureLoaded(seg *segment) error {
	seg.lastUse = l.m.tick.Load()
	if seg.loaded {
		return nil
	}
	next := l.nextOffsetAfter(seg)
	err := seg.index.load(l.m.fs)
	if err == nil {
		err = seg.index.checkOffsets(seg.size)
	}
	if err == nil {
		err = seg.timeIndex.load(l.m.fs)
	}
	if err == nil {
		err = seg.timeIndex.checkTimes(next)
	}
	if err != nil {
		l.m.logger.Warn("rebuilding index", "partition", l.tp.String(), "segment", seg.logPath, "reason", err)
		return l.rebuildIndexes(seg)
	}
	if !seg.tsKnown {
		seg.maxTs, seg.maxTsOff = seg.timeIndex.lastTime()
	}
	// Bytes since the last index entry: from its position to the end.
	_, pos := seg.index.lookupOffset(math.MaxInt64)
	seg.sinceIdx = seg.size - pos
	seg.loaded = true
	if seg == l.active() {
		return l.rescanTail(seg)
	}
	seg.tsKnown = true
	return nil
}

// rescanTail walks the active segment from its last index entry to the end,
// recomputing the max timestamp and the bytes since the last index entry.
func (l *Log) rescanTail(seg *segment) error {
	_, pos := seg.index.lookupOffset(math.MaxInt64)
	cf, err := l.m.files.acquire(seg.logPath, false)
	if err != nil {
		return err
	}
	defer l.m.files.release(cf)
	sc := newBatchScanner(cf.f, seg.logPath, pos, seg.size, false)
	for p, b, ok := sc.next(); ok; p, b, ok = sc.next() {
		if p == 0 {
			seg.firstTs = batch.MaxTimestamp(b)
		}
		if ts := batch.MaxTimestamp(b); ts > seg.maxTs {
			seg.maxTs, seg.maxTsOff = ts, batch.LastOffset(b)
		}
	}
	seg.sinceIdx = seg.size - pos
	seg.tsKnown = true
	if sc.err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, sc.err)
	}
	return nil
}

// rebuildIndexes rescans a whole segment and rebuilds both indexes.
func (l *Log) rebuildIndexes(seg *segment) error {
	cf, err := l.m.files.acquire(seg.logPath, false)
	if err != nil {
		return err
	}
	defer l.m.files.release(cf)
	seg.resetIndexes()
	size := seg.size
	seg.size = 0
	sc := newBatchScanner(cf.f, seg.logPath, 0, size, false)
	for p, b, ok := sc.next(); ok; p, b, ok = sc.next() {
		sz, _ := batch.Size(b)
		seg.observe(b, p, int64(sz), l.cfg.IndexIntervalBytes)
		seg.size = p + int64(sz)
	}
	if sc.err != nil {
		seg.size = size
		return fmt.Errorf("rebuild index of %s: %w: %w", seg.logPath, ErrCorrupt, sc.err)
	}
	seg.size = size
	if seg != l.active() {
		seg.sealTimeIndex()
	}
	return nil
}

// nextOffsetAfter is the offset just past seg: the next segment's base, or
// the log end offset for the active one.
func (l *Log) nextOffsetAfter(seg *segment) int64 {
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > seg.base })
	if i < len(l.segs) {
		return l.segs[i].base
	}
	return l.leo
}

// segmentFor returns the index of the segment holding offset (the last one
// whose base is <= offset), or -1.
func (l *Log) segmentFor(offset int64) int {
	return sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > offset }) - 1
}
