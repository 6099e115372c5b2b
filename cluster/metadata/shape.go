package metadata

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The msgpack decoder trusts the lengths it reads: an array header claiming
// four billion elements makes it allocate them before it finds the input
// short, and deep nesting recurses without bound. checkPayload walks the
// bytes first, so that DecodeRecord hands the decoder only input whose every
// length fits in the bytes that follow it and whose nesting is shallow.

// maxNesting bounds how deep arrays and maps may nest inside a payload.
// Records need 2 (the payload array and a replica list); controller
// requests and results 5 (CreateTopicsRequest: topics, a topic, its
// assignments, one assignment, its replicas).
const maxNesting = 8

var errShortInput = errors.New("input ends inside a value")

// checkPayload verifies that b is exactly one msgpack array of at least one
// element, well formed, with plausible lengths and shallow nesting, and
// without extension or float values (records use neither).
func checkPayload(b []byte) error {
	_, count, ok := arrayHeader(b)
	if !ok || count == 0 {
		return errors.New("payload is not a non-empty array")
	}
	size, err := skipValue(b, 0)
	if err != nil {
		return err
	}
	if size != len(b) {
		return fmt.Errorf("%d trailing bytes", len(b)-size)
	}
	return nil
}

// arrayHeader decodes an array header: its size in bytes and the element
// count.
func arrayHeader(b []byte) (headerSize, count int, ok bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	switch c := b[0]; {
	case c >= 0x90 && c <= 0x9f:
		return 1, int(c & 0x0f), true
	case c == 0xdc && len(b) >= 3:
		return 3, int(binary.BigEndian.Uint16(b[1:])), true
	case c == 0xdd && len(b) >= 5:
		return 5, int(binary.BigEndian.Uint32(b[1:])), true
	}
	return 0, 0, false
}

// skipValue returns the encoded size of the msgpack value at the start of b.
func skipValue(b []byte, depth int) (int, error) {
	if len(b) == 0 {
		return 0, errShortInput
	}
	c := b[0]
	switch {
	case c <= 0x7f || c >= 0xe0: // positive and negative fixint
		return 1, nil
	case c <= 0x8f: // fixmap
		return skipElems(b, 1, 2*int(c&0x0f), depth)
	case c <= 0x9f: // fixarray
		return skipElems(b, 1, int(c&0x0f), depth)
	case c <= 0xbf: // fixstr
		return skipBytes(b, 1, int(c&0x1f))
	}
	switch c {
	case 0xc0, 0xc2, 0xc3: // nil, false, true
		return 1, nil
	case 0xcc, 0xd0: // uint8, int8
		return fixed(b, 2)
	case 0xcd, 0xd1: // uint16, int16
		return fixed(b, 3)
	case 0xce, 0xd2: // uint32, int32
		return fixed(b, 5)
	case 0xcf, 0xd3: // uint64, int64
		return fixed(b, 9)
	case 0xc4, 0xd9: // bin8, str8
		return lenPrefixed(b, 1, false, depth)
	case 0xc5, 0xda: // bin16, str16
		return lenPrefixed(b, 2, false, depth)
	case 0xc6, 0xdb: // bin32, str32
		return lenPrefixed(b, 4, false, depth)
	case 0xdc: // array16
		return lenPrefixed(b, 2, true, depth)
	case 0xdd: // array32
		return lenPrefixed(b, 4, true, depth)
	case 0xde: // map16
		return lenPrefixed(b, 2, true, depth)
	case 0xdf: // map32
		return lenPrefixed(b, 4, true, depth)
	}
	return 0, fmt.Errorf("unexpected msgpack code 0x%02x", c)
}

func fixed(b []byte, size int) (int, error) {
	if len(b) < size {
		return 0, errShortInput
	}
	return size, nil
}

// lenPrefixed handles the codes followed by a big-endian length of
// lenSize bytes: strings and binaries (bytes), arrays and maps (elements).
func lenPrefixed(b []byte, lenSize int, container bool, depth int) (int, error) {
	if len(b) < 1+lenSize {
		return 0, errShortInput
	}
	var n uint64
	for _, x := range b[1 : 1+lenSize] {
		n = n<<8 | uint64(x)
	}
	if n > uint64(len(b)) {
		return 0, errShortInput
	}
	if !container {
		return skipBytes(b, 1+lenSize, int(n))
	}
	if b[0] == 0xde || b[0] == 0xdf {
		n *= 2 // a map holds a key and a value per entry
	}
	return skipElems(b, 1+lenSize, int(n), depth)
}

func skipBytes(b []byte, header, n int) (int, error) {
	if n > len(b)-header {
		return 0, errShortInput
	}
	return header + n, nil
}

// skipElems skips n values that follow a container header; every value is
// at least one byte, so n is checked against the bytes left before looping.
func skipElems(b []byte, header, n, depth int) (int, error) {
	if depth >= maxNesting {
		return 0, fmt.Errorf("nesting deeper than %d", maxNesting)
	}
	if n > len(b)-header {
		return 0, errShortInput
	}
	off := header
	for range n {
		size, err := skipValue(b[off:], depth+1)
		if err != nil {
			return 0, err
		}
		off += size
	}
	return off, nil
}
