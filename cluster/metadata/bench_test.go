package metadata

import (
	"fmt"
	"testing"
)

// benchImage has 10,000 partitions (RF 3 over 5 brokers) in topics of
// partitionsPerTopic partitions each.
func benchImage(b *testing.B, partitionsPerTopic int) *Image {
	b.Helper()
	builder := NewBuilder(Empty())
	var off int64
	apply := func(recs ...Record) {
		for _, r := range recs {
			if err := builder.Apply(r, off); err != nil {
				b.Fatal(err)
			}
		}
		off++
	}
	for n := int32(1); n <= 5; n++ {
		apply(registration(n, 1), BrokerUnfencedRecord{NodeID: n, BrokerEpoch: 1})
	}
	for i := 0; i < 10000/partitionsPerTopic; i++ {
		recs, err := NewTopicRecords(builder.Image(), fmt.Sprintf("topic-%05d", i), int32(partitionsPerTopic), 3,
			nil, nil, uuidN(i+1))
		if err != nil {
			b.Fatal(err)
		}
		apply(recs...)
	}
	return builder.Image()
}

var shapes = []int{10000, 100, 1} // partitions per topic: 1, 100 and 10,000 topics

// BenchmarkApplyPartitionChange applies one leader change to an image of
// 10,000 partitions: the cost of copy-on-write for the commonest record.
func BenchmarkApplyPartitionChange(b *testing.B) {
	for _, per := range shapes {
		b.Run(fmt.Sprintf("topics=%d", 10000/per), func(b *testing.B) {
			img := benchImage(b, per)
			tp := img.Topics()[len(img.Topics())/2]
			p, _ := tp.Partition(tp.NumPartitions() / 2)
			rec := PartitionChangeRecord{TopicID: tp.ID(), Partition: p.Index, Leader: p.ISR[1]}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := img.Apply(rec, img.Offset()+1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkApplyFenceBatch applies the batch that fences one of 5 brokers
// (about 6,000 partition changes) through one Builder.
func BenchmarkApplyFenceBatch(b *testing.B) {
	for _, per := range shapes {
		b.Run(fmt.Sprintf("topics=%d", 10000/per), func(b *testing.B) {
			img := benchImage(b, per)
			recs, err := FenceBrokerRecords(img, 3, 1)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ReportMetric(float64(len(recs)), "records/op")
			for b.Loop() {
				builder := NewBuilder(img)
				for _, r := range recs {
					if err := builder.Apply(r, img.Offset()+1); err != nil {
						b.Fatal(err)
					}
				}
				builder.Image()
			}
		})
	}
}

// BenchmarkRestore rebuilds a 10,000-partition image from its snapshot
// records, as a restarting node does.
func BenchmarkRestore(b *testing.B) {
	for _, per := range shapes {
		b.Run(fmt.Sprintf("topics=%d", 10000/per), func(b *testing.B) {
			img := benchImage(b, per)
			recs := img.Records()
			b.ReportAllocs()
			b.ReportMetric(float64(len(recs)), "records/op")
			for b.Loop() {
				if _, err := Restore(recs, img.Offset()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeRecord decodes a PartitionRecord.
func BenchmarkDecodeRecord(b *testing.B) {
	data, err := EncodeRecord(PartitionRecord{TopicID: uuidN(1), Partition: 7, Replicas: []int32{1, 2, 3},
		ISR: []int32{1, 2, 3}, Leader: 1, LeaderEpoch: 4, PartitionEpoch: 9})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := DecodeRecord(data); err != nil {
			b.Fatal(err)
		}
	}
}
