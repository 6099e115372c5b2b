package metadata

import (
	"cmp"
	"slices"
)

// Records returns records that, applied in order to Empty, rebuild an image
// Equal to img (with Restore, at img.Offset()): the contents of a raft
// snapshot. The order is deterministic: cluster, controller, brokers by
// node id, topics by name (each with its configs and partitions), broker
// configs, producer ids.
func (img *Image) Records() []Record {
	out := make([]Record, 0, 8+img.brokers.len()*2+img.topics.len()+img.partitionCount)
	if img.clusterID != "" {
		out = append(out, ClusterCreatedRecord{ClusterID: img.clusterID})
	}
	if img.controllerEpoch > 0 {
		out = append(out, ControllerChangedRecord{ControllerID: img.controllerID, Term: img.controllerEpoch})
	}
	for _, br := range img.Brokers() {
		out = append(out, registrationOf(br))
		if !br.Fenced {
			out = append(out, BrokerUnfencedRecord{NodeID: br.NodeID, BrokerEpoch: br.Epoch})
		}
	}
	for _, t := range img.Topics() {
		out = append(out, TopicRecord{Name: t.name, TopicID: t.id})
		out = img.appendConfigRecords(out, TopicResource(t.name))
		for p := range t.partitions.all() {
			out = append(out, partitionRecordOf(p))
		}
	}
	for _, res := range img.brokerConfigResources() {
		out = img.appendConfigRecords(out, res)
	}
	if img.nextProducerID > 0 {
		out = append(out, ProducerIDsBlockRecord{BrokerID: -1, BrokerEpoch: -1, Size: img.nextProducerID})
	}
	return out
}

// registrationOf is br's registration as a snapshot holds it.
func registrationOf(br Broker) BrokerRegistrationRecord {
	return BrokerRegistrationRecord{
		NodeID:        br.NodeID,
		BrokerEpoch:   br.Epoch,
		IncarnationID: br.IncarnationID,
		Host:          br.Host,
		Port:          br.Port,
		ActorAddress:  br.ActorAddress,
		Rack:          br.Rack,
		RegisteredAt:  br.RegisteredAt,
	}
}

func partitionRecordOf(p *Partition) PartitionRecord {
	return PartitionRecord{
		TopicID:        p.TopicID,
		Partition:      p.Index,
		Replicas:       p.Replicas,
		ISR:            p.ISR,
		Leader:         p.Leader,
		LeaderEpoch:    p.LeaderEpoch,
		PartitionEpoch: p.PartitionEpoch,
		ELR:            p.ELR,
		LastKnownELR:   p.LastKnownELR,
	}
}

// appendConfigRecords appends res's overrides as ConfigRecords, by key.
func (img *Image) appendConfigRecords(out []Record, res ConfigResource) []Record {
	m, _ := img.configs.get(res)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		out = append(out, ConfigRecord{ResourceType: res.Type, ResourceName: res.Name, Name: k, Value: m[k]})
	}
	return out
}

// brokerConfigResources returns the broker resources with overrides, by
// name.
func (img *Image) brokerConfigResources() []ConfigResource {
	var out []ConfigResource
	for res := range img.configs.all() {
		if res.Type == ResourceBroker {
			out = append(out, res)
		}
	}
	slices.SortFunc(out, func(a, b ConfigResource) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
