package metadata_test

import (
	"fmt"
	"sync/atomic"

	"github.com/weirmq/weir/cluster/metadata"
)

// The controller builds records from its latest image; every node applies
// each committed entry through a Builder and publishes the new image, which
// readers load without locks.
func Example() {
	var current atomic.Pointer[metadata.Image]
	current.Store(metadata.Empty())

	// commit stands for raft: the entry at index travels as encoded records
	// and is applied on every node.
	commit := func(index int64, recs []metadata.Record) {
		b := metadata.NewBuilder(current.Load())
		for _, rec := range recs {
			data, err := metadata.EncodeRecord(rec)
			if err != nil {
				panic(err)
			}
			if rec, err = metadata.DecodeRecord(data); err != nil {
				panic(err)
			}
			if err := b.Apply(rec, index); err != nil {
				panic(err) // a committed record the controller checked: a bug
			}
		}
		current.Store(b.Image())
	}

	reg, epoch, err := metadata.RegisterBrokerRecords(current.Load(), metadata.BrokerRegistrationRecord{
		NodeID: 1, IncarnationID: metadata.UUID{1}, Host: "127.0.0.1", Port: 9092,
	})
	if err != nil {
		panic(err)
	}
	commit(1, reg)
	commit(2, []metadata.Record{metadata.BrokerUnfencedRecord{NodeID: 1, BrokerEpoch: epoch}})
	topic, err := metadata.NewTopicRecords(current.Load(), "orders", 3, 1, nil, nil, metadata.UUID{7, 7})
	if err != nil {
		panic(err)
	}
	commit(3, topic)

	// A reader, for example a Metadata request.
	img := current.Load()
	t, _ := img.Topic("orders")
	p, _ := t.Partition(2)
	fmt.Println(img.Offset(), t.Name(), t.NumPartitions(), p.Leader, p.ISR)
	// Output: 3 orders 3 1 [1]
}
