package log

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/log/batch"
)

// Special timestamps of ListOffsets.
const (
	// LatestTimestamp asks for the log end offset.
	LatestTimestamp = -1
	// EarliestTimestamp asks for the log start offset.
	EarliestTimestamp = -2
	// MaxTimestamp asks for the record with the largest timestamp (KIP-734).
	MaxTimestamp = -3
)

// maxDecodeBytes bounds decompression when the log looks inside a batch:
// the bound produce applies, so whatever the leader accepted can be read.
const maxDecodeBytes = batch.MaxDecompressed

// OffsetForTimestamp answers ListOffsets: for EarliestTimestamp the log start
// offset, for LatestTimestamp the log end offset, for MaxTimestamp the first
// record holding the largest timestamp, otherwise the first record at or
// after the log start offset whose timestamp is >= ts. found is false when no
// record qualifies (Kafka then answers offset -1).
func (l *Log) OffsetForTimestamp(ts int64) (offset, timestamp int64, found bool, err error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	switch ts {
	case EarliestTimestamp:
		return l.logStart, -1, true, nil
	case LatestTimestamp:
		return l.leo, -1, true, nil
	case MaxTimestamp:
		return l.maxTimestampRecord()
	}
	if ts < 0 {
		return -1, -1, false, fmt.Errorf("offset for timestamp %d in %s: %w", ts, l.tp, ErrInvalidOffset)
	}
	for _, seg := range l.segs {
		if err := l.ensureLoadedShared(seg); err != nil {
			return -1, -1, false, err
		}
		if seg.size == 0 || seg.maxTs < ts || l.nextOffsetAfter(seg) <= l.logStart {
			continue
		}
		off, t, ok, err := l.findInSegment(seg, ts, func(_ int64) bool { return true })
		if err != nil || ok {
			return off, t, ok, err
		}
	}
	return -1, -1, false, nil
}

// findInSegment scans seg from the time index's hint for the first record at
// or after the log start offset with timestamp >= ts that accept admits.
func (l *Log) findInSegment(seg *segment, ts int64, accept func(int64) bool) (int64, int64, bool, error) {
	_, hintOff := seg.timeIndex.lookupTime(ts)
	_, pos := seg.index.lookupOffset(max(hintOff, l.logStart))
	cf, err := l.m.files.acquire(seg.logPath, false)
	if err != nil {
		return -1, -1, false, err
	}
	defer l.m.files.release(cf)
	sc := newBatchScanner(cf.f, seg.logPath, pos, seg.size, true)
	for bpos, b, ok := sc.next(); ok; bpos, b, ok = sc.next() {
		if batch.MaxTimestamp(b) < ts || batch.LastOffset(b) < l.logStart {
			continue
		}
		if off, rts, ok := l.findInBatch(b, ts, accept, seg.logPath, bpos); ok {
			return off, rts, true, nil
		}
	}
	if sc.err != nil {
		return -1, -1, false, fmt.Errorf("%w: %v", ErrCorrupt, sc.err)
	}
	return -1, -1, false, nil
}

// findInBatch finds in the batch b (at bpos of path), whose max timestamp is
// at least ts, the first record at or after the log start offset with
// timestamp >= ts that accept admits, as Kafka's
// LogSegment.findOffsetByTimestamp does. A LogAppendTime batch gives every
// record its max timestamp, so nothing is decompressed. A batch whose
// records cannot be read (stored before the leader checked compressed
// batches, or damaged) is logged once and answered at the batch level: its
// first offset past the log start, with its max timestamp, so one bad
// batch never makes every such lookup fail.
func (l *Log) findInBatch(b []byte, ts int64, accept func(int64) bool, path string, bpos int64) (int64, int64, bool) {
	base, maxTs := batch.BaseOffset(b), batch.MaxTimestamp(b)
	if batch.Attributes(b)&batch.LogAppendTimeBit != 0 {
		return max(base, l.logStart), maxTs, accept(maxTs)
	}
	off, rts, found := int64(-1), int64(-1), false
	err := batch.ScanRecords(b, maxDecodeBytes, func(r *kmsg.Record) error {
		o, t := base+int64(r.OffsetDelta), batch.Timestamp(b, r)
		if o >= l.logStart && t >= ts && accept(t) {
			off, rts, found = o, t, true
			return errFound
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFound) {
		l.reportBadBatch("ListOffsets by timestamp (answered at the batch's first offset)", path, bpos, base, err)
		return max(base, l.logStart), maxTs, accept(maxTs)
	}
	return off, rts, found
}

// errFound stops a record scan at its answer.
var errFound = errors.New("log: found")

// maxTimestampRecord finds the first record holding the log's largest
// timestamp.
func (l *Log) maxTimestampRecord() (int64, int64, bool, error) {
	var best *segment
	for _, seg := range l.segs {
		if err := l.ensureLoadedShared(seg); err != nil {
			return -1, -1, false, err
		}
		if seg.size > 0 && (best == nil || seg.maxTs > best.maxTs) {
			best = seg
		}
	}
	if best == nil || best.maxTs < 0 {
		return -1, -1, false, nil
	}
	want := best.maxTs
	return l.findInSegment(best, want, func(t int64) bool { return t == want })
}
