package log

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirmq/weir/log/batch"
)

// The log cleaner compacts logs whose cleanup.policy includes compact, as
// Kafka's LogCleaner does. One pass over a log:
//
//  1. Takes the cleanable range: from the cleaner checkpoint to the active
//     segment's base, cut at the first segment holding a record younger than
//     min.compaction.lag.ms and at the first offset of an open transaction.
//  2. Maps each key of that dirty range to its latest offset in the offset
//     map (fixed memory); when the map fills, the pass ends there and the
//     next one goes on.
//  3. Rewrites the segments from the log start to the end of the mapped
//     range in groups that fit one segment, keeping the latest record of
//     each key; tombstones get a delete horizon (KIP-534) on their first
//     cleaning and go once it has passed. Offsets and batch metadata stay.
//  4. Swaps each group's new segment in crash-safely under the log's write
//     lock, aborting if a truncation, retention or deletion changed the
//     segments meanwhile (completeSwaps finishes an interrupted swap).
//  5. Moves the cleaner checkpoint to the end of the mapped range.

// logCleaner is the Manager's cleaning state. Its zero value is ready; the
// offset map and buffers are allocated on first use and reused, so the
// cleaner's memory does not grow with the number of keys.
type logCleaner struct {
	mu       sync.Mutex // one cleaning at a time per log directory
	offsets  *offsetMap
	wbuf     []byte
	horizons map[TopicPartition]int64 // latest delete horizon of a kept tombstone
	lastData map[int64]int64          // producer id -> last offset of its last data batch
	openTxn  map[int64]int64          // producer id -> first offset of its open transaction
}

func (c *logCleaner) init(cfg CleanerConfig) {
	if c.offsets == nil {
		c.offsets = newOffsetMap(cfg.DedupeBufferSize, cfg.LoadFactor)
		c.wbuf = make([]byte, 0, cfg.IOBufferSize)
		c.horizons = make(map[TopicPartition]int64)
		c.lastData = make(map[int64]int64)
		c.openTxn = make(map[int64]int64)
	}
}

// Clean runs the cleaner once over the directory: every log whose
// cleanup.policy includes compact and whose dirty ratio reaches its
// min.cleanable.dirty.ratio (or whose tombstones' delete horizon has passed)
// is cleaned, the filthiest first, each up to the end of its cleanable range
// at the time. Failures are logged. It returns the number of logs cleaned.
func (m *Manager) Clean() int {
	c := &m.cleaner
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init(m.cfg.Cleaner)
	n := 0
	for _, l := range m.cleanable() {
		if m.stopping() {
			break
		}
		st, err := m.cleanLogLocked(l, false)
		switch {
		case errors.Is(err, ErrCleanAborted):
			m.logger.Info("cleaner: cleaning aborted", "partition", l.tp.String(), "reason", err)
		case err != nil:
			m.logger.Error("cleaner: cleaning failed", "partition", l.tp.String(), "err", err)
		case st.Passes > 0:
			n++
		}
	}
	return n
}

// CleanLog cleans the log of tp now, whatever its dirty ratio: in as many
// passes as the offset map needs, up to the end of the cleanable range as it
// is when called. It returns what was done; an error wrapping ErrCleanAborted
// means the log changed meanwhile and nothing was lost.
func (m *Manager) CleanLog(tp TopicPartition) (CleanStats, error) {
	l, ok := m.Log(tp)
	if !ok {
		return CleanStats{}, fmt.Errorf("clean %s: %w", tp, ErrLogNotOpen)
	}
	c := &m.cleaner
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init(m.cfg.Cleaner)
	return m.cleanLogLocked(l, true)
}

// stopping reports whether the manager is shutting down.
func (m *Manager) stopping() bool {
	select {
	case <-m.stop:
		return true
	default:
		return false
	}
}

