package log

import (
	"errors"
	"fmt"
	"io"

	"github.com/weirmq/weir/log/batch"
)

// ReadOptions bound one read.
type ReadOptions struct {
	// MaxBytes bounds the bytes read and returned; the first batch is
	// returned whole even if larger (KIP-74), so a consumer never stalls,
	// unless HardMaxBytes is set.
	MaxBytes int
	// HardMaxBytes makes MaxBytes absolute: a first batch larger than it is
	// neither read nor returned (no bytes, no error). A fetch sets it for
	// every partition after the first that returned data, as Kafka's
	// ReplicaManager clears minOneMessage.
	HardMaxBytes bool
	// MaxOffset, when > 0, excludes batches whose base offset is at or past
	// it (the high watermark or last stable offset for consumers).
	MaxOffset int64
	// Buf, when its capacity suffices, receives the data (the result then
	// aliases it), so a caller can reuse buffers instead of allocating one
	// per read.
	Buf []byte
}

// Read returns whole batches from one segment starting with the batch that
// holds offset (or the first batch after it, where compaction left a gap).
// It returns no bytes at the log end offset or at MaxOffset, and
// ErrOffsetOutOfRange below the log start offset or past the log end offset.
func (l *Log) Read(offset int64, opts ReadOptions) ([]byte, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil, fmt.Errorf("read %s: %w", l.tp, ErrClosed)
	}
	if offset < l.logStart || offset > l.leo {
		return nil, fmt.Errorf("read %s at %d (log start %d, log end %d): %w", l.tp, offset, l.logStart, l.leo, ErrOffsetOutOfRange)
	}
	maxOffset := l.leo
	if opts.MaxOffset > 0 && opts.MaxOffset < maxOffset {
		maxOffset = opts.MaxOffset
	}
	if opts.HardMaxBytes && opts.MaxBytes < batch.HeaderSize {
		return nil, nil // not even a header fits
	}
	for i := max(l.segmentFor(offset), 0); i < len(l.segs) && offset < maxOffset; i++ {
		data, err := l.readSegment(l.segs[i], offset, maxOffset, opts)
		if errors.Is(err, ErrCorrupt) {
			l.reportBadBatch("read (refused)", l.segs[i].logPath, -1, offset, err)
		}
		if err != nil || len(data) > 0 {
			return data, err
		}
	}
	return nil, nil
}

// readSegment reads from one segment; no bytes means offset lies past its
// last batch, or (HardMaxBytes) that its first batch does not fit. It
// reads at most max(MaxBytes, the first batch) bytes: the batches that fit,
// and of the next one only the part that lies within MaxBytes.
func (l *Log) readSegment(seg *segment, offset, maxOffset int64, opts ReadOptions) ([]byte, error) {
	if err := l.ensureLoadedShared(seg); err != nil {
		return nil, err
	}
	start, first, chain, ok, err := l.findBatch(seg, offset)
	if err != nil || !ok {
		return nil, err
	}
	if first.base >= maxOffset {
		return nil, nil
	}
	maxBytes := max(opts.MaxBytes, batch.HeaderSize)
	if first.size > maxBytes {
		if opts.HardMaxBytes {
			return nil, nil
		}
		maxBytes = first.size // KIP-74: the first batch whole, nothing more
	}
	cf, err := l.m.files.acquire(seg.logPath, false)
	if err != nil {
		return nil, err
	}
	defer l.m.files.release(cf)
	buf := sized(opts.Buf, int(min(int64(maxBytes), seg.size-start)))
	if err := readFull(cf.f, buf, start, seg.logPath); err != nil {
		return nil, err
	}
	end := first.size
	for end+batch.LengthPrefix <= len(buf) {
		size, err := batch.Size(buf[end:])
		if err != nil {
			return nil, fmt.Errorf("%w: %s at position %d: %w", ErrCorrupt, seg.logPath, start+int64(end), err)
		}
		if end+size > len(buf) || batch.BaseOffset(buf[end:]) >= maxOffset {
			break
		}
		end += size
	}
	return chain.verifyServed(buf[:end], start)
}

// batchHead is what a scan learned of a batch from its header.
type batchHead struct {
	base int64
	size int
}

// sized returns dst resliced to n bytes if it can hold them, else a new slice.
func sized(dst []byte, n int) []byte {
	if cap(dst) >= n {
		return dst[:n]
	}
	return make([]byte, n)
}

