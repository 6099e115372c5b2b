package partition

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// ErrCorruptSnapshot is a producer snapshot that fails its checks; it is
// wrapped with detail. The caller then rebuilds the state from the log.
var ErrCorruptSnapshot = errors.New("partition: corrupt producer snapshot")

// Snapshot layout (big-endian), written as "<EndOffset>.snapshot" like
// Kafka's producer snapshots, though in weir's own format: Kafka's keeps
// only each producer's last batch, this one all retained batches, so the
// first retries after a restart are still recognised as duplicates.
//
//	version int16 (1) | crc32c uint32 of the rest | endOffset int64 | count int32
//	count x { pid int64 | epoch int16 | coordinatorEpoch int32 |
//	          txnFirstOffset int64 | lastTimestamp int64 | batches int8 |
//	          batches x { firstSeq int32 | lastSeq int32 | firstOffset int64 |
//	                      lastOffset int64 | timestamp int64 } }
const (
	snapshotVersion    = 1
	snapshotHeaderSize = 2 + 4
	snapshotEntrySize  = 8 + 2 + 4 + 8 + 8 + 1
	snapshotBatchSize  = 4 + 4 + 8 + 8 + 8
)

var snapshotCRC = crc32.MakeTable(crc32.Castagnoli)

// Snapshot encodes the state, producers in ascending id order, so equal
// states encode to equal bytes.
func (s *ProducerState) Snapshot() []byte {
	be := binary.BigEndian
	b := make([]byte, snapshotHeaderSize, snapshotHeaderSize+12+len(s.producers)*(snapshotEntrySize+BatchesToRetain*snapshotBatchSize))
	be.PutUint16(b, snapshotVersion)
	b = be.AppendUint64(b, uint64(s.endOffset))
	b = be.AppendUint32(b, uint32(len(s.producers)))
	for _, id := range s.ProducerIDs() {
		e := s.producers[id]
		b = be.AppendUint64(b, uint64(e.ProducerID))
		b = be.AppendUint16(b, uint16(e.Epoch))
		b = be.AppendUint32(b, uint32(e.CoordinatorEpoch))
		b = be.AppendUint64(b, uint64(e.CurrentTxnFirstOffset))
		b = be.AppendUint64(b, uint64(e.LastTimestamp))
		b = append(b, byte(len(e.Batches)))
		for _, m := range e.Batches {
			b = be.AppendUint32(b, uint32(m.FirstSeq))
			b = be.AppendUint32(b, uint32(m.LastSeq))
			b = be.AppendUint64(b, uint64(m.FirstOffset))
			b = be.AppendUint64(b, uint64(m.LastOffset))
			b = be.AppendUint64(b, uint64(m.Timestamp))
		}
	}
	be.PutUint32(b[2:], crc32.Checksum(b[snapshotHeaderSize:], snapshotCRC))
	return b
}

// LoadSnapshot replaces the state with the one a Snapshot encoded. On
// error (wrapping ErrCorruptSnapshot) the state is left unchanged.
func (s *ProducerState) LoadSnapshot(b []byte) error {
	loaded, err := decodeSnapshot(b)
	if err != nil {
		return err
	}
	*s = *loaded
	return nil
}

func decodeSnapshot(b []byte) (*ProducerState, error) {
	be := binary.BigEndian
	if len(b) < snapshotHeaderSize+12 {
		return nil, fmt.Errorf("%w: %d bytes", ErrCorruptSnapshot, len(b))
	}
	if v := be.Uint16(b); v != snapshotVersion {
		return nil, fmt.Errorf("%w: version %d", ErrCorruptSnapshot, v)
	}
	if want, got := crc32.Checksum(b[snapshotHeaderSize:], snapshotCRC), be.Uint32(b[2:]); want != got {
		return nil, fmt.Errorf("%w: crc %08x, computed %08x", ErrCorruptSnapshot, got, want)
	}
	r := snapReader{b: b[snapshotHeaderSize:]}
	s := NewProducerState()
	s.endOffset = int64(r.u64())
	n := int(r.u32())
	if n < 0 || n > len(r.b)/snapshotEntrySize {
		return nil, fmt.Errorf("%w: %d entries in %d bytes", ErrCorruptSnapshot, n, len(r.b))
	}
	for range n {
		e := r.entry()
		if r.err != nil {
			return nil, r.err
		}
		s.producers[e.ProducerID] = e
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d trailing bytes", ErrCorruptSnapshot, len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	return s, nil
}

// snapReader reads big-endian fields, recording the first overrun.
type snapReader struct {
	b   []byte
	err error
}

func (r *snapReader) take(n int) []byte {
	if r.err != nil || len(r.b) < n {
		if r.err == nil {
			r.err = fmt.Errorf("%w: truncated", ErrCorruptSnapshot)
		}
		return make([]byte, n)
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *snapReader) u64() uint64 { return binary.BigEndian.Uint64(r.take(8)) }
func (r *snapReader) u32() uint32 { return binary.BigEndian.Uint32(r.take(4)) }
func (r *snapReader) u16() uint16 { return binary.BigEndian.Uint16(r.take(2)) }

func (r *snapReader) entry() *ProducerEntry {
	e := &ProducerEntry{ProducerID: int64(r.u64()), Epoch: int16(r.u16()), CoordinatorEpoch: int32(r.u32())}
	e.CurrentTxnFirstOffset = int64(r.u64())
	e.LastTimestamp = int64(r.u64())
	nb := int(r.take(1)[0])
	if nb > BatchesToRetain && r.err == nil {
		r.err = fmt.Errorf("%w: producer %d has %d batches", ErrCorruptSnapshot, e.ProducerID, nb)
	}
	for i := 0; i < nb && r.err == nil; i++ {
		e.Batches = append(e.Batches, BatchMetadata{
			FirstSeq: int32(r.u32()), LastSeq: int32(r.u32()),
			FirstOffset: int64(r.u64()), LastOffset: int64(r.u64()), Timestamp: int64(r.u64()),
		})
	}
	return e
}
