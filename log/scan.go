package log

import (
	"errors"
	"fmt"
	"io"

	"github.com/weirmq/weir/log/batch"
)

// scanChunk is how much of a segment a scan of whole batches reads at once;
// headerScanChunk is what a header-only scan reads, enough for an index
// interval (index.interval.bytes, 4 KiB by default) plus a header.
const (
	scanChunk       = 64 << 10
	headerScanChunk = 8 << 10
)

// batchScanner walks the batches of one segment file from a position, reading
// in chunks. In header mode it yields at least the batch header (a batch that
// does not fit the chunk is skipped over by position); in full mode it yields
// whole batches. It stops at end, or with err set at the first batch whose
// length is impossible or runs past end.
type batchScanner struct {
	f      File
	path   string
	pos    int64 // position of the next batch
	end    int64
	full   bool
	buf    []byte
	bufPos int64 // file position of buf[0]
	err    error
}

func newBatchScanner(f File, path string, start, end int64, full bool) *batchScanner {
	return &batchScanner{f: f, path: path, pos: start, end: end, full: full}
}

// next returns the position and bytes of the next batch (whole in full mode,
// at least the header otherwise). The slice is valid until the next call.
func (s *batchScanner) next() (int64, []byte, bool) {
	if s.err != nil || s.pos >= s.end {
		return 0, nil, false
	}
	if s.end-s.pos < batch.HeaderSize {
		s.err = fmt.Errorf("%w: %s: %d bytes at position %d, less than a batch header", batch.ErrTruncated, s.path, s.end-s.pos, s.pos)
		return 0, nil, false
	}
	hdr, err := s.window(s.pos, batch.HeaderSize)
	if err != nil {
		s.err = err
		return 0, nil, false
	}
	size, err := batch.Size(hdr)
	if err != nil {
		s.err = fmt.Errorf("%s: position %d: %w", s.path, s.pos, err)
		return 0, nil, false
	}
	if s.pos+int64(size) > s.end {
		s.err = fmt.Errorf("%w: %s: batch of %d bytes at position %d runs past the end at %d", batch.ErrTruncated, s.path, size, s.pos, s.end)
		return 0, nil, false
	}
	want := batch.HeaderSize
	if s.full {
		want = size
	}
	b, err := s.window(s.pos, want)
	if err != nil {
		s.err = err
		return 0, nil, false
	}
	pos := s.pos
	s.pos += int64(size)
	return pos, b, true
}

// window returns n bytes at file position pos, refilling the buffer if needed.
func (s *batchScanner) window(pos int64, n int) ([]byte, error) {
	if pos >= s.bufPos && pos+int64(n) <= s.bufPos+int64(len(s.buf)) {
		o := pos - s.bufPos
		return s.buf[o : o+int64(n)], nil
	}
	chunk := scanChunk
	if !s.full {
		chunk = headerScanChunk // locating a batch reads about one index interval
	}
	size := max(n, chunk)
	size = int(min(int64(size), s.end-pos))
	if cap(s.buf) < size {
		s.buf = make([]byte, size)
	}
	s.buf = s.buf[:size]
	m, err := s.f.ReadAt(s.buf, pos)
	if m < n {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("read %s at %d: %w", s.path, pos, err)
	}
	s.buf, s.bufPos = s.buf[:m], pos
	return s.buf[:n], nil
}