// cleanLogLocked runs passes over l until its cleanable range as of the
// first pass is clean. Without force, a pass that finds nothing dirty (an
// open transaction may hold the range back) and no tombstone to expire
// does nothing. The caller holds the cleaner's lock.
func (m *Manager) cleanLogLocked(l *Log, force bool) (CleanStats, error) {
	if err := l.setCleanerBusy(true); err != nil {
		return CleanStats{}, err
	}
	defer func() { _ = l.setCleanerBusy(false) }()
	var total CleanStats
	target := int64(-1)
	for {
		if m.stopping() {
			return total, fmt.Errorf("clean %s: manager closing: %w", l.tp, ErrCleanAborted)
		}
		p, err := m.runPass(l, force)
		if p != nil {
			total.add(p.stats)
		}
		if err != nil {
			return total, err
		}
		if target < 0 {
			target = p.end
		}
		if p.mapEnd >= min(target, p.end) {
			break
		}
	}
	if total.Passes == 0 {
		return total, nil
	}
	m.logger.Info("cleaner: cleaned log", "partition", l.tp.String(), "passes", total.Passes,
		"bytesRead", total.BytesRead, "bytesWritten", total.BytesWritten,
		"recordsRemoved", total.RecordsRemoved, "tombstonesRemoved", total.TombstonesRemoved,
		"mapFill", total.MapFill, "cleanedTo", total.CleanedTo)
	return total, nil
}

// setCleanerBusy marks l as being cleaned, or no longer.
func (l *Log) setCleanerBusy(busy bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if busy && l.closed {
		return fmt.Errorf("clean %s: %w", l.tp, ErrClosed)
	}
	l.cleanerBusy = busy
	return nil
}

// cleanPass is one pass over one log.
type cleanPass struct {
	m     *Manager
	c     *logCleaner
	l     *Log
	cfg   Config
	now   int64
	snap  []*segment // the log's segments when the pass began
	sizes []int64    // their sizes then
	idx   []int      // their offset index entries (below end)
	tidx  []int      // their time index entries (below end)

	firstDirty, end int64 // the cleanable range
	mapEnd          int64 // every dirty record below is mapped: the pass cleans up to here
	fence           int   // index in snap of the first segment at or past mapEnd
	horizon         int64 // latest delete horizon of a tombstone kept
	lazy            bool  // skip the pass if nothing is dirty
	prevEnd         int64 // offset after the last batch read, to check order
	stats           CleanStats
}

// runPass runs one pass over l: map, clean and swap each group, checkpoint.
func (m *Manager) runPass(l *Log, force bool) (*cleanPass, error) {
	p, err := m.startPass(l)
	if err != nil {
		return nil, err
	}
	if h := p.c.horizons[l.tp]; !force && !(h > 0 && h <= p.now) {
		p.lazy = true
	}
	if err := p.run(); err != nil {
		if !errors.Is(err, ErrCleanAborted) && p.changed() {
			err = fmt.Errorf("clean %s: log changed during cleaning (%v): %w", l.tp, err, ErrCleanAborted)
		}
		return p, err
	}
	if p.stats.Passes == 0 {
		return p, nil
	}
	if err := m.saveCleanerOffset(l, p.mapEnd); err != nil {
		return p, err
	}
	p.stats.CleanedTo = p.mapEnd
	if p.horizon > 0 {
		p.c.horizons[l.tp] = p.horizon
	} else {
		delete(p.c.horizons, l.tp)
	}
	return p, nil
}

// startPass snapshots l's segments and cleanable range.
func (m *Manager) startPass(l *Log) (*cleanPass, error) {
	now := m.nowMs()
	checkpoint, ok := m.cleanerOffset(l.tp)
	l.mu.RLock()
	defer l.mu.RUnlock()
	if err := l.compactedLocked(); err != nil {
		return nil, err
	}
	r, err := l.dirtyRangeLocked(checkpoint, ok, now)
	if err != nil {
		return nil, err
	}
	p := &cleanPass{
		m: m, c: &m.cleaner, l: l, cfg: l.cfg, now: now,
		snap: slices.Clone(l.segs), firstDirty: r.firstDirty, end: r.end,
	}
	for _, seg := range p.snap {
		p.sizes = append(p.sizes, seg.size)
		if seg.base >= r.end {
			continue
		}
		// Index sizes bound the groups, as in Kafka.
		if err := l.ensureLoadedShared(seg); err != nil {
			return nil, fmt.Errorf("clean %s: %w", l.tp, err)
		}
		p.idx = append(p.idx, seg.index.entries())
		p.tidx = append(p.tidx, seg.timeIndex.entries())
	}
	return p, nil
}

