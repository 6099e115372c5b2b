package quorum

import (
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/log/batch"
	pb "go.etcd.io/raft/v3/raftpb"
)

// Record header keys that describe a raft entry inside its batch. They are
// set on the first record of every entry batch.
const (
	// headerIndex holds the entry's raft index, 8 bytes big-endian.
	headerIndex = "raft.index"
	// headerType holds the entry type, one byte: the raftpb.EntryType.
	headerType = "raft.type"
	// headerSnapshot marks the first record of a checkpoint file; its value
	// is the marshalled raftpb.SnapshotMetadata.
	headerSnapshot = "raft.snapshot"
)

// snapshotBatchRecords bounds the records of one batch of a checkpoint.
const snapshotBatchRecords = 1000

// EncodeEntry returns the raft entry data that carries records: each
// record's metadata.EncodeRecord bytes, prefixed by its length as a uvarint.
// The storage turns it into one record batch whose records' values are
// those bytes.
func EncodeEntry(records []metadata.Record) ([]byte, error) {
	var out []byte
	for _, r := range records {
		b, err := metadata.EncodeRecord(r)
		if err != nil {
			return nil, fmt.Errorf("quorum: encode entry: %w", err)
		}
		out = binary.AppendUvarint(out, uint64(len(b)))
		out = append(out, b...)
	}
	return out, nil
}

// splitEntry cuts entry data (EncodeEntry's format) into record values.
func splitEntry(data []byte) ([][]byte, error) {
	var vals [][]byte
	for len(data) > 0 {
		n, k := binary.Uvarint(data)
		if k <= 0 || n == 0 || n > uint64(len(data)-k) {
			return nil, fmt.Errorf("%w: bad record length in entry data", ErrCorrupt)
		}
		vals = append(vals, data[k:k+int(n)])
		data = data[k+int(n):]
	}
	return vals, nil
}

// DecodeEntry decodes entry data written by EncodeEntry.
func DecodeEntry(data []byte) ([]metadata.Record, error) {
	vals, err := splitEntry(data)
	if err != nil {
		return nil, err
	}
	recs := make([]metadata.Record, len(vals))
	for i, v := range vals {
		if recs[i], err = metadata.DecodeRecord(v); err != nil {
			return nil, fmt.Errorf("quorum: decode entry record %d: %w", i, err)
		}
	}
	return recs, nil
}

// entryBatch encodes e as the record batch stored at offset: the batch's
// partition leader epoch is the entry's term; its first record carries the
// raft index and entry type as headers. A normal entry has one record per
// metadata record (value: its EncodeRecord bytes); an empty normal entry and
// a conf change have one record, with no value or the marshalled change.
func entryBatch(e *pb.Entry, offset int64) ([]byte, error) {
	if e.GetTerm() > 1<<31-1 {
		return nil, fmt.Errorf("quorum: entry %d: term %d does not fit a leader epoch", e.GetIndex(), e.GetTerm())
	}
	var vals [][]byte
	if e.GetType() == pb.EntryNormal {
		var err error
		if vals, err = splitEntry(e.GetData()); err != nil {
			return nil, fmt.Errorf("quorum: entry %d: %w", e.GetIndex(), err)
		}
	} else {
		vals = [][]byte{e.GetData()}
	}
	if len(vals) == 0 {
		vals = [][]byte{nil}
	}
	recs := make([]kmsg.Record, len(vals))
	for i, v := range vals {
		recs[i] = kmsg.Record{OffsetDelta: int32(i), Value: v}
	}
	recs[0].Headers = []kmsg.Header{
		{Key: headerIndex, Value: binary.BigEndian.AppendUint64(nil, e.GetIndex())},
		{Key: headerType, Value: []byte{byte(e.GetType())}},
	}
	b, err := batch.Build(batchOptions(offset, e.GetTerm()), recs)
	if err != nil {
		return nil, fmt.Errorf("quorum: entry %d: %w", e.GetIndex(), err)
	}
	return b, nil
}

