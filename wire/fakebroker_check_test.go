package wire

import (
	"context"
	"testing"

	"github.com/weirmq/weir/cluster/metadata"
)

// TestFakeBroker checks the test double itself: a proposed topic gets a
// leading replica per partition, and deleting it stops them.
func TestFakeBroker(t *testing.T) {
	_, b := startBroker(t, nil)
	img, err := b.Propose(context.Background(), func(img *metadata.Image) ([]metadata.Record, error) {
		return metadata.NewTopicRecords(img, "t", 3, 1, nil, nil, metadata.UUID{5})
	})
	if err != nil {
		t.Fatal(err)
	}
	top, ok := img.Topic("t")
	if !ok || top.NumPartitions() != 3 {
		t.Fatalf("topic t: %v %v", ok, top)
	}
	for i := range int32(3) {
		if b.Replica(top.ID(), i) == nil {
			t.Fatalf("no replica for partition %d", i)
		}
	}
	if _, err := b.Propose(context.Background(), func(img *metadata.Image) ([]metadata.Record, error) {
		return metadata.DeleteTopicRecords(img, "t")
	}); err != nil {
		t.Fatal(err)
	}
	if b.Replica(top.ID(), 0) != nil {
		t.Fatal("replica survived its topic")
	}
}