// run performs the pass after its snapshot.
func (p *cleanPass) run() error {
	unstable, err := p.scanProducers()
	if err != nil {
		return err
	}
	p.end = min(p.end, unstable)
	p.firstDirty = min(p.firstDirty, p.end)
	if p.lazy && p.firstDirty >= p.end {
		p.mapEnd = p.firstDirty
		return nil
	}
	p.stats.Passes = 1
	if err := p.buildMap(); err != nil {
		return err
	}
	p.fence = sort.Search(len(p.snap), func(i int) bool { return p.snap[i].base >= p.mapEnd })
	if err := p.syncOld(); err != nil {
		return err
	}
	for _, g := range p.groups() {
		if p.m.stopping() {
			return fmt.Errorf("clean %s: manager closing: %w", p.l.tp, ErrCleanAborted)
		}
		if err := p.cleanGroup(g[0], g[1]); err != nil {
			return err
		}
	}
	return nil
}

// syncOld makes the segments about to be replaced durable if a flush has not
// yet, so that no flush still has them to sync when their files go.
func (p *cleanPass) syncOld() error {
	for i, seg := range p.snap[:p.fence] {
		p.l.mu.RLock()
		synced := seg.synced >= p.sizes[i]
		p.l.mu.RUnlock()
		if synced {
			continue
		}
		if err := p.l.syncSegment(seg); err != nil {
			return fmt.Errorf("clean %s: %w", p.l.tp, err)
		}
		p.l.mu.Lock()
		seg.synced = max(seg.synced, p.sizes[i])
		p.l.mu.Unlock()
	}
	return nil
}

// changed reports whether the log's segments changed since the snapshot (a
// truncation, retention or deletion raced with the pass), to tell an error
// they caused from corruption.
func (p *cleanPass) changed() bool {
	p.l.mu.RLock()
	defer p.l.mu.RUnlock()
	if p.l.closed {
		return true
	}
	for i, seg := range p.snap {
		j := p.l.segmentFor(seg.base)
		if j < 0 || p.l.segs[j] != seg || i < len(p.snap)-1 && seg.size != p.sizes[i] {
			return true
		}
	}
	return false
}

// scanSegment calls fn with the position and bytes of each batch of seg up
// to size: whole batches with full, at least the header otherwise. The bytes
// are valid during the call only.
func (p *cleanPass) scanSegment(seg *segment, size int64, full bool, fn func(pos int64, b []byte) error) error {
	cf, err := p.m.files.acquire(seg.logPath, false)
	if err != nil {
		return fmt.Errorf("clean %s: %w", p.l.tp, err)
	}
	defer p.m.files.release(cf)
	sc := newBatchScanner(cf.f, seg.logPath, 0, size, full)
	for pos, b, ok := sc.next(); ok; pos, b, ok = sc.next() {
		if err := fn(pos, b); err != nil {
			return err
		}
	}
	if sc.err != nil {
		return fmt.Errorf("clean %s: %w: %v", p.l.tp, ErrCorrupt, sc.err)
	}
	return nil
}

// corrupt reports a bad batch of seg at pos.
func (p *cleanPass) corrupt(seg *segment, pos int64, err error) error {
	return fmt.Errorf("clean %s: %w: %s at position %d: %v", p.l.tp, ErrCorrupt, seg.logPath, pos, err)
}

