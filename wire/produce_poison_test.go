package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/log/batch"
)

// Offsets of the batch header fields the poison batches change.
const (
	lastOffsetDeltaAt = 23
	numRecordsAt      = 57
)

// compressedBatch builds a batch of records compressed with codec.
func compressedBatch(t *testing.T, codec int16, recs []kmsg.Record) []byte {
	t.Helper()
	o := batchOpts()
	o.Codec = codec
	b, err := batch.Build(o, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withSection replaces the records section of b and reseals the batch
// (length and CRC).
func withSection(b, section []byte) []byte {
	out := append(bytes.Clone(b[:batch.HeaderSize]), section...)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-batch.LengthPrefix))
	batch.SetCRC(out)
	return out
}

// poisonBatches returns compressed batches whose header and CRC hold but
// whose records do not, as a buggy or hostile producer could send them,
// with the code Produce must answer.
func poisonBatches(t *testing.T, codec int16) []struct {
	name    string
	records []byte
	want    *kerr.Error
} {
	one := []kmsg.Record{{Key: []byte("k"), Value: []byte("the only record")}}
	falseCount := compressedBatch(t, codec, one)
	binary.BigEndian.PutUint32(falseCount[numRecordsAt:], math.MaxInt32)
	binary.BigEndian.PutUint32(falseCount[lastOffsetDeltaAt:], math.MaxInt32-1)
	batch.SetCRC(falseCount)

	three := make([]kmsg.Record, 3)
	for i := range three {
		three[i] = kmsg.Record{OffsetDelta: int32(2 * i), Key: fmt.Appendf(nil, "k%d", i), Value: bytes.Repeat([]byte("v"), 50)}
	}
	gapped := compressedBatch(t, codec, three) // offset deltas 0, 2, 4
	binary.BigEndian.PutUint32(gapped[lastOffsetDeltaAt:], 2)
	batch.SetCRC(gapped)

	for i := range three {
		three[i].OffsetDelta = int32(i)
	}
	good := compressedBatch(t, codec, three)
	section := good[batch.HeaderSize:]
	garbage := withSection(good, bytes.Repeat([]byte{0xfe}, len(section)))
	truncated := withSection(good, section[:len(section)/2])

	var bomb []byte
	if codec == batch.CodecSnappy {
		// A raw snappy block declares its decoded length first; snappy
		// cannot pack 64 MiB into max.message.bytes, but it can claim to.
		bomb = withSection(good, append(binary.AppendUvarint(nil, batch.MaxDecompressed+1), 0, 0, 0, 0))
	} else {
		bomb = compressedBatch(t, codec, []kmsg.Record{{Key: []byte("k"), Value: make([]byte, batch.MaxDecompressed)}})
	}
	return []struct {
		name    string
		records []byte
		want    *kerr.Error
	}{
		{"false record count", falseCount, kerr.InvalidRecord},
		{"offset deltas 0, 2, 4", gapped, kerr.InvalidRecord},
		{"not a compressed stream", garbage, kerr.InvalidRecord},
		{"truncated compressed stream", truncated, kerr.InvalidRecord},
		{"decompression bomb", bomb, kerr.MessageTooLarge},
	}
}

// Poison compressed batches are refused on produce, with Kafka's
// INVALID_RECORD (a bomb with MESSAGE_TOO_LARGE), for every codec: nothing
// is appended, so no offsets are burnt and no consumer meets them, and the
// connection and other clients keep working.
func TestProducePoisonCompressed(t *testing.T) {
	s, b := startBroker(t, nil)
	other := dial(t, s)
	for _, codec := range []int16{batch.CodecGzip, batch.CodecSnappy, batch.CodecLz4, batch.CodecZstd} {
		topic := fmt.Sprintf("poison-%d", codec)
		createTopic(t, b, topic, 1)
		r := replica(t, b, topic, 0)
		c := dial(t, s)
		for _, tc := range poisonBatches(t, codec) {
			name := fmt.Sprintf("codec %d: %s", codec, tc.name)
			if len(tc.records) > 1048588 {
				t.Fatalf("%s: %d bytes, over max.message.bytes", name, len(tc.records))
			}
			p := c.produce(9, 1, topic, 0, tc.records)
			wantCode(t, name+" ("+deref(p.ErrorMessage)+")", p.ErrorCode, tc.want)
			if p.BaseOffset != -1 {
				t.Errorf("%s: base offset %d on error", name, p.BaseOffset)
			}
			if st := r.Status(); st.LogEndOffset != 0 {
				t.Fatalf("%s: log end offset %d: something was appended", name, st.LogEndOffset)
			}
		}
		// The same connection and another one still work, with the codec.
		good := compressedBatch(t, codec, []kmsg.Record{{Key: []byte("k"), Value: []byte("v")}})
		wantCode(t, "same connection", c.produce(9, 1, topic, 0, bytes.Clone(good)).ErrorCode, nil)
		wantCode(t, "other connection", other.produce(9, 1, topic, 0, bytes.Clone(good)).ErrorCode, nil)
		if st := r.Status(); st.LogEndOffset != 2 {
			t.Fatalf("codec %d: log end offset %d after two good batches, want 2", codec, st.LogEndOffset)
		}
	}
}
