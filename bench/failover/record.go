package failover

import (
	"encoding/binary"
	"errors"
)

// recordMagic opens every value the producer writes.
const recordMagic = "wbf1"

// valueHeader is the magic, the round, the record's number and its send
// time (Unix nanoseconds); the rest of a value is padding.
const valueHeader = 4 + 4 + 4 + 8

// errForeignValue is a value this package did not write.
var errForeignValue = errors.New("failover: not a weir bench failover record")

// encodeValue writes the value of record seq of round into v, which must
// hold at least valueHeader bytes.
func encodeValue(v []byte, round, seq uint32, sentNs int64) {
	copy(v, recordMagic)
	binary.BigEndian.PutUint32(v[4:], round)
	binary.BigEndian.PutUint32(v[8:], seq)
	binary.BigEndian.PutUint64(v[12:], uint64(sentNs))
}

// decodeValue reads what encodeValue wrote.
func decodeValue(v []byte) (round, seq uint32, sentNs int64, err error) {
	if len(v) < valueHeader || string(v[:4]) != recordMagic {
		return 0, 0, 0, errForeignValue
	}
	return binary.BigEndian.Uint32(v[4:]), binary.BigEndian.Uint32(v[8:]), int64(binary.BigEndian.Uint64(v[12:])), nil
}
