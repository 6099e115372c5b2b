package batch

import (
	"encoding/binary"
	"fmt"
	"math"
)

// varint reads a zigzag varint of at most 5 bytes holding 32 bits, as Kafka
// and kmsg do. n <= 0 means b ends inside it or it is too long.
func varint(b []byte) (v int32, n int) {
	if len(b) > 0 && b[0] < 0x80 { // one byte: most lengths and deltas
		x := uint32(b[0])
		return int32(x>>1) ^ -int32(x&1), 1
	}
	u, n := binary.Uvarint(b)
	if n <= 0 || n > 5 || u > math.MaxUint32 {
		return 0, -1
	}
	x := uint32(u)
	return int32(x>>1) ^ -int32(x&1), n
}

// varlong reads a zigzag varint of at most 10 bytes. n <= 0 means b ends
// inside it or it overflows 64 bits.
func varlong(b []byte) (v int64, n int) {
	if len(b) > 0 && b[0] < 0x80 {
		x := uint64(b[0])
		return int64(x>>1) ^ -int64(x&1), 1
	}
	return binary.Varint(b)
}

// bodyScan walks the fields of one record body without decoding them. On
// the first problem it records the field and the problem and jumps to the
// end, so later steps do nothing; messages are built only on failure.
type bodyScan struct {
	b              []byte
	off            int
	field, problem string
}

func (s *bodyScan) fail(field, problem string) {
	if s.field == "" {
		s.field, s.problem = field, problem
	}
	s.off = len(s.b)
}

func (s *bodyScan) skip(n int, field string) {
	if n > len(s.b)-s.off {
		s.fail(field, "overruns the record")
		return
	}
	s.off += n
}

func (s *bodyScan) varint(field string) int32 {
	v, n := varint(s.b[s.off:])
	if n <= 0 {
		s.failVarint(field)
		return 0
	}
	s.off += n
	return v
}

func (s *bodyScan) varlong(field string) {
	_, n := varlong(s.b[s.off:])
	if n <= 0 {
		s.failVarint(field)
		return
	}
	s.off += n
}

func (s *bodyScan) failVarint(field string) {
	if s.off == len(s.b) {
		s.fail(field, "past the end of the record")
		return
	}
	s.fail(field, "bad varint")
}

// bytes skips a varint length and that many bytes; a negative length is
// null, which only a nullable field may be.
func (s *bodyScan) bytes(field string, nullable bool) {
	n := s.varint(field)
	switch {
	case n < 0 && !nullable:
		s.fail(field, "null")
	case n > 0:
		s.skip(int(n), field)
	}
}

// bodyLen returns how many bytes of body the fields of one record take, read
// as Kafka reads them, or what is wrong with them. It rejects what kmsg would
// accept but Kafka would not: a negative header count and a null header key.
// It runs before kmsg decodes the record, so a header count it accepts is
// bounded by the bytes left (each header takes at least two).
func bodyLen(body []byte) (int, string) {
	used, _, _, what := scanBody(body)
	return used, what
}

// scanBody is bodyLen that also returns the record's offset delta and key
// length (-1: null key), valid when the problem is "".
func scanBody(body []byte) (used int, offsetDelta, keyLen int32, what string) {
	s := bodyScan{b: body}
	s.skip(1, "attributes")
	s.varlong("timestamp delta")
	offsetDelta = s.varint("offset delta")
	keyLen = s.varint("key")
	if keyLen < 0 {
		keyLen = -1
	} else if keyLen > 0 {
		s.skip(int(keyLen), "key")
	}
	s.bytes("value", true)
	headers := s.varint("header count")
	if s.field == "" && (headers < 0 || int(headers) > (len(s.b)-s.off)/2) {
		return s.off, offsetDelta, keyLen, fmt.Sprintf("header count %d with %d bytes left", headers, len(s.b)-s.off)
	}
	for i := int32(0); i < headers && s.field == ""; i++ {
		s.bytes("header key", false)
		s.bytes("header value", true)
	}
	if s.field != "" {
		return s.off, offsetDelta, keyLen, s.field + ": " + s.problem
	}
	return s.off, offsetDelta, keyLen, ""
}
