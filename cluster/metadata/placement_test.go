package metadata

import (
	"errors"
	"reflect"
	"slices"
	"testing"
)

func TestPlacementBalanced(t *testing.T) {
	for _, tc := range []struct {
		brokers, partitions int
		rf                  int16
	}{{1, 4, 1}, {3, 3, 3}, {3, 12, 2}, {5, 20, 3}, {6, 30, 3}, {4, 7, 4}} {
		img := Empty()
		var ids []int32
		for n := int32(1); n <= int32(tc.brokers); n++ {
			img = applyAll(t, img, registration(n*10, 1), BrokerUnfencedRecord{NodeID: n * 10, BrokerEpoch: 1})
			ids = append(ids, n*10)
		}
		for seed := 0; seed < 5; seed++ {
			recs, err := NewTopicRecords(img, "t", int32(tc.partitions), tc.rf, nil, nil, uuidN(seed))
			if err != nil {
				t.Fatal(err)
			}
			leaders, replicas := map[int32]int{}, map[int32]int{}
			for _, r := range recs[1:] {
				p := r.(PartitionRecord)
				if len(p.Replicas) != int(tc.rf) || p.Leader != p.Replicas[0] || !slices.Equal(p.ISR, p.Replicas) {
					t.Fatalf("%+v: partition %v", tc, p)
				}
				for _, id := range p.Replicas {
					if !slices.Contains(ids, id) {
						t.Fatalf("replica on unknown broker %d", id)
					}
					replicas[id]++
				}
				leaders[p.Leader]++
			}
			if spread(leaders, ids) > 1 {
				t.Errorf("%+v seed %d: leaders unbalanced %v", tc, seed, leaders)
			}
			if tc.partitions%tc.brokers == 0 && spread(replicas, ids) != 0 {
				t.Errorf("%+v seed %d: replicas unbalanced %v", tc, seed, replicas)
			}
			if _, err := img.Apply(recs[0], 100); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// spread is the difference between the largest and smallest count.
func spread(counts map[int32]int, ids []int32) int {
	lo, hi := counts[ids[0]], counts[ids[0]]
	for _, id := range ids {
		lo, hi = min(lo, counts[id]), max(hi, counts[id])
	}
	return hi - lo
}

func TestPlacementFollowersSpread(t *testing.T) {
	// With 4 brokers and 12 partitions, the followers of one broker's
	// partitions do not all sit on the same broker.
	img := threeBrokers(t)
	img = applyAll(t, img, registration(4, 1), BrokerUnfencedRecord{NodeID: 4, BrokerEpoch: 1})
	recs, err := NewTopicRecords(img, "t", 12, 2, nil, nil, uuidN(1))
	if err != nil {
		t.Fatal(err)
	}
	followers := map[int32]map[int32]bool{}
	for _, r := range recs[1:] {
		p := r.(PartitionRecord)
		if followers[p.Leader] == nil {
			followers[p.Leader] = map[int32]bool{}
		}
		followers[p.Leader][p.Replicas[1]] = true
	}
	for leader, f := range followers {
		if len(f) < 2 {
			t.Errorf("broker %d's partitions all follow on %v", leader, f)
		}
	}
}

func TestNewTopicRecords(t *testing.T) {
	img := threeBrokers(t)
	recs, err := NewTopicRecords(img, "orders", 2, 3, map[string]string{"retention.ms": "5", "cleanup.policy": "compact"}, nil, uuidN(1))
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{
		TopicRecord{Name: "orders", TopicID: uuidN(1)},
		ConfigRecord{ResourceType: ResourceTopic, ResourceName: "orders", Name: "cleanup.policy", Value: "compact"},
		ConfigRecord{ResourceType: ResourceTopic, ResourceName: "orders", Name: "retention.ms", Value: "5"},
	}
	if !reflect.DeepEqual(recs[:3], want) || len(recs) != 5 {
		t.Fatalf("records %v", recs)
	}
	img = applyAll(t, img, recs...)
	if v, _ := img.ConfigValue(TopicResource("orders"), "cleanup.policy"); v != "compact" {
		t.Errorf("cleanup.policy = %q", v)
	}
	again, _ := NewTopicRecords(threeBrokers(t), "orders", 2, 3, map[string]string{"retention.ms": "5", "cleanup.policy": "compact"}, nil, uuidN(1))
	if !reflect.DeepEqual(again, recs) {
		t.Fatal("NewTopicRecords is not deterministic")
	}
}

func TestNewTopicRecordsErrors(t *testing.T) {
	img := withTopic(t, threeBrokers(t), "a.b", 1, 1, 1)
	fenced := applyAll(t, img, BrokerFencedRecord{NodeID: 3, BrokerEpoch: 10})
	tests := []struct {
		name       string
		img        *Image
		topic      string
		partitions int32
		rf         int16
		configs    map[string]string
		brokers    []int32
		id         UUID
		want       error
	}{
		{"invalid name", img, "a b", 1, 1, nil, nil, uuidN(2), ErrInvalidTopic},
		{"too long", img, string(make([]byte, 250)), 1, 1, nil, nil, uuidN(2), ErrInvalidTopic},
		{"exists", img, "a.b", 1, 1, nil, nil, uuidN(2), ErrTopicExists},
		{"collides", img, "a_b", 1, 1, nil, nil, uuidN(2), ErrInvalidTopic},
		{"id in use", img, "c", 1, 1, nil, nil, uuidN(1), ErrInvalidTopicID},
		{"zero id", img, "c", 1, 1, nil, nil, UUID{}, ErrInvalidTopicID},
		{"no partitions", img, "c", 0, 1, nil, nil, uuidN(2), ErrInvalidPartitions},
		{"negative partitions", img, "c", -1, 1, nil, nil, uuidN(2), ErrInvalidPartitions},
		{"rf zero", img, "c", 1, 0, nil, nil, uuidN(2), ErrInvalidReplicationFactor},
		{"rf above brokers", img, "c", 1, 4, nil, nil, uuidN(2), ErrInvalidReplicationFactor},
		{"rf above unfenced brokers", fenced, "c", 1, 3, nil, nil, uuidN(2), ErrInvalidReplicationFactor},
		{"rf above listed brokers", img, "c", 1, 3, nil, []int32{1, 2}, uuidN(2), ErrInvalidReplicationFactor},
		{"no brokers", Empty(), "c", 1, 1, nil, nil, uuidN(2), ErrInvalidReplicationFactor},
		{"listed broker unknown", img, "c", 1, 1, nil, []int32{9}, uuidN(2), ErrUnknownBroker},
		{"listed broker fenced", fenced, "c", 1, 1, nil, []int32{3}, uuidN(2), ErrBrokerFenced},
		{"listed broker twice", img, "c", 1, 1, nil, []int32{1, 1}, uuidN(2), ErrInvalidRecord},
		{"empty config key", img, "c", 1, 1, map[string]string{"": "x"}, nil, uuidN(2), ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, err := NewTopicRecords(tt.img, tt.topic, tt.partitions, tt.rf, tt.configs, tt.brokers, tt.id)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, %v; want %v", recs, err, tt.want)
			}
		})
	}
}

func TestNewTopicRecordsListedBrokers(t *testing.T) {
	img := applyAll(t, threeBrokers(t), BrokerFencedRecord{NodeID: 3, BrokerEpoch: 10})
	recs, err := NewTopicRecords(img, "c", 6, 1, nil, []int32{2}, uuidN(2))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[1:] {
		if p := r.(PartitionRecord); !slices.Equal(p.Replicas, []int32{2}) {
			t.Errorf("partition %d on %v, want [2]", p.Partition, p.Replicas)
		}
	}
	recs, err = NewTopicRecords(img, "d", 6, 2, nil, nil, uuidN(3))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[1:] {
		if p := r.(PartitionRecord); slices.Contains(p.Replicas, 3) {
			t.Errorf("partition %d on fenced broker 3: %v", p.Partition, p.Replicas)
		}
	}
}

func TestAddPartitionRecords(t *testing.T) {
	img := withTopic(t, threeBrokers(t), "orders", 1, 2, 2)
	recs, err := AddPartitionRecords(img, "orders", 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	grown := applyAll(t, img, recs...)
	all := withTopic(t, threeBrokers(t), "orders", 1, 5, 2)
	for i := int32(0); i < 5; i++ {
		a, _ := grown.Partition(uuidN(1), i)
		b, _ := all.Partition(uuidN(1), i)
		if !slices.Equal(a.Replicas, b.Replicas) {
			t.Errorf("partition %d: grown on %v, created on %v", i, a.Replicas, b.Replicas)
		}
	}
	for _, tc := range []struct {
		name  string
		topic string
		total int32
		want  error
	}{
		{"same count", "orders", 2, ErrInvalidPartitions},
		{"fewer", "orders", 1, ErrInvalidPartitions},
		{"unknown topic", "nope", 3, ErrUnknownTopic},
	} {
		if _, err := AddPartitionRecords(img, tc.topic, tc.total, nil); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	fenced := applyAll(t, img, BrokerFencedRecord{NodeID: 3, BrokerEpoch: 10}, BrokerFencedRecord{NodeID: 2, BrokerEpoch: 10})
	if _, err := AddPartitionRecords(fenced, "orders", 3, nil); !errors.Is(err, ErrInvalidReplicationFactor) {
		t.Errorf("too few brokers left: %v", err)
	}
	bare := applyAll(t, img, TopicRecord{Name: "bare", TopicID: uuidN(9)})
	if _, err := AddPartitionRecords(bare, "bare", 3, nil); !errors.Is(err, ErrInvalidPartitions) {
		t.Errorf("topic without partitions: %v", err)
	}
}

func TestDeleteTopicRecords(t *testing.T) {
	img := withTopic(t, threeBrokers(t), "orders", 1, 2, 2)
	recs, err := DeleteTopicRecords(img, "orders")
	if err != nil || !reflect.DeepEqual(recs, []Record{TopicRemovedRecord{TopicID: uuidN(1)}}) {
		t.Fatalf("%v, %v", recs, err)
	}
	if _, err := DeleteTopicRecords(img, "orders_x"); !errors.Is(err, ErrUnknownTopic) {
		t.Fatal(err)
	}
}