// scanProducers reads every batch header of the snapshot for the last data
// batch of each producer id (kept, if need be as an empty batch, so the
// state of idempotent producers survives cleaning) and returns the first
// offset of a transaction without its marker yet (the last stable offset:
// cleaning stops there, as Kafka's does). Memory grows with the producer ids
// in the log, not with its keys.
func (p *cleanPass) scanProducers() (int64, error) {
	clear(p.c.lastData)
	clear(p.c.openTxn)
	for i, seg := range p.snap {
		err := p.scanSegment(seg, p.sizes[i], false, func(pos int64, b []byte) error {
			h, err := batch.ParseHeader(b)
			if err != nil {
				return p.corrupt(seg, pos, err)
			}
			p.trackProducer(&h)
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	unstable := int64(math.MaxInt64)
	for _, off := range p.c.openTxn {
		unstable = min(unstable, off)
	}
	return unstable, nil
}

// trackProducer notes one batch header in the producer state.
func (p *cleanPass) trackProducer(h *kmsg.RecordBatch) {
	pid := h.ProducerID
	switch {
	case pid < 0:
	case h.Attributes&batch.ControlBit != 0:
		delete(p.c.openTxn, pid)
	default:
		if _, open := p.c.openTxn[pid]; !open && h.Attributes&batch.TransactionalBit != 0 {
			p.c.openTxn[pid] = h.FirstOffset
		}
		p.c.lastData[pid] = h.FirstOffset + int64(h.LastOffsetDelta)
	}
}

// groups splits the snapshot's segments below mapEnd into runs [lo, hi)
// that fit in one segment: at most segment.bytes, offsets relative to the
// first base within int32, index entries within segment.index.bytes, as
// Kafka's groupSegmentsBySize.
func (p *cleanPass) groups() [][2]int {
	var out [][2]int
	segBytes, indexBytes := p.cfg.SegmentBytes, p.cfg.SegmentIndexBytes
	for lo := 0; lo < p.fence; {
		hi := lo + 1
		size, idx, tidx := p.sizes[lo], p.idx[lo], p.tidx[lo]
		for hi < p.fence {
			last := p.snap[hi+1].base - 1
			if size+p.sizes[hi] > segBytes || last-p.snap[lo].base > math.MaxInt32 ||
				int64(idx+p.idx[hi])*indexEntrySize > indexBytes ||
				int64(tidx+p.tidx[hi])*timeIndexEntrySize > indexBytes {
				break
			}
			size, idx, tidx = size+p.sizes[hi], idx+p.idx[hi], tidx+p.tidx[hi]
			hi++
		}
		out = append(out, [2]int{lo, hi})
		lo = hi
	}
	return out
}

// cleanGroup rewrites the segments snap[lo:hi] into one new segment and
// swaps it in.
func (p *cleanPass) cleanGroup(lo, hi int) error {
	w, err := newSegmentWriter(p.m.fs, p.l.dir, p.snap[lo].base, p.cfg, p.c.wbuf[:0])
	if err != nil {
		return fmt.Errorf("clean %s: %w", p.l.tp, err)
	}
	changed := hi-lo > 1
	for i := lo; i < hi; i++ {
		seg, next := p.snap[i], p.snap[i+1].base
		p.prevEnd = seg.base
		err := p.scanSegment(seg, p.sizes[i], true, func(pos int64, b []byte) error {
			same, err := p.cleanBatch(w, seg, next, pos, b)
			changed = changed || !same
			return err
		})
		if err != nil {
			w.abort()
			return err
		}
	}
	if !changed {
		w.abort() // one segment, every batch as it was
		return nil
	}
	if err := w.finish(); err != nil {
		w.abort()
		return fmt.Errorf("clean %s: %w", p.l.tp, err)
	}
	return p.swap(lo, hi, w)
}

// cleanBatch checks that the batch at pos of seg follows the previous one
// and ends before next, filters it and appends what remains to w. It reports
// whether the batch was written unchanged.
func (p *cleanPass) cleanBatch(w *segmentWriter, seg *segment, next, pos int64, b []byte) (bool, error) {
	base, last := batch.BaseOffset(b), batch.LastOffset(b)
	if base < p.prevEnd || last >= next || last < base {
		return false, p.corrupt(seg, pos, fmt.Errorf("batch offsets [%d, %d] out of order (after %d, segment ends before %d)", base, last, p.prevEnd, next))
	}
	p.prevEnd = last + 1
	out, err := p.filter(b)
	if err != nil {
		// Records that cannot be read (a batch stored before the leader
		// checked compressed batches, or damaged) stay as they are: the
		// cleaner cannot tell which of them are superseded, and failing
		// the pass would retry it every backoff forever. Logged once.
		p.l.reportBadBatch("cleaning (batch kept unchanged)", seg.logPath, pos, base, err)
		p.stats.BadBatchesKept++
		out = b
	}
	if out == nil {
		return false, nil
	}
	p.stats.BytesWritten += int64(len(out))
	if err := w.append(out); err != nil {
		return false, fmt.Errorf("clean %s: %w", p.l.tp, err)
	}
	return &out[0] == &b[0], nil
}

// filter decides the fate of one batch: kept as is (b itself), rewritten (a
// new batch) or removed (nil), following Kafka's LogCleaner.
func (p *cleanPass) filter(b []byte) ([]byte, error) {
	p.stats.BytesRead += int64(len(b))
	p.stats.RecordsRead += int64(max(batch.NumRecords(b), 0))
	if batch.Attributes(b)&batch.ControlBit != 0 {
		return p.keepControl(b)
	}
	recs, err := batch.Records(b, maxDecodeBytes)
	if err != nil {
		return nil, err
	}
	h, _ := batch.ParseHeader(b)
	hasHorizon := h.Attributes&batch.DeleteHorizonBit != 0
	kept, tombstones := p.retain(&h, recs, hasHorizon)
	removed := len(recs) - len(kept)
	p.stats.RecordsKept += int64(len(kept))
	p.stats.RecordsRemoved += int64(removed)
	if tombstones && hasHorizon {
		p.horizon = max(p.horizon, h.FirstTimestamp)
	}
	needHorizon := tombstones && !hasHorizon
	if removed == 0 && !needHorizon && len(recs) > 0 {
		p.stats.BatchesCopied++
		return b, nil
	}
	if len(kept) == 0 {
		// An empty batch stays only while it is its producer's last.
		if h.ProducerID >= 0 && p.c.lastData[h.ProducerID] == batch.LastOffset(b) {
			p.stats.EmptyBatchesKept++
			if len(recs) == 0 {
				return b, nil
			}
			return buildBatch(emptyBatchOptions(&h), nil)
		}
		p.stats.BatchesRemoved++
		return nil, nil
	}
	opts := rebuildOptions(&h)
	if needHorizon {
		p.setHorizon(&opts, kept)
	}
	p.stats.BatchesRewritten++
	return buildBatch(opts, kept)
}

// setHorizon gives a batch whose tombstones are cleaned for the first time
// its delete horizon, now + delete.retention.ms (KIP-534): the base
// timestamp becomes the horizon, and the record timestamp deltas shift so
// that every record keeps its timestamp.
func (p *cleanPass) setHorizon(opts *batch.Options, kept []kmsg.Record) {
	horizon := p.now + min(p.cfg.DeleteRetentionMs, math.MaxInt64-p.now)
	for i := range kept {
		kept[i].TimestampDelta64 = opts.BaseTimestamp + kept[i].TimestampDelta64 - horizon
		kept[i].TimestampDelta = 0
	}
	opts.DeleteHorizon, opts.BaseTimestamp = true, horizon
	p.horizon = max(p.horizon, horizon)
}

// keepControl keeps a transaction marker as it is: without a transaction
// index there is no telling yet when a marker may go.
func (p *cleanPass) keepControl(b []byte) ([]byte, error) {
	if _, err := batch.Validate(b); err != nil {
		return nil, err
	}
	p.stats.RecordsKept += int64(batch.NumRecords(b))
	p.stats.BatchesCopied++
	return b, nil
}

// retain filters recs in place: a record stays if it has a key, is the
// latest of its key in the map (or its key is not mapped), and is not a
// tombstone whose batch's delete horizon has passed. It also reports whether
// a kept record is a tombstone.
func (p *cleanPass) retain(h *kmsg.RecordBatch, recs []kmsg.Record, hasHorizon bool) ([]kmsg.Record, bool) {
	kept := recs[:0]
	tombstones := false
	for i := range recs {
		r := &recs[i]
		off := h.FirstOffset + int64(r.OffsetDelta)
		switch {
		case r.Key == nil:
			p.stats.InvalidRecords++
			continue
		case p.c.offsets.get(r.Key) > off:
			continue // a later record of the key is kept
		case r.Value == nil && hasHorizon && p.now >= h.FirstTimestamp:
			p.stats.TombstonesRemoved++
			continue
		}
		tombstones = tombstones || r.Value == nil
		kept = append(kept, *r)
	}
	return kept, tombstones
}

// rebuildOptions keeps the header of h for a batch with fewer records: same
// base offset and last offset delta (so gaps and sequence numbers hold),
// producer, epochs, codec, attributes and, with LogAppendTime, timestamp.
func rebuildOptions(h *kmsg.RecordBatch) batch.Options {
	opts := batch.Options{
		Codec:                h.Attributes & batch.CodecMask,
		ProducerID:           h.ProducerID,
		ProducerEpoch:        h.ProducerEpoch,
		BaseSequence:         h.FirstSequence,
		Transactional:        h.Attributes&batch.TransactionalBit != 0,
		LogAppendTime:        h.Attributes&batch.LogAppendTimeBit != 0,
		PartitionLeaderEpoch: h.PartitionLeaderEpoch,
		BaseOffset:           h.FirstOffset,
		BaseTimestamp:        h.FirstTimestamp,
		DeleteHorizon:        h.Attributes&batch.DeleteHorizonBit != 0,
		LastOffsetDelta:      &h.LastOffsetDelta,
	}
	if opts.LogAppendTime {
		opts.MaxTimestamp = &h.MaxTimestamp
	}
	return opts
}

// emptyBatchOptions is the bare header Kafka's cleaner keeps for the last
// batch of a producer: uncompressed, no records, both timestamps the
// original max timestamp.
func emptyBatchOptions(h *kmsg.RecordBatch) batch.Options {
	opts := rebuildOptions(h)
	opts.Codec, opts.DeleteHorizon = batch.CodecNone, false
	opts.BaseTimestamp, opts.MaxTimestamp = h.MaxTimestamp, &h.MaxTimestamp
	return opts
}

func buildBatch(opts batch.Options, recs []kmsg.Record) ([]byte, error) {
	out, err := batch.Build(opts, recs)
	if err != nil {
		return nil, fmt.Errorf("rebuild batch at offset %d: %w", opts.BaseOffset, err)
	}
	return out, nil
}

// segmentWriter writes a cleaned segment to "<base>.log.cleaned" (and its
// indexes to ".index.cleaned", ".timeindex.cleaned") through a bounded
// buffer, building its in-memory segment as appends do.
type segmentWriter struct {
	fs         FS
	f          File
	seg        *segment
	buf        []byte
	written    int64 // bytes of seg already in the file
	interval   int64
	indexBytes int64
}

func newSegmentWriter(fsys FS, dir string, base int64, cfg Config, buf []byte) (*segmentWriter, error) {
	seg := newSegment(dir, base)
	seg.loaded, seg.tsKnown = true, true
	w := &segmentWriter{fs: fsys, seg: seg, buf: buf, interval: cfg.IndexIntervalBytes, indexBytes: cfg.SegmentIndexBytes}
	w.removeFiles(cleanedSuffix)
	f, err := fsys.OpenFile(seg.logPath+cleanedSuffix, osCreateTrunc, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create cleaned segment %s: %w", seg.logPath+cleanedSuffix, err)
	}
	w.f = f
	return w, nil
}

// paths returns the segment's final file names, the .log last (the order of
// the swap renames, so a .log.swap outlives its index swaps).
func (w *segmentWriter) paths() [3]string {
	return [3]string{w.seg.index.path, w.seg.timeIndex.path, w.seg.logPath}
}

// removeFiles removes the segment's files with suffix, if any.
func (w *segmentWriter) removeFiles(suffix string) {
	for _, p := range w.paths() {
		_ = w.fs.Remove(p + suffix)
	}
}

// append adds one batch at the end of the segment.
func (w *segmentWriter) append(b []byte) error {
	s := w.seg
	if s.size+int64(len(b)) > math.MaxInt32 {
		return fmt.Errorf("cleaned segment %s would pass %d bytes", s.logPath, math.MaxInt32)
	}
	if s.index.full(w.indexBytes) || s.timeIndex.full(w.indexBytes) {
		// No room for more entries: lookups scan from the last one.
		if ts := batch.MaxTimestamp(b); ts > s.maxTs {
			s.maxTs, s.maxTsOff = ts, batch.LastOffset(b)
		}
		s.sinceIdx += int64(len(b))
	} else {
		s.observe(b, s.size, int64(len(b)), w.interval)
	}
	s.size += int64(len(b))
	if len(w.buf)+len(b) > cap(w.buf) {
		if err := w.flush(); err != nil {
			return err
		}
	}
	if len(b) > cap(w.buf) {
		return w.write(b)
	}
	w.buf = append(w.buf, b...)
	return nil
}

func (w *segmentWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	err := w.write(w.buf)
	w.buf = w.buf[:0]
	return err
}

func (w *segmentWriter) write(b []byte) error {
	if _, err := w.f.WriteAt(b, w.written); err != nil {
		return fmt.Errorf("write cleaned segment %s at %d: %w", w.f.Name(), w.written, err)
	}
	w.written += int64(len(b))
	return nil
}

// finish makes the cleaned files durable: the .log, then both indexes.
func (w *segmentWriter) finish() error {
	if err := w.flush(); err != nil {
		return err
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("sync cleaned segment %s: %w", w.f.Name(), err)
	}
	err := w.f.Close()
	w.f = nil
	if err != nil {
		return fmt.Errorf("close cleaned segment: %w", err)
	}
	w.seg.synced = w.seg.size
	w.seg.sealTimeIndex()
	for _, x := range []*indexFile{w.seg.index, w.seg.timeIndex} {
		final := x.path
		x.path = final + cleanedSuffix
		err := x.write(w.fs, 0, true)
		x.path = final
		if err != nil {
			return err
		}
	}
	return nil
}

// abort drops the cleaned files.
func (w *segmentWriter) abort() {
	if w.f != nil {
		_ = w.f.Close()
		w.f = nil
	}
	w.removeFiles(cleanedSuffix)
}

const osCreateTrunc = os.O_RDWR | os.O_CREATE | os.O_TRUNC

// swap replaces snap[lo:hi] in the log with the segment w wrote, under the
// log's write lock: it checks that the segments the pass depends on are
// unchanged, renames the cleaned files to swap files and syncs the directory
// (the commit point: from here a crash completes the swap at open), deletes
// the old segments' files, renames the swap files to their final names and
// syncs the directory again. A group whose records all went is removed
// without a replacement, unless it starts the log (its base offset keeps
// the log start).
func (p *cleanPass) swap(lo, hi int, w *segmentWriter) error {
	l := p.l
	l.mu.Lock()
	defer l.mu.Unlock()
	at, ok := p.locateLocked(lo)
	if !ok {
		w.abort()
		return fmt.Errorf("clean %s: segments changed before the swap of %s: %w", l.tp, w.seg.logPath, ErrCleanAborted)
	}
	old := slices.Clone(l.segs[at : at+hi-lo])
	if w.seg.size == 0 && at > 0 {
		w.abort()
		l.segs = slices.Delete(slices.Clone(l.segs), at, at+hi-lo)
		p.stats.SegmentsReplaced += len(old)
		return p.deleteOldLocked(old)
	}
	if err := p.commitLocked(w); err != nil {
		return err
	}
	// Committed: memory follows the directory as the next open will see it.
	w.seg.created, w.seg.lastUse = p.now, p.m.tick.Load()
	l.segs = slices.Replace(slices.Clone(l.segs), at, at+hi-lo, w.seg)
	p.stats.SegmentsReplaced += len(old)
	p.stats.SegmentsWritten++
	if err := p.deleteOldLocked(old); err != nil {
		return err
	}
	for _, final := range w.paths() {
		if err := p.m.fs.Rename(final+swapSuffix, final); err != nil {
			return fmt.Errorf("clean %s: rename %s (the swap completes at the next open): %w", l.tp, final+swapSuffix, err)
		}
	}
	l.dirDirty = true
	return l.syncDirIfDirty()
}

// locateLocked returns the position in l.segs of snap[lo] and checks that
// snap[lo:fence+1] are still there, in order, with their sizes (the last,
// possibly the active segment, may have grown): a truncation below mapEnd,
// retention or a deletion since the snapshot fails the check.
func (p *cleanPass) locateLocked(lo int) (int, bool) {
	l := p.l
	if l.closed {
		return 0, false
	}
	at := l.segmentFor(p.snap[lo].base)
	last := p.fence // < len(p.snap): mapEnd is at most the active base
	if at < 0 || at+last-lo >= len(l.segs) {
		return 0, false
	}
	for i := lo; i <= last; i++ {
		seg := l.segs[at+i-lo]
		if seg != p.snap[i] || i < last && seg.size != p.sizes[i] {
			return 0, false
		}
	}
	return at, true
}

// commitLocked renames the cleaned files to swap files and syncs the
// directory. On failure it removes them again.
func (p *cleanPass) commitLocked(w *segmentWriter) error {
	fsys := p.m.fs
	for _, final := range w.paths() {
		if err := fsys.Rename(final+cleanedSuffix, final+swapSuffix); err != nil {
			w.removeFiles(swapSuffix)
			w.abort()
			return fmt.Errorf("clean %s: rename %s: %w", p.l.tp, final+cleanedSuffix, err)
		}
	}
	if err := fsys.SyncDir(p.l.dir); err != nil {
		w.removeFiles(swapSuffix)
		if serr := fsys.SyncDir(p.l.dir); serr != nil {
			p.m.logger.Error("cleaner: cannot undo swap files", "partition", p.l.tp.String(), "err", serr)
		}
		return fmt.Errorf("clean %s: %w", p.l.tp, err)
	}
	return nil
}

// deleteOldLocked removes the replaced segments' files.
func (p *cleanPass) deleteOldLocked(old []*segment) error {
	for _, seg := range old {
		if err := p.l.deleteSegmentFiles(seg); err != nil {
			return fmt.Errorf("clean %s: %w", p.l.tp, err)
		}
	}
	return p.l.syncDirIfDirty()
}

// saveCleanerOffset moves l's cleaner checkpoint to offset and persists
// cleaner-offset-checkpoint.
func (m *Manager) saveCleanerOffset(l *Log, offset int64) error {
	l.mu.RLock()
	closed := l.closed
	l.mu.RUnlock()
	if closed {
		return fmt.Errorf("clean %s: %w", l.tp, ErrCleanAborted)
	}
	if err := m.writeCleanerCheckpoint(l.tp, offset, false); err != nil {
		return fmt.Errorf("clean %s: %w", l.tp, err)
	}
	return nil
}

// completeSwaps finishes compaction swaps a crash interrupted, at open: for
// each "<base>.log.swap" it deletes the segments (.log, .index, .timeindex)
// whose base lies in the swap segment's offset range and renames the swap
// files to their final names. A missing index swap leaves the index to be
// rebuilt on load; index swaps without a .log.swap are removed.
func (m *Manager) completeSwaps(dir string, swaps, names []string) error {
	pending := make(map[string]bool, len(swaps))
	for _, s := range swaps {
		pending[s] = true
	}
	for _, s := range swaps {
		base, ok := parseSegmentFileName(strings.TrimSuffix(s, swapSuffix), logSuffix)
		if !ok {
			continue
		}
		if err := m.completeSwap(dir, base, names, pending); err != nil {
			return err
		}
	}
	for s := range pending {
		if err := m.removeFile(filepath.Join(dir, s)); err != nil {
			return err
		}
	}
	if err := m.fs.SyncDir(dir); err != nil {
		return fmt.Errorf("complete swap in %s: %w", dir, err)
	}
	return nil
}

// completeSwap finishes the swap of the segment at base: regular segment
// files in its offset range go, and its swap files (taken from pending) get
// their final names, the .log last.
func (m *Manager) completeSwap(dir string, base int64, names []string, pending map[string]bool) error {
	last, err := m.swapLastOffset(filepath.Join(dir, segmentFileName(base, logSuffix+swapSuffix)), base)
	if err != nil {
		return err
	}
	for _, name := range names {
		for _, suffix := range []string{logSuffix, indexSuffix, timeIndexSuffix} {
			if b, ok := parseSegmentFileName(name, suffix); ok && b >= base && b <= last {
				if err := m.removeFile(filepath.Join(dir, name)); err != nil {
					return err
				}
			}
		}
	}
	for _, suffix := range []string{indexSuffix, timeIndexSuffix, logSuffix} {
		final := segmentFileName(base, suffix)
		if !pending[final+swapSuffix] {
			continue
		}
		delete(pending, final+swapSuffix)
		if err := m.fs.Rename(filepath.Join(dir, final+swapSuffix), filepath.Join(dir, final)); err != nil {
			return fmt.Errorf("complete swap in %s: %w", dir, err)
		}
	}
	m.logger.Info("completed an interrupted compaction swap", "dir", dir, "base", base, "lastOffset", last)
	return nil
}

// swapLastOffset returns the last offset of the swap segment at path (base
// if it is empty). A swap file was synced before it was named, so a bad
// batch is unexpected: the range ends before it and recovery of the segment
// deals with the rest.
func (m *Manager) swapLastOffset(path string, base int64) (int64, error) {
	f, err := m.fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return 0, fmt.Errorf("complete swap %s: %w", path, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return 0, fmt.Errorf("complete swap %s: %w", path, err)
	}
	last := base
	sc := newBatchScanner(f, path, 0, size, false)
	for _, b, ok := sc.next(); ok; _, b, ok = sc.next() {
		last = max(last, batch.LastOffset(b))
	}
	if sc.err != nil {
		m.logger.Warn("swap segment ends in a bad batch", "path", path, "reason", sc.err)
	}
	return last, nil
}

// removeFile deletes path (forgetting any cached handle); a missing file is
// not an error.
func (m *Manager) removeFile(path string) error {
	m.files.drop(path)
	if err := m.fs.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}
