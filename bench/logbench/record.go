package logbench

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirmq/weir/log/batch"
)

// batchHeaderSize is the fixed header of a record batch.
const batchHeaderSize = batch.HeaderSize

// ErrBadRecord is wrapped by the errors of ParseKey and VerifyRecord: a key
// the benchmark did not write, or a value that does not match its key.
var ErrBadRecord = errors.New("logbench: record fails its check")

// Key identifies one record the benchmark writes. Its text form,
// "r<Run>.p<Partition>.w<Writer>.s<Seq>.i<Index>" in decimal, is the
// record's key, and the record's value is derived from it (AppendValue), so
// every record can be checked on its own.
type Key struct {
	// Run is Config.Run of the run that wrote the record.
	Run int64
	// Partition is the partition the record was appended to.
	Partition int32
	// Writer is the appender, in [0, Config.Writers).
	Writer int32
	// Seq counts the writer's appends (batches) in its run, from 0.
	Seq int64
	// Index is the record's position in its batch: its offset delta.
	Index int32
}

// keyTags are the letters before each field of a key, in order.
const keyTags = "rpwsi"

// AppendTo appends the key's text form to dst.
func (k Key) AppendTo(dst []byte) []byte {
	for i, v := range k.fields() {
		if i > 0 {
			dst = append(dst, '.')
		}
		dst = append(dst, keyTags[i])
		dst = strconv.AppendInt(dst, v, 10)
	}
	return dst
}

// String returns the key's text form.
func (k Key) String() string { return string(k.AppendTo(nil)) }

// fields returns the key's fields in the order of keyTags.
func (k Key) fields() [5]int64 {
	return [5]int64{k.Run, int64(k.Partition), int64(k.Writer), k.Seq, int64(k.Index)}
}

// ParseKey decodes a key written by AppendTo. Anything else, including a
// non-canonical spelling of the same numbers, fails with ErrBadRecord.
func ParseKey(b []byte) (Key, error) {
	parts := bytes.Split(b, []byte{'.'})
	if len(parts) != len(keyTags) {
		return Key{}, fmt.Errorf("%w: key %q has %d fields, want %d", ErrBadRecord, b, len(parts), len(keyTags))
	}
	var v [5]int64
	for i, p := range parts {
		if len(p) < 2 || p[0] != keyTags[i] {
			return Key{}, fmt.Errorf("%w: key %q: field %d does not start with %q", ErrBadRecord, b, i, keyTags[i])
		}
		n, err := strconv.ParseInt(string(p[1:]), 10, 64)
		if err != nil || n < 0 {
			return Key{}, fmt.Errorf("%w: key %q: field %c is not a count", ErrBadRecord, b, keyTags[i])
		}
		v[i] = n
	}
	k := Key{Run: v[0], Partition: int32(v[1]), Writer: int32(v[2]), Seq: v[3], Index: int32(v[4])}
	if !bytes.Equal(k.AppendTo(nil), b) {
		return Key{}, fmt.Errorf("%w: key %q is not in canonical form", ErrBadRecord, b)
	}
	return k, nil
}

// valueStream is the deterministic byte stream a record's value is cut
// from, seeded by the record's key.
type valueStream struct{ pcg *rand.PCG }

// newValueStream seeds a stream with the FNV-1a hash of key. PCG's output
// for a seed is fixed by math/rand/v2, so values written by one build
// verify under any other.
func newValueStream(key []byte) valueStream {
	h := fnv.New64a()
	h.Write(key)
	seed := h.Sum64()
	return valueStream{pcg: rand.NewPCG(seed, ^seed)}
}

// AppendValue appends to dst the size-byte value of the record whose key is
// key: the start of a pseudo-random stream seeded by the key.
func AppendValue(dst, key []byte, size int) []byte {
	s := newValueStream(key)
	var word [8]byte
	for size > 0 {
		binary.LittleEndian.PutUint64(word[:], s.pcg.Uint64())
		n := min(size, len(word))
		dst = append(dst, word[:n]...)
		size -= n
	}
	return dst
}

// VerifyRecord checks one record written by the benchmark: its key parses
// and its value is the value AppendValue derives from the key, at whatever
// length it has. It returns the decoded key; errors wrap ErrBadRecord.
func VerifyRecord(key, value []byte) (Key, error) {
	k, err := ParseKey(key)
	if err != nil {
		return Key{}, err
	}
	s := newValueStream(key)
	var word [8]byte
	for pos := 0; pos < len(value); pos += len(word) {
		binary.LittleEndian.PutUint64(word[:], s.pcg.Uint64())
		chunk := value[pos:min(pos+len(word), len(value))]
		for i, c := range chunk {
			if c != word[i] {
				return k, fmt.Errorf("%w: key %s: value byte %d of %d is %#02x, want %#02x", ErrBadRecord, key, pos+i, len(value), c, word[i])
			}
		}
	}
	return k, nil
}

// batchBuilder builds the batches of one writer, reusing its scratch space.
type batchBuilder struct {
	key     Key // Run, Partition and Writer fixed; Seq and Index set per record
	size    int // value size
	recs    []kmsg.Record
	scratch []byte
}

func newBatchBuilder(cfg Config, partition, writer int32) *batchBuilder {
	n := cfg.RecordsPerBatch()
	return &batchBuilder{
		key:     Key{Run: cfg.Run, Partition: partition, Writer: writer},
		size:    cfg.RecordSize,
		recs:    make([]kmsg.Record, n),
		scratch: make([]byte, 0, n*(cfg.RecordSize+64)),
	}
}

// build returns batch seq of the writer: uncompressed, from a producer that
// is not idempotent, every record stamped ts (milliseconds).
func (b *batchBuilder) build(seq, ts int64) ([]byte, error) {
	b.scratch = b.scratch[:0]
	for i := range b.recs {
		k := b.key
		k.Seq, k.Index = seq, int32(i)
		start := len(b.scratch)
		b.scratch = k.AppendTo(b.scratch)
		mid := len(b.scratch)
		b.scratch = AppendValue(b.scratch, b.scratch[start:mid], b.size)
		end := len(b.scratch)
		b.recs[i] = kmsg.Record{OffsetDelta: int32(i), Key: b.scratch[start:mid:mid], Value: b.scratch[mid:end:end]}
	}
	out, err := batch.Build(batch.Options{
		ProducerID:           batch.NoProducerID,
		ProducerEpoch:        batch.NoProducerEpoch,
		BaseSequence:         batch.NoSequence,
		PartitionLeaderEpoch: batch.NoPartitionLeaderEpoch,
		BaseTimestamp:        ts,
	}, b.recs)
	if err != nil {
		return nil, fmt.Errorf("build batch %d of writer %d: %w", seq, b.key.Writer, err)
	}
	return out, nil
}
