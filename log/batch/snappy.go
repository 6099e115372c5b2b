package batch

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/snappy"
)

// Kafka's snappy comes in two shapes. librdkafka, franz-go and most non-Java
// clients write one raw snappy block. The Java client writes xerial's framing:
// the 8-byte magic, a version and a compatible-version int32, then chunks of
// [int32 big-endian length][raw snappy block]. Decoding accepts both.
var xerialMagic = []byte("\x82SNAPPY\x00")

// xerialHeaderSize is the magic plus the two version ints.
const xerialHeaderSize = 16

func snappyCompress(src []byte) []byte {
	return snappy.Encode(nil, src)
}

func unsnappy(dst, src []byte, limit int) ([]byte, error) {
	if len(src) >= xerialHeaderSize && bytes.HasPrefix(src, xerialMagic) {
		return unxerial(dst, src[xerialHeaderSize:], limit)
	}
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return nil, fmt.Errorf("%w: snappy: %w", ErrCorrupt, err)
	}
	if n > limit {
		return nil, errOverLimit("snappy", limit)
	}
	out, err := snappy.Decode(outBuf(dst, n)[:n], src)
	if err != nil {
		return nil, fmt.Errorf("%w: snappy: %w", ErrCorrupt, err)
	}
	return out, nil
}

// unxerial decodes the chunks after a xerial header. A first pass checks the
// chunk lengths and sums the decoded sizes against limit, so the output is
// allocated once at its exact size.
func unxerial(dst, chunks []byte, limit int) ([]byte, error) {
	total := 0
	for rest, pos := chunks, xerialHeaderSize; len(rest) > 0; {
		chunk, next, err := xerialChunk(rest, pos)
		if err != nil {
			return nil, err
		}
		n, err := snappy.DecodedLen(chunk)
		if err != nil {
			return nil, fmt.Errorf("%w: snappy: xerial chunk at byte %d: %w", ErrCorrupt, pos, err)
		}
		if n > limit-total {
			return nil, errOverLimit("snappy", limit)
		}
		total += n
		pos += len(rest) - len(next)
		rest = next
	}
	out := outBuf(dst, total)[:total]
	for rest, off := chunks, 0; len(rest) > 0; {
		chunk, next, _ := xerialChunk(rest, 0)
		n, _ := snappy.DecodedLen(chunk)
		if _, err := snappy.Decode(out[off:off+n], chunk); err != nil {
			return nil, fmt.Errorf("%w: snappy: xerial chunk: %w", ErrCorrupt, err)
		}
		off += n
		rest = next
	}
	return out, nil
}

// xerialChunk cuts the first [length][block] chunk off b; pos is b's position
// in the section, for errors.
func xerialChunk(b []byte, pos int) (chunk, rest []byte, err error) {
	if len(b) < 4 {
		return nil, nil, fmt.Errorf("%w: snappy: xerial chunk at byte %d: %d bytes, need 4 for its length", ErrCorrupt, pos, len(b))
	}
	n := int32(binary.BigEndian.Uint32(b))
	if n < 0 || int(n) > len(b)-4 {
		return nil, nil, fmt.Errorf("%w: snappy: xerial chunk at byte %d: length %d, %d bytes left", ErrCorrupt, pos, n, len(b)-4)
	}
	return b[4 : 4+n], b[4+n:], nil
}
