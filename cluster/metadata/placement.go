package metadata

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// NewTopicRecords returns the records that create topic name with id:
// a TopicRecord, a ConfigRecord per entry of configs (by key) and a
// PartitionRecord per partition, to be proposed as one batch. Every
// partition starts with the ISR equal to its replicas, the first replica
// leading, and epochs 0.
//
// brokers lists the brokers that may hold replicas; nil means every unfenced
// broker of img. Each listed broker must be registered and unfenced.
// Replicas are placed as Kafka's rack-unaware assignment does (racks are
// ignored): the first replicas of successive partitions go round-robin over
// brokers, and the followers of a partition sit at a shift from its first
// replica that grows by one with every full round, so that the followers of
// one broker's partitions spread over the others. Where Kafka starts the
// round and the shift at random, this takes them from the topic id (random
// itself), so that the records depend only on the arguments.
//
// Errors wrap ErrInvalidTopic, ErrTopicExists, ErrInvalidTopicID,
// ErrInvalidPartitions, ErrInvalidReplicationFactor, ErrInvalidConfig,
// ErrUnknownBroker or ErrBrokerFenced. Config values are not checked here.
func NewTopicRecords(img *Image, name string, partitions int32, replicationFactor int16,
	configs map[string]string, brokers []int32, id UUID) ([]Record, error) {
	if err := img.checkNewTopic(name, id); err != nil {
		return nil, fmt.Errorf("create topic %q: %w", name, err)
	}
	if partitions <= 0 {
		return nil, fmt.Errorf("create topic %q: %w: number of partitions must be larger than 0", name, ErrInvalidPartitions)
	}
	eligible, err := placementBrokers(img, brokers)
	if err != nil {
		return nil, fmt.Errorf("create topic %q: %w", name, err)
	}
	if err := checkReplicationFactor(replicationFactor, len(eligible)); err != nil {
		return nil, fmt.Errorf("create topic %q: %w", name, err)
	}
	recs := make([]Record, 0, 1+len(configs)+int(partitions))
	recs = append(recs, TopicRecord{Name: name, TopicID: id})
	for _, key := range slices.Sorted(maps.Keys(configs)) {
		if key == "" {
			return nil, fmt.Errorf("create topic %q: %w: empty config name", name, ErrInvalidConfig)
		}
		recs = append(recs, ConfigRecord{ResourceType: ResourceTopic, ResourceName: name, Name: key, Value: configs[key]})
	}
	return appendPartitions(recs, id, 0, partitions, int(replicationFactor), eligible), nil
}

// AddPartitionRecords returns the PartitionRecords that grow topic name to
// total partitions (CreatePartitions), placed as NewTopicRecords places
// them and with the replication factor of partition 0. Errors wrap
// ErrUnknownTopic, ErrInvalidPartitions (total not above the current
// count), ErrInvalidReplicationFactor, ErrUnknownBroker or ErrBrokerFenced.
func AddPartitionRecords(img *Image, name string, total int32, brokers []int32) ([]Record, error) {
	t, ok := img.Topic(name)
	if !ok {
		return nil, fmt.Errorf("add partitions to %q: %w", name, ErrUnknownTopic)
	}
	current := t.NumPartitions()
	switch {
	case current == 0:
		return nil, fmt.Errorf("add partitions to %q: %w: topic has no partition to take the replication factor from",
			name, ErrInvalidPartitions)
	case total == current:
		return nil, fmt.Errorf("add partitions to %q: %w: topic already has %d partitions", name, ErrInvalidPartitions, current)
	case total < current:
		return nil, fmt.Errorf("add partitions to %q: %w: topic currently has %d partitions, which is higher than the requested %d",
			name, ErrInvalidPartitions, current, total)
	}
	eligible, err := placementBrokers(img, brokers)
	if err != nil {
		return nil, fmt.Errorf("add partitions to %q: %w", name, err)
	}
	rf := len(t.partitions.at(0).Replicas)
	if err := checkReplicationFactor(int16(rf), len(eligible)); err != nil {
		return nil, fmt.Errorf("add partitions to %q: %w", name, err)
	}
	return appendPartitions(nil, t.id, current, total, rf, eligible), nil
}

// DeleteTopicRecords returns the record that deletes topic name.
func DeleteTopicRecords(img *Image, name string) ([]Record, error) {
	t, ok := img.Topic(name)
	if !ok {
		return nil, fmt.Errorf("delete topic %q: %w", name, ErrUnknownTopic)
	}
	return []Record{TopicRemovedRecord{TopicID: t.id}}, nil
}

