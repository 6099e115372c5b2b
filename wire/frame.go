package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Bad input, each closing the connection it arrived on with one log line.
var (
	errFrameSize          = errors.New("wire: frame size out of range")
	errFrameTruncated     = errors.New("wire: truncated frame")
	errHeader             = errors.New("wire: malformed request header")
	errUnknownKey         = errors.New("wire: unknown API key")
	errUnsupportedVersion = errors.New("wire: unsupported API version")
	errBody               = errors.New("wire: malformed request body")
	errHandler            = errors.New("wire: handler broke its contract")
	errResponseSize       = errors.New("wire: response larger than a frame can carry")
)

// readFrame reads one size-prefixed frame and returns its payload (tests
// and fuzzing use it; connections read the size and the payload apart, to
// wait for memory in between). Errors are readFrameSize's and
// readPayload's.
func readFrame(r io.Reader, maxSize int32) ([]byte, error) {
	size, err := readFrameSize(r, maxSize)
	if err != nil {
		return nil, err
	}
	return readPayload(r, size)
}

// readFrameSize reads a frame's size prefix. A clean end of stream before
// the first byte returns io.EOF, and any other error before the first
// byte is returned as is (a timeout: an idle connection). Errors after it
// wrap errFrameTruncated; a size that is negative or above maxSize wraps
// errFrameSize.
func readFrameSize(r io.Reader, maxSize int32) (int32, error) {
	var prefix [4]byte
	if n, err := io.ReadFull(r, prefix[:]); err != nil {
		if n == 0 {
			return 0, err
		}
		return 0, fmt.Errorf("%w: %d of 4 size bytes: %w", errFrameTruncated, n, err)
	}
	size := int32(binary.BigEndian.Uint32(prefix[:]))
	if size < 0 || size > maxSize {
		return 0, fmt.Errorf("%w: size %d, socket.request.max.bytes %d", errFrameSize, size, maxSize)
	}
	return size, nil
}

// readPayload reads a frame's size bytes into a buffer of exactly that
// length (pooled for mid-sized frames; see framepool.go). A large frame's
// first frameProbe bytes are read into a pooled buffer first and its
// buffer is allocated only once they are all here, so that a frame whose
// sender stalls or hangs up early never allocates its declared size.
// Errors wrap errFrameTruncated. The request memory pool, not this
// function, bounds what declared sizes may hold.
func readPayload(r io.Reader, size int32) ([]byte, error) {
	truncated := func(n int, err error) error {
		return fmt.Errorf("%w: %d of %d bytes: %w", errFrameTruncated, n, size, err)
	}
	if size <= framePoolMax {
		buf := getFrame(int(size))
		if n, err := io.ReadFull(r, buf); err != nil {
			putFrame(buf)
			return nil, truncated(n, err)
		}
		return buf, nil
	}
	probe := getFrame(frameProbe)
	n, err := io.ReadFull(r, probe)
	if err != nil {
		putFrame(probe)
		return nil, truncated(n, err)
	}
	buf := make([]byte, size)
	copy(buf, probe)
	putFrame(probe)
	if m, err := io.ReadFull(r, buf[n:]); err != nil {
		return nil, truncated(n+m, err)
	}
	return buf, nil
}

// frameProbe is how much of a large frame must arrive before its buffer
// is allocated: the largest pooled buffer, more than the socket buffers
// hold, so that a sender that hung up mid-frame is found out before.
const frameProbe = framePoolMax

// header is a request header's fixed part (v1; v2 adds tagged fields after
// the client id, skipped by skipHeaderTags).
type header struct {
	key     int16
	version int16
	corr    int32
	client  string
}

// headerMinSize is key, version, correlation id and client id length.
const headerMinSize = 2 + 2 + 4 + 2

// parseHeader reads the fixed part of a request header and returns the
// bytes after the client id. The client id keeps its int16 length even in
// flexible header v2; null (-1) reads as "".
func parseHeader(frame []byte) (header, []byte, error) {
	if len(frame) < headerMinSize {
		return header{}, nil, fmt.Errorf("%w: %d bytes, need at least %d", errHeader, len(frame), headerMinSize)
	}
	h := header{
		key:     int16(binary.BigEndian.Uint16(frame[0:])),
		version: int16(binary.BigEndian.Uint16(frame[2:])),
		corr:    int32(binary.BigEndian.Uint32(frame[4:])),
	}
	n := int(int16(binary.BigEndian.Uint16(frame[8:])))
	rest := frame[headerMinSize:]
	switch {
	case n == -1:
	case n < 0 || n > len(rest):
		return h, nil, fmt.Errorf("%w: client id length %d with %d bytes left", errHeader, n, len(rest))
	default:
		h.client, rest = string(rest[:n]), rest[n:]
	}
	return h, rest, nil
}

// skipHeaderTags skips the tagged fields that end a flexible (v2) request
// header and returns the body after them.
func skipHeaderTags(b []byte) ([]byte, error) {
	count, b, err := uvarint(b)
	if err != nil {
		return nil, fmt.Errorf("%w: tag count: %w", errHeader, err)
	}
	for i := uint64(0); i < count; i++ {
		var size uint64
		if _, b, err = uvarint(b); err != nil {
			return nil, fmt.Errorf("%w: tag %d of %d: %w", errHeader, i, count, err)
		}
		if size, b, err = uvarint(b); err != nil {
			return nil, fmt.Errorf("%w: tag %d of %d size: %w", errHeader, i, count, err)
		}
		if size > uint64(len(b)) {
			return nil, fmt.Errorf("%w: tag %d of %d: %d bytes with %d left", errHeader, i, count, size, len(b))
		}
		b = b[size:]
	}
	return b, nil
}

// uvarint reads one unsigned varint of at most 32 bits, Kafka's kind.
func uvarint(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	switch {
	case n == 0:
		return 0, nil, io.ErrUnexpectedEOF
	case n < 0 || v > math.MaxUint32:
		return 0, nil, errors.New("varint overflows 32 bits")
	}
	return v, b[n:], nil
}

// appendResponse appends one response frame: size, correlation id, the
// empty tag section of response header v1 when the body is flexible (never
// for ApiVersions, whose response header is always v0), and the body.
func appendResponse(dst []byte, corr int32, body kmsg.Response) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(corr))
	if body.IsFlexible() && body.Key() != apiVersionsKey {
		dst = append(dst, 0)
	}
	dst = body.AppendTo(dst)
	size := len(dst) - start - 4
	if size > math.MaxInt32 {
		return dst[:start], fmt.Errorf("%w: %d bytes", errResponseSize, size)
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(size))
	return dst, nil
}
