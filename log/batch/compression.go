package batch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// maxLimit caps a decompression limit: no batch section can exceed it, and
// limit+1 must not overflow.
const maxLimit = maxLength

// Decompress returns the records section src decompressed with codec (one of
// the Codec constants: a batch's Attributes & CodecMask). The result is at
// most limit bytes: input that would decompress past limit fails with an
// error wrapping ErrCorrupt, after allocating little more than limit. Bad
// input (empty input included) and an unknown codec also fail with
// ErrCorrupt.
//
// For CodecNone the result is src itself, if it fits the limit. Otherwise the
// result is newly allocated and never aliases src.
func Decompress(codec int16, src []byte, limit int) ([]byte, error) {
	return decompressInto(nil, codec, src, limit)
}

// decompressInto is Decompress writing into dst's capacity when it is large
// enough (dst's contents are overwritten); the result may be a new, larger
// buffer otherwise. For CodecNone it returns src, as Decompress does.
func decompressInto(dst []byte, codec int16, src []byte, limit int) ([]byte, error) {
	limit = min(max(limit, 0), maxLimit)
	if codec == CodecNone {
		if len(src) > limit {
			return nil, errOverLimit("none", limit)
		}
		return src, nil
	}
	if len(src) == 0 && codec >= CodecGzip && codec <= CodecZstd {
		return nil, fmt.Errorf("%w: no compressed bytes for codec %d", ErrCorrupt, codec)
	}
	switch codec {
	case CodecGzip:
		return gunzip(dst, src, limit)
	case CodecSnappy:
		return unsnappy(dst, src, limit)
	case CodecLz4:
		return unlz4(dst, src, limit)
	case CodecZstd:
		return unzstd(dst, src, limit)
	}
	return nil, fmt.Errorf("%w: unknown compression codec %d", ErrCorrupt, codec)
}

// Compress returns src compressed with codec (one of the Codec constants) the
// way Kafka clients write a batch's records section: a gzip stream, a raw
// snappy block (as librdkafka and franz-go write it), an LZ4 frame, or a zstd
// frame. For CodecNone it returns src itself. An unknown codec fails with an
// error wrapping ErrCorrupt.
func Compress(codec int16, src []byte) ([]byte, error) {
	switch codec {
	case CodecNone:
		return src, nil
	case CodecGzip:
		return gzipCompress(src)
	case CodecSnappy:
		return snappyCompress(src), nil
	case CodecLz4:
		return lz4Compress(src)
	case CodecZstd:
		return zstdCompress(src), nil
	}
	return nil, fmt.Errorf("%w: unknown compression codec %d", ErrCorrupt, codec)
}

// errOverLimit is the error for output that would pass the limit.
func errOverLimit(codec string, limit int) error {
	return fmt.Errorf("%w: %w: %s: decompresses past the limit of %d bytes", ErrCorrupt, ErrOverLimit, codec, limit)
}

// outBuf returns dst emptied if it can hold n bytes, else a new buffer of
// capacity n.
func outBuf(dst []byte, n int) []byte {
	if cap(dst) >= n {
		return dst[:0]
	}
	return make([]byte, 0, n)
}

// readLimited reads r to its end into dst's capacity, or a buffer that
// starts at hint bytes, doubling but never past limit+1: reaching limit+1
// bytes is an error.
func readLimited(dst []byte, r io.Reader, codec string, hint, limit int) ([]byte, error) {
	// A reused buffer is taken whatever its size (it grows to what its
	// batches need, and stays); the hint sizes a fresh one.
	buf := dst[:0]
	if cap(buf) > limit+1 {
		buf = buf[: 0 : limit+1]
	} else if cap(buf) < 4<<10 {
		buf = make([]byte, 0, min(max(hint, 512), limit+1))
	}
	for {
		if len(buf) == cap(buf) {
			if len(buf) > limit {
				return nil, errOverLimit(codec, limit)
			}
			grown := make([]byte, len(buf), min(2*cap(buf), limit+1))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF && len(buf) <= limit {
			return buf, nil
		}
		if err == io.EOF {
			return nil, errOverLimit(codec, limit)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, codec, err)
		}
	}
}

// gzipReader is a pooled gzip decoder with its source.
type gzipReader struct {
	src bytes.Reader
	zr  gzip.Reader
}

var (
	gzipReaders = sync.Pool{New: func() any { return new(gzipReader) }}
	gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}
)

func gunzip(dst, src []byte, limit int) ([]byte, error) {
	g := gzipReaders.Get().(*gzipReader)
	defer func() {
		g.src.Reset(nil) // the pool must not keep src alive
		gzipReaders.Put(g)
	}()
	g.src.Reset(src)
	if err := g.zr.Reset(&g.src); err != nil {
		return nil, fmt.Errorf("%w: gzip: %w", ErrCorrupt, err)
	}
	return readLimited(dst, &g.zr, "gzip", 4*len(src), limit)
}