func checkReplicationFactor(rf int16, brokers int) error {
	if rf <= 0 {
		return fmt.Errorf("%w: replication factor must be larger than 0", ErrInvalidReplicationFactor)
	}
	if int(rf) > brokers {
		return fmt.Errorf("%w: unable to replicate the partition %d time(s): the target replication factor of %d cannot be reached because only %d unfenced broker(s) are registered",
			ErrInvalidReplicationFactor, rf, rf, brokers)
	}
	return nil
}

// placementBrokers returns the brokers replicas may go to: the listed ones,
// checked, or every unfenced broker by node id.
func placementBrokers(img *Image, brokers []int32) ([]int32, error) {
	if brokers == nil {
		var out []int32
		for _, br := range img.Brokers() {
			if !br.Fenced {
				out = append(out, br.NodeID)
			}
		}
		return out, nil
	}
	for i, id := range brokers {
		br, ok := img.brokers.get(id)
		switch {
		case !ok:
			return nil, fmt.Errorf("%w: node %d", ErrUnknownBroker, id)
		case br.Fenced:
			return nil, fmt.Errorf("%w: node %d", ErrBrokerFenced, id)
		case slices.Contains(brokers[:i], id):
			return nil, fmt.Errorf("%w: node %d listed twice", ErrInvalidRecord, id)
		}
	}
	return brokers, nil
}

// appendPartitions appends PartitionRecords for partitions from..to-1.
func appendPartitions(recs []Record, id UUID, from, to int32, rf int, brokers []int32) []Record {
	n := len(brokers)
	start := int(binary.BigEndian.Uint32(id[0:4]) % uint32(n))
	shift := int(binary.BigEndian.Uint32(id[4:8]) % uint32(n))
	for p := from; p < to; p++ {
		replicas := placeReplicas(int(p), rf, brokers, start, shift)
		recs = append(recs, PartitionRecord{
			TopicID:   id,
			Partition: p,
			Replicas:  replicas,
			ISR:       slices.Clone(replicas),
			Leader:    replicas[0],
		})
	}
	return recs
}

// placeReplicas returns the replicas of partition p: the first on broker
// (p+start) mod n; follower j at a distance 1 + (shift+round+j) mod (n-1)
// after it, where round = p/n counts completed rounds over the brokers.
// Distances lie in 1..n-1 and differ for j < n-1, so replicas are distinct.
func placeReplicas(p, rf int, brokers []int32, start, shift int) []int32 {
	n := len(brokers)
	first := (p + start) % n
	replicas := make([]int32, 0, rf)
	replicas = append(replicas, brokers[first])
	for j := 0; j < rf-1; j++ {
		distance := 1 + (shift+p/n+j)%(n-1)
		replicas = append(replicas, brokers[(first+distance)%n])
	}
	return replicas
}

// assignedPartitionRecords returns the PartitionRecords of partitions
// from, from+1, ... of topic id placed on lists, as Kafka's controller
// places a manual assignment: each list non-empty, of length rf (rf < 0:
// of the first list's length), naming registered brokers once each and at
// least one unfenced one; the ISR is the unfenced replicas, led by the
// first of them.
func assignedPartitionRecords(img *Image, id UUID, from int32, lists [][]int32, rf int) ([]Record, error) {
	var recs []Record
	for i, replicas := range lists {
		index := from + int32(i)
		if rf < 0 {
			rf = len(replicas)
		}
		if err := checkManualReplicas(img, replicas, rf); err != nil {
			return nil, err
		}
		var isr []int32
		for _, r := range replicas {
			if br, _ := img.Broker(r); !br.Fenced {
				isr = append(isr, r)
			}
		}
		if len(isr) == 0 {
			return nil, apiErr(kerr.InvalidReplicaAssignment, "All brokers specified in the manual partition assignment for partition %d are fenced or in controlled shutdown.", index)
		}
		recs = append(recs, PartitionRecord{
			TopicID: id, Partition: index, Replicas: slices.Clone(replicas), ISR: isr, Leader: isr[0],
		})
	}
	return recs, nil
}

// checkManualReplicas checks one replica list of a manual assignment.
func checkManualReplicas(img *Image, replicas []int32, rf int) error {
	if len(replicas) == 0 {
		return apiErr(kerr.InvalidReplicaAssignment, "The manual partition assignment includes an empty replica list.")
	}
	if len(replicas) != rf {
		return apiErr(kerr.InvalidReplicaAssignment, "The manual partition assignment includes a partition with %d replica(s), but this is not consistent with previous partitions, which have %d replica(s).", len(replicas), rf)
	}
	for i, r := range replicas {
		if slices.Contains(replicas[:i], r) {
			return apiErr(kerr.InvalidReplicaAssignment, "The manual partition assignment includes the broker %d more than once.", r)
		}
		if _, ok := img.Broker(r); !ok {
			return apiErr(kerr.InvalidReplicaAssignment, "The manual partition assignment includes broker %d, but no such broker is registered.", r)
		}
	}
	return nil
}
