package metadata

import (
	"reflect"
	"testing"
)

func TestSnapshotReplay(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		img := replay(t, history(t, seed, 200))
		recs := img.Records()
		got, err := Restore(recs, img.Offset())
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !got.Equal(img) {
			t.Fatalf("seed %d: the restored image differs", seed)
		}
		if !reflect.DeepEqual(got.Records(), recs) {
			t.Fatalf("seed %d: the restored image's snapshot differs", seed)
		}
		// Through the codec, as a raft snapshot would hold them.
		var decoded []Record
		for _, r := range recs {
			b, err := EncodeRecord(r)
			if err != nil {
				t.Fatal(err)
			}
			d, err := DecodeRecord(b)
			if err != nil {
				t.Fatal(err)
			}
			decoded = append(decoded, d)
		}
		if again, err := Restore(decoded, img.Offset()); err != nil || !again.Equal(img) {
			t.Fatalf("seed %d: restore from encoded snapshot: %v", seed, err)
		}
	}
}

func TestSnapshotOfEmpty(t *testing.T) {
	if recs := Empty().Records(); len(recs) != 0 {
		t.Fatalf("empty image snapshot: %v", recs)
	}
	img, err := Restore(nil, 42)
	if err != nil || img.Offset() != 42 {
		t.Fatalf("Restore(nil, 42) = %v, %v", img, err)
	}
}

func TestEqualSeesEveryPart(t *testing.T) {
	base := withTopic(t, threeBrokers(t), "orders", 1, 2, 2)
	changes := []Record{
		ControllerChangedRecord{ControllerID: 2, Term: 5},
		BrokerFencedRecord{NodeID: 3, BrokerEpoch: 10},
		registration(4, 1),
		TopicRecord{Name: "other", TopicID: uuidN(5)},
		ConfigRecord{ResourceType: ResourceBroker, Name: "a", Value: "b"},
		PartitionChangeRecord{TopicID: uuidN(1), Leader: NoLeader},
		PartitionRecord{TopicID: uuidN(1), Partition: 2, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1},
		ProducerIDsBlockRecord{BrokerID: 1, BrokerEpoch: 10, Size: 5},
		TopicRemovedRecord{TopicID: uuidN(1)},
	}
	moved := ordersAt(t, base, base.Offset()+1)
	for _, rec := range changes {
		next, err := base.Apply(rec, base.Offset()+1)
		if err != nil {
			t.Fatal(err)
		}
		if next.Equal(moved) {
			t.Errorf("Equal misses the change of %v", rec)
		}
	}
	if !moved.Equal(moved) || base.Equal(moved) {
		t.Error("Equal misses the offset")
	}
}

func ordersAt(t *testing.T, img *Image, offset int64) *Image {
	b := NewBuilder(img)
	if err := b.AdvanceTo(offset); err != nil {
		t.Fatal(err)
	}
	return b.Image()
}
