package batch

import (
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// checkBatch builds an uncompressed (or codec) batch of n records of size
// value bytes, each keyed unless keyless.
func checkBatch(t testing.TB, codec int16, n, size int, keyless bool) []byte {
	t.Helper()
	recs := make([]kmsg.Record, n)
	for i := range recs {
		recs[i] = kmsg.Record{OffsetDelta: int32(i), Value: make([]byte, size),
			Headers: []kmsg.Header{{Key: "h", Value: []byte("v")}}}
		if !keyless {
			recs[i].Key = fmt.Appendf(nil, "k%d", i)
		}
	}
	b, err := Build(Options{ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence,
		PartitionLeaderEpoch: NoPartitionLeaderEpoch, Codec: codec}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCheckRecords(t *testing.T) {
	for _, c := range codecs {
		keyed, keyless := checkBatch(t, c.codec, 50, 20, false), checkBatch(t, c.codec, 50, 20, true)
		for _, needKeys := range []bool{false, true} {
			if err := CheckRecords(keyed, needKeys, 1<<20); err != nil {
				t.Errorf("%s, keys needed %v: %v", c.name, needKeys, err)
			}
		}
		if err := CheckRecords(keyless, false, 1<<20); err != nil {
			t.Errorf("%s without keys: %v", c.name, err)
		}
		if err := CheckRecords(keyless, true, 1<<20); !errors.Is(err, ErrNoKey) {
			t.Errorf("%s without keys, keys needed: %v, want ErrNoKey", c.name, err)
		}
		if c.codec != CodecNone {
			if err := CheckRecords(keyed, false, 100); !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s over the decompression limit: %v, want ErrCorrupt", c.name, err)
			}
		}
	}
}

// BenchmarkCheckRecords walks 1 MiB batches of 100-byte and 1 KiB records,
// as the leader does for every uncompressed produce.
func BenchmarkCheckRecords(b *testing.B) {
	for _, size := range []int{100, 1024} {
		buf := checkBatch(b, CodecNone, (1<<20)/(size+20), size, false)
		b.Run(fmt.Sprintf("value=%d", size), func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				if err := CheckRecords(buf, true, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