func gzipCompress(src []byte) ([]byte, error) {
	zw := gzipWriters.Get().(*gzip.Writer)
	defer func() {
		zw.Reset(nil)
		gzipWriters.Put(zw)
	}()
	var buf bytes.Buffer
	buf.Grow(len(src)/2 + 64)
	zw.Reset(&buf)
	if _, err := zw.Write(src); err != nil {
		return nil, fmt.Errorf("batch: gzip: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("batch: gzip: %w", err)
	}
	return buf.Bytes(), nil
}

// lz4Reader is a pooled LZ4 frame decoder with its source.
type lz4Reader struct {
	src bytes.Reader
	zr  *lz4.Reader
}

var (
	lz4Readers = sync.Pool{New: func() any { return &lz4Reader{zr: lz4.NewReader(nil)} }}
	lz4Writers = sync.Pool{New: func() any { return newLz4Writer() }}
)

// newLz4Writer returns an LZ4 frame writer with 64 KiB independent blocks,
// as the Java client writes them.
func newLz4Writer() *lz4.Writer {
	zw := lz4.NewWriter(nil)
	if err := zw.Apply(lz4.BlockSizeOption(lz4.Block64Kb)); err != nil {
		panic(fmt.Sprintf("batch: lz4 options: %v", err)) // fixed options; a failure is a library change
	}
	return zw
}

func unlz4(dst, src []byte, limit int) ([]byte, error) {
	l := lz4Readers.Get().(*lz4Reader)
	defer func() {
		l.zr.Reset(nil) // the pool must not keep src alive
		l.src.Reset(nil)
		lz4Readers.Put(l)
	}()
	l.src.Reset(src)
	l.zr.Reset(&l.src)
	return readLimited(dst, l.zr, "lz4", 4*len(src), limit)
}

func lz4Compress(src []byte) ([]byte, error) {
	zw := lz4Writers.Get().(*lz4.Writer)
	defer func() {
		zw.Reset(nil)
		lz4Writers.Put(zw)
	}()
	var buf bytes.Buffer
	buf.Grow(len(src)/2 + 64)
	zw.Reset(&buf)
	if _, err := zw.Write(src); err != nil {
		return nil, fmt.Errorf("batch: lz4: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("batch: lz4: %w", err)
	}
	return buf.Bytes(), nil
}

var (
	zstdEncoders = sync.Pool{New: func() any { return newZstdEncoder() }}
	zstdDecoders = sync.Pool{New: func() any { return newZstdDecoder() }}
)

// newZstdEncoder returns a synchronous encoder for EncodeAll; it starts no
// goroutines, so the pool may drop it without closing it.
func newZstdEncoder() *zstd.Encoder {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithZeroFrames(true))
	if err != nil {
		panic(fmt.Sprintf("batch: zstd encoder options: %v", err)) // fixed options
	}
	return enc
}

// newZstdDecoder returns a synchronous decoder for DecodeAll; it starts no
// goroutines, so the pool may drop it without closing it. DecodeAll stops at
// the capacity of the buffer it is given, which is how Decompress applies
// its limit: zstd's own memory limit also caps the window a frame may
// declare, and the Java client declares a 2 MiB window even for a tiny
// batch, while DecodeAll decodes into the output and needs no window buffer.
func newZstdDecoder() *zstd.Decoder {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecodeAllCapLimit(true),
		zstd.WithDecoderMaxMemory(maxLimit))
	if err != nil {
		panic(fmt.Sprintf("batch: zstd decoder options: %v", err)) // fixed options
	}
	return dec
}

func zstdCompress(src []byte) []byte {
	enc := zstdEncoders.Get().(*zstd.Encoder)
	defer zstdEncoders.Put(enc)
	return enc.EncodeAll(src, make([]byte, 0, len(src)/2+64))
}

// unzstd decodes into a buffer sized by the first frame's content size if it
// declares one, else by a guess. DecodeAll reports a buffer too small as an
// error that is not always ErrDecoderSizeExceeded, so on any error that may
// come from the size it retries with a buffer four times larger, up to limit.
func unzstd(dst, src []byte, limit int) ([]byte, error) {
	dec := zstdDecoders.Get().(*zstd.Decoder)
	defer zstdDecoders.Put(dec)
	size := min(limit, max(8*len(src), 1<<10))
	var h zstd.Header
	if err := h.Decode(src); err == nil && h.HasFCS {
		if h.FrameContentSize > uint64(limit) {
			return nil, errOverLimit("zstd", limit)
		}
		size = int(h.FrameContentSize)
	}
	// All of dst's capacity is used (up to limit): DecodeAll stops at the
	// capacity, so a larger one only spares a retry.
	size = max(size, min(cap(dst), limit))
	for {
		buf := outBuf(dst, size)[:0:size]
		out, err := dec.DecodeAll(src, buf)
		switch {
		case err == nil:
			return out, nil
		case size < limit && !zstdCorrupt(err):
			size = min(limit, 4*max(size, 1<<10))
		case errors.Is(err, zstd.ErrDecoderSizeExceeded):
			return nil, errOverLimit("zstd", limit)
		default:
			return nil, fmt.Errorf("%w: zstd (output limit %d): %w", ErrCorrupt, limit, err)
		}
	}
}

// zstdCorrupt reports errors that a larger output buffer cannot cure.
func zstdCorrupt(err error) bool {
	for _, e := range []error{zstd.ErrMagicMismatch, zstd.ErrCRCMismatch, zstd.ErrReservedBlockType,
		zstd.ErrUnknownDictionary, zstd.ErrWindowSizeTooSmall} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
