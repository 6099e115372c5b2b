package batch_test

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirmq/weir/log/batch"
)

// Example builds a compressed batch as a producer would send it, checks it
// and assigns its offset as the log does, and reads its records back.
func Example() {
	b, err := batch.Build(batch.Options{
		Codec:         batch.CodecZstd,
		ProducerID:    batch.NoProducerID,
		ProducerEpoch: batch.NoProducerEpoch,
		BaseSequence:  batch.NoSequence,
		BaseTimestamp: 1_700_000_000_000,
	}, []kmsg.Record{
		{OffsetDelta: 0, Key: []byte("a"), Value: []byte("first")},
		{OffsetDelta: 1, TimestampDelta64: 5, Key: []byte("b"), Value: []byte("second")},
	})
	if err != nil {
		panic(err)
	}
	if _, err := batch.Validate(b); err != nil {
		panic(err)
	}
	batch.SetBaseOffset(b, 42)
	records, err := batch.Records(b, 1<<20)
	if err != nil {
		panic(err)
	}
	for _, r := range records {
		fmt.Println(batch.BaseOffset(b)+int64(r.OffsetDelta), batch.Timestamp(b, &r), string(r.Key), string(r.Value))
	}
	// Output:
	// 42 1700000000000 a first
	// 43 1700000000005 b second
}
