package wire

import (
	"testing"

	"github.com/weirmq/weir/cluster/metadata"
)

// TestElectingWaitsForADownLeader: a Metadata answer waits while a
// queried partition is led by a node whose process this node just saw go
// (PeerDown), as it waits for an election under way, and not otherwise.
func TestElectingWaitsForADownLeader(t *testing.T) {
	b := newFakeBroker(t, "127.0.0.1:9092", nil)
	recs, err := metadata.NewTopicRecords(b.Image(), "orders", 2, 1, nil, nil, metadata.UUID{4, 2})
	if err != nil {
		t.Fatal(err)
	}
	b.apply(recs...)
	img := b.Image()
	none := func(int32) bool { return false }
	down := func(n int32) bool { return n == 1 }
	if electing(img, nil, none) {
		t.Fatal("waits with every leader up and no election")
	}
	if !electing(img, nil, down) {
		t.Fatal("does not wait for the partitions of a leader seen going")
	}
	q := []metadataQuery{{name: "orders"}}
	if !electing(img, q, down) || electing(img, []metadataQuery{{name: "other"}}, down) {
		t.Fatal("the wait does not follow the queried topics")
	}
}