// offsetChain checks, batch by batch, that offsets in a segment are where
// they must be: inside the segment's range, ascending, and (unless the log
// is compacted) without gaps. Base offsets lie outside the CRC, so this is
// what catches a damaged one before it is served.
type offsetChain struct {
	path string
	base int64 // the segment's base offset
	end  int64 // offsets stay below: the next segment's base or the log end
	gaps bool  // compacted: gaps between batches are legal
	prev int64 // last offset of the previous batch, -1 when unknown
}

func (l *Log) newOffsetChain(seg *segment) *offsetChain {
	return &offsetChain{path: seg.logPath, base: seg.base, end: l.nextOffsetAfter(seg), gaps: l.cfg.CleanupCompact, prev: -1}
}

// check accounts the batch at pos (at least its header).
func (c *offsetChain) check(pos int64, b []byte) error {
	base, last := batch.BaseOffset(b), batch.LastOffset(b)
	ok := base >= c.base && last >= base && last < c.end
	if c.prev >= 0 {
		ok = ok && base > c.prev && (c.gaps || base == c.prev+1)
	}
	if !ok {
		return fmt.Errorf("%w: %s at position %d: batch offsets [%d, %d] out of place (previous batch ends at %d, segment holds [%d, %d))",
			ErrCorrupt, c.path, pos, base, last, c.prev, c.base, c.end)
	}
	c.prev = last
	return nil
}

// verifyServed checks every batch about to be served: its CRC-32C (hardware
// accelerated; data on disk can rot after it was validated) and its place in
// the offset chain. It returns the valid prefix, or an error when the first
// batch is bad.
func (c *offsetChain) verifyServed(data []byte, pos int64) ([]byte, error) {
	for off := 0; off < len(data); {
		size, _ := batch.Size(data[off:])
		b := data[off : off+size]
		_, err := batch.Validate(b)
		if err == nil {
			err = c.check(pos+int64(off), b)
		} else {
			err = fmt.Errorf("%w: %s at position %d: %w", ErrCorrupt, c.path, pos+int64(off), err)
		}
		if err != nil {
			if off == 0 {
				return nil, err
			}
			return data[:off], nil
		}
		off += size
	}
	return data, nil
}

// findBatch returns the position and header facts of the first batch in
// seg whose last offset is >= offset, via the index and a scan of at most
// one index interval, and the offset chain up to it (the batch itself not
// yet checked).
func (l *Log) findBatch(seg *segment, offset int64) (int64, batchHead, *offsetChain, bool, error) {
	idxOff, pos := seg.index.lookupOffset(offset)
	chain := l.newOffsetChain(seg)
	if pos == 0 && !chain.gaps {
		chain.prev = seg.base - 1 // the first batch starts at the base
	}
	cf, err := l.m.files.acquire(seg.logPath, false)
	if err != nil {
		return 0, batchHead{}, nil, false, err
	}
	defer l.m.files.release(cf)
	sc := newBatchScanner(cf.f, seg.logPath, pos, seg.size, false)
	for p, b, ok := sc.next(); ok; p, b, ok = sc.next() {
		if p == pos && pos > 0 && batch.LastOffset(b) != idxOff {
			return 0, batchHead{}, nil, false, fmt.Errorf("%w: %s at position %d: batch ends at %d, its index entry says %d",
				ErrCorrupt, seg.logPath, p, batch.LastOffset(b), idxOff)
		}
		if batch.LastOffset(b) >= offset {
			// Its place is checked on a copy: the caller checks it again
			// among the batches it serves. Unchecked, a batch whose base
			// offset (outside the CRC) was damaged past the range read
			// would end the read as if nothing were there.
			probe := *chain
			if err := probe.check(p, b); err != nil {
				return 0, batchHead{}, nil, false, err
			}
			size, _ := batch.Size(b) // the scanner checked it
			return p, batchHead{base: batch.BaseOffset(b), size: size}, chain, true, nil
		}
		if err := chain.check(p, b); err != nil {
			return 0, batchHead{}, nil, false, err
		}
	}
	if sc.err != nil {
		return 0, batchHead{}, nil, false, fmt.Errorf("%w: %w", ErrCorrupt, sc.err)
	}
	return 0, batchHead{}, nil, false, nil
}

// ensureLoadedShared loads a segment's indexes from a reader holding the
// read lock; loading is serialized by the manager's load lock.
func (l *Log) ensureLoadedShared(seg *segment) error {
	l.m.loadMu.Lock()
	defer l.m.loadMu.Unlock()
	return l.ensureLoaded(seg)
}

func readFull(f File, buf []byte, off int64, path string) error {
	n, err := f.ReadAt(buf, off)
	if n == len(buf) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("read %s at %d: %w", path, off, err)
}
