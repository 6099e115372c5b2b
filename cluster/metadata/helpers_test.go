package metadata

import (
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// uuidN returns a distinct, valid UUID for every n >= 0, spread so that
// placement's start and shift vary.
func uuidN(n int) UUID {
	var u UUID
	x := uint64(n) + 1
	binary.BigEndian.PutUint64(u[0:8], x*0x9e3779b97f4a7c15)
	binary.BigEndian.PutUint64(u[8:16], x)
	return u
}

func clusterIDForTest() string { return uuidN(99).String() }

func registration(node int32, epoch int64) BrokerRegistrationRecord {
	return BrokerRegistrationRecord{
		NodeID:        node,
		BrokerEpoch:   epoch,
		IncarnationID: uuidN(int(node)*1000 + int(epoch)),
		Host:          "127.0.0.1",
		Port:          9090 + node,
		ActorAddress:  "127.0.0.1:8090",
	}
}

// applyAll applies recs at successive offsets after img's and fails the
// test on an error.
func applyAll(t testing.TB, img *Image, recs ...Record) *Image {
	t.Helper()
	b := NewBuilder(img)
	off := img.Offset()
	for _, r := range recs {
		off++
		if err := b.Apply(r, off); err != nil {
			t.Fatalf("apply: %v", err)
		}
	}
	return b.Image()
}

// threeBrokers is an image with a cluster id, a controller and brokers 1-3
// registered and unfenced.
func threeBrokers(t testing.TB) *Image {
	t.Helper()
	recs := []Record{
		ClusterCreatedRecord{ClusterID: clusterIDForTest()},
		ControllerChangedRecord{ControllerID: 1, Term: 1},
	}
	for n := int32(1); n <= 3; n++ {
		recs = append(recs, registration(n, 10), BrokerUnfencedRecord{NodeID: n, BrokerEpoch: 10})
	}
	return applyAll(t, Empty(), recs...)
}

// withTopic adds topic name (id uuidN(idN)) with partitions placed over
// the unfenced brokers.
func withTopic(t testing.TB, img *Image, name string, idN int, partitions int32, rf int16) *Image {
	t.Helper()
	recs, err := NewTopicRecords(img, name, partitions, rf, nil, nil, uuidN(idN))
	if err != nil {
		t.Fatalf("NewTopicRecords: %v", err)
	}
	return applyAll(t, img, recs...)
}

// sampleRecords has one record of every type, with every field set.
func sampleRecords() []Record {
	return []Record{
		ClusterCreatedRecord{ClusterID: clusterIDForTest()},
		ControllerChangedRecord{ControllerID: 2, Term: 7},
		BrokerRegistrationRecord{NodeID: 3, BrokerEpoch: 42, IncarnationID: uuidN(3), Host: "broker-3.example",
			Port: 9092, ActorAddress: "10.0.0.3:8090", Rack: "rack-a", RegisteredAt: 17},
		BrokerFencedRecord{NodeID: 3, BrokerEpoch: 42},
		BrokerUnfencedRecord{NodeID: 3, BrokerEpoch: 42},
		BrokerUnregisteredRecord{NodeID: 3, BrokerEpoch: 42},
		TopicRecord{Name: "orders", TopicID: uuidN(1)},
		TopicRemovedRecord{TopicID: uuidN(1)},
		ConfigRecord{ResourceType: ResourceTopic, ResourceName: "orders", Name: "retention.ms", Value: "1000"},
		ConfigRecord{ResourceType: ResourceBroker, ResourceName: "", Name: "log.retention.ms", Remove: true},
		PartitionRecord{TopicID: uuidN(1), Partition: 4, Replicas: []int32{1, 2, 3}, ISR: []int32{2, 1},
			Leader: 2, LeaderEpoch: 5, PartitionEpoch: 9},
		PartitionRecord{TopicID: uuidN(1), Partition: 5, Replicas: []int32{1, 2, 3, 4}, ISR: []int32{},
			Leader: NoLeader, LeaderEpoch: 5, PartitionEpoch: 9, ELR: []int32{1, 3}, LastKnownELR: []int32{2}},
		PartitionChangeRecord{TopicID: uuidN(1), Partition: 4, Leader: LeaderNoChange, ISR: []int32{1}},
		PartitionChangeRecord{TopicID: uuidN(1), Partition: 4, Leader: LeaderNoChange, ISR: []int32{1},
			ELR: []int32{2}, LastKnownELR: []int32{}},
		PartitionChangeRecord{TopicID: uuidN(1), Partition: 4, Leader: NoLeader},
		PartitionChangeRecord{TopicID: uuidN(1), Partition: 4, Leader: 3, ISR: []int32{}},
		ProducerIDsBlockRecord{BrokerID: 1, BrokerEpoch: 10, FirstProducerID: 5000, Size: 1000},
	}
}

// applyBatch applies recs as one log entry (one offset, after img's), as
// the controller proposes them, and fails the test on an error.
func applyBatch(t testing.TB, img *Image, recs ...Record) *Image {
	t.Helper()
	b := NewBuilder(img)
	for _, r := range recs {
		if err := b.Apply(r, img.Offset()+1); err != nil {
			t.Fatalf("apply batch: %v", err)
		}
	}
	return b.Image()
}

// bigTopic adds topic name (id uuidN(idN)) with n partitions, each on
// replicas with the ISR replicas and the first replica leading, from
// records built by hand (past what one request may create).
func bigTopic(t testing.TB, img *Image, name string, idN int, n int, replicas ...int32) *Image {
	t.Helper()
	recs := []Record{TopicRecord{Name: name, TopicID: uuidN(idN)}}
	for i := range n {
		recs = append(recs, PartitionRecord{TopicID: uuidN(idN), Partition: int32(i),
			Replicas: replicas, ISR: replicas, Leader: replicas[0]})
	}
	return applyBatch(t, img, recs...)
}

// evalApply evaluates req with c against img and applies its records as
// one batch.
func evalApply(t testing.TB, c *Controller, img *Image, req Request) (Result, []Record, *Image) {
	t.Helper()
	res, recs := c.Evaluate(img, req)
	if len(recs) > 0 {
		img = applyBatch(t, img, recs...)
	}
	return res, recs, img
}

// wantCode fails the test unless e has the code of k (nil: no error).
func wantCode(t testing.TB, what string, e APIError, k *kerr.Error) {
	t.Helper()
	want := int16(0)
	if k != nil {
		want = k.Code
	}
	if e.Code != want {
		t.Errorf("%s: %v (%s), want %v", what, kerr.ErrorForCode(e.Code), e.Message, k)
	}
}