// batchOptions are the header fields of every batch this package writes:
// not idempotent, timestamps 0 (time is not an input of the log).
func batchOptions(offset int64, term uint64) batch.Options {
	return batch.Options{
		ProducerID:           batch.NoProducerID,
		ProducerEpoch:        batch.NoProducerEpoch,
		BaseSequence:         batch.NoSequence,
		PartitionLeaderEpoch: int32(term),
		BaseOffset:           offset,
	}
}

// batchEntry decodes a batch written by entryBatch.
func batchEntry(b []byte) (*pb.Entry, error) {
	recs, err := batch.Records(b, 64<<20)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	index, typ, err := entryHeaders(recs)
	if err != nil {
		return nil, err
	}
	e := &pb.Entry{Term: new(uint64(batch.PartitionLeaderEpoch(b))), Index: new(index), Type: new(typ)}
	if typ != pb.EntryNormal {
		e.Data = append([]byte(nil), recs[0].Value...)
		return e, nil
	}
	for _, r := range recs {
		if r.Value == nil {
			continue
		}
		e.Data = binary.AppendUvarint(e.Data, uint64(len(r.Value)))
		e.Data = append(e.Data, r.Value...)
	}
	return e, nil
}

// entryHeaders reads the raft index and entry type from an entry batch's
// first record.
func entryHeaders(recs []kmsg.Record) (uint64, pb.EntryType, error) {
	if len(recs) == 0 {
		return 0, 0, fmt.Errorf("%w: entry batch without records", ErrCorrupt)
	}
	var index uint64
	typ := pb.EntryType(-1)
	for _, h := range recs[0].Headers {
		switch {
		case h.Key == headerIndex && len(h.Value) == 8:
			index = binary.BigEndian.Uint64(h.Value)
		case h.Key == headerType && len(h.Value) == 1:
			typ = pb.EntryType(h.Value[0])
		}
	}
	if index == 0 || pb.EntryType_name[int32(typ)] == "" {
		return 0, 0, fmt.Errorf("%w: entry batch without a valid %s/%s header", ErrCorrupt, headerIndex, headerType)
	}
	return index, typ, nil
}

// EncodeSnapshotData returns the raft snapshot data for records (as
// metadata.Image.Records returns them): record batches whose records'
// values are the records' EncodeRecord bytes, at offsets 0, 1, ...
func EncodeSnapshotData(records []metadata.Record, term uint64) ([]byte, error) {
	var out []byte
	for start := 0; start < len(records); start += snapshotBatchRecords {
		chunk := records[start:min(start+snapshotBatchRecords, len(records))]
		recs := make([]kmsg.Record, len(chunk))
		for i, r := range chunk {
			v, err := metadata.EncodeRecord(r)
			if err != nil {
				return nil, fmt.Errorf("quorum: encode snapshot: %w", err)
			}
			recs[i] = kmsg.Record{OffsetDelta: int32(i), Value: v}
		}
		b, err := batch.Build(batchOptions(int64(start), term), recs)
		if err != nil {
			return nil, fmt.Errorf("quorum: encode snapshot: %w", err)
		}
		out = append(out, b...)
	}
	return out, nil
}

// DecodeSnapshotData decodes EncodeSnapshotData's bytes.
func DecodeSnapshotData(data []byte) ([]metadata.Record, error) {
	if len(data) == 0 {
		return nil, nil
	}
	batches, err := batch.Split(data)
	if err != nil {
		return nil, fmt.Errorf("%w: snapshot data: %w", ErrCorrupt, err)
	}
	var out []metadata.Record
	for _, b := range batches {
		recs, err := batch.Records(b, 64<<20)
		if err != nil {
			return nil, fmt.Errorf("%w: snapshot data: %w", ErrCorrupt, err)
		}
		for _, r := range recs {
			rec, err := metadata.DecodeRecord(r.Value)
			if err != nil {
				return nil, fmt.Errorf("quorum: snapshot data: %w", err)
			}
			out = append(out, rec)
		}
	}
	return out, nil
}
