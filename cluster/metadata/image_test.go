package metadata

import (
	"reflect"
	"slices"
	"testing"
)

func TestDeterminism(t *testing.T) {
	entries := history(t, 1, 300)
	a := replay(t, entries)
	// The same records through one Builder per entry give the same image.
	img := Empty()
	for i, entry := range entries {
		b := NewBuilder(img)
		for _, rec := range entry {
			if err := b.Apply(rec, int64(i)); err != nil {
				t.Fatal(err)
			}
		}
		img = b.Image()
	}
	if !a.Equal(img) || !img.Equal(a) {
		t.Fatal("per-record and per-entry application differ")
	}
	if !reflect.DeepEqual(a.Records(), img.Records()) {
		t.Fatal("equal images give different snapshots")
	}
	if a.NumTopics() == 0 || a.NumPartitions() == 0 || a.NextProducerID() == 0 {
		t.Fatalf("history too thin: %d topics, %d partitions, next pid %d", a.NumTopics(), a.NumPartitions(), a.NextProducerID())
	}
	// A different history gives a different image.
	if replay(t, history(t, 2, 300)).Equal(a) {
		t.Fatal("different histories give Equal images")
	}
}

func TestCopyOnWrite(t *testing.T) {
	base := withTopic(t, withTopic(t, threeBrokers(t), "orders", 1, 4, 3), "payments", 2, 2, 2)
	before := base.Records()
	orders, _ := base.Topic("orders")
	payments, _ := base.Topic("payments")
	p0 := ordersP0(t, base)
	isr := slices.Clone(p0.ISR)

	next, err := base.Apply(PartitionChangeRecord{TopicID: uuidN(1), Partition: 0, Leader: p0.ISR[1],
		ISR: p0.ISR[1:]}, base.Offset()+1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(base.Records(), before) || !slices.Equal(ordersP0(t, base).ISR, isr) {
		t.Fatal("the old image changed")
	}
	if got := ordersP0(t, next); got.Leader != p0.ISR[1] || got.PartitionEpoch != 1 {
		t.Fatalf("new image partition = %+v", got)
	}
	// What did not change is shared, not copied.
	if nextPayments, _ := next.Topic("payments"); nextPayments != payments {
		t.Error("an unchanged topic was copied")
	}
	nextOrders, _ := next.Topic("orders")
	if nextOrders == orders {
		t.Fatal("the changed topic was not copied")
	}
	for i := int32(1); i < orders.NumPartitions(); i++ {
		if nextOrders.partitions.at(int(i)) != orders.partitions.at(int(i)) {
			t.Errorf("unchanged partition %d was copied", i)
		}
	}
}

func TestBuilderKeepsPublishedImages(t *testing.T) {
	b := NewBuilder(threeBrokers(t))
	recs, err := NewTopicRecords(b.Image(), "orders", 2, 2, nil, nil, uuidN(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := b.Apply(r, 100); err != nil {
			t.Fatal(err)
		}
	}
	first := b.Image()
	snapshot := first.Records()
	p0 := ordersP0(t, first)
	if err := b.Apply(PartitionChangeRecord{TopicID: uuidN(1), Leader: NoLeader}, 101); err != nil {
		t.Fatal(err)
	}
	if err := b.Apply(ConfigRecord{ResourceType: ResourceTopic, ResourceName: "orders", Name: "a", Value: "b"}, 101); err != nil {
		t.Fatal(err)
	}
	if err := b.Apply(BrokerFencedRecord{NodeID: 1, BrokerEpoch: 10}, 101); err != nil {
		t.Fatal(err)
	}
	second := b.Image()
	if !reflect.DeepEqual(first.Records(), snapshot) || first.Offset() != 100 {
		t.Fatal("a published image changed after the Builder went on")
	}
	if ordersP0(t, second).Leader != NoLeader || ordersP0(t, first).Leader != p0.Leader {
		t.Fatal("leader change not isolated")
	}
}

func TestApplyErrorKeepsBuilder(t *testing.T) {
	b := NewBuilder(threeBrokers(t))
	before := b.Image().Records()
	if err := b.Apply(PartitionChangeRecord{TopicID: uuidN(1), Leader: 1}, 50); err == nil {
		t.Fatal("want an error")
	}
	img := b.Image()
	if !reflect.DeepEqual(img.Records(), before) || img.Offset() == 50 {
		t.Fatal("a failed Apply changed the builder")
	}
}

func TestAccessorsSorted(t *testing.T) {
	img := threeBrokers(t)
	for i, name := range []string{"zeta", "alpha", "mid", "Beta"} {
		img = withTopic(t, img, name, i+1, 1, 1)
	}
	var names []string
	for _, tp := range img.Topics() {
		names = append(names, tp.Name())
	}
	if !slices.Equal(names, []string{"Beta", "alpha", "mid", "zeta"}) {
		t.Errorf("Topics() order %v", names)
	}
	var ids []int32
	for _, br := range img.Brokers() {
		ids = append(ids, br.NodeID)
	}
	if !slices.Equal(ids, []int32{1, 2, 3}) {
		t.Errorf("Brokers() order %v", ids)
	}
	if _, ok := img.Partition(uuidN(1), 1); ok {
		t.Error("partition 1 of a 1-partition topic")
	}
	if _, ok := img.Partition(uuidN(1), -1); ok {
		t.Error("partition -1")
	}
	if _, ok := img.Partition(uuidN(50), 0); ok {
		t.Error("partition of unknown topic")
	}
	c := img.Config(BrokerResource(-1))
	if c != nil {
		t.Errorf("config of nothing = %v", c)
	}
}

func TestConfigReturnsCopy(t *testing.T) {
	img := applyAll(t, Empty(), ConfigRecord{ResourceType: ResourceBroker, Name: "a", Value: "1"})
	c := img.Config(BrokerResource(-1))
	c["a"] = "2"
	if v, _ := img.ConfigValue(BrokerResource(-1), "a"); v != "1" {
		t.Fatal("Config exposed the image's map")
	}
}

func TestInternalTopics(t *testing.T) {
	img := withTopic(t, threeBrokers(t), ConsumerOffsetsTopic, 1, 1, 1)
	tp, _ := img.Topic(ConsumerOffsetsTopic)
	if !tp.Internal() {
		t.Error("__consumer_offsets not internal")
	}
	if _, err := NewTopicRecords(img, MetadataTopic, 1, 1, nil, nil, uuidN(2)); err == nil {
		t.Error("created __cluster_metadata")
	}
}
