package quorum

import (
	"testing"

	"github.com/weirmq/weir/cluster/metadata"
)

// BenchmarkProposeCommit measures one proposal on a single voter, from
// Propose to the image that holds it, on MemFS (fsyncs cost nothing: this
// is the driver's and the storage's own cost).
func BenchmarkProposeCommit(b *testing.B) {
	for _, records := range []int{1, 10} {
		b.Run(map[int]string{1: "records=1", 10: "records=10"}[records], func(b *testing.B) {
			tn := newTestNode(b, 1, []int32{1})
			tn.settle()
			recs := make([]metadata.Record, records)
			for i := range recs {
				recs[i] = metadata.ConfigRecord{ResourceType: metadata.ResourceBroker, Name: "log.retention.ms", Value: "1000"}
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := tn.n.Propose(recs, nil); err != nil {
					b.Fatal(err)
				}
				tn.settle()
			}
		})
	}
}
