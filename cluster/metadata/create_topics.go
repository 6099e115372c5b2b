package metadata

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/cluster/config"
)

// MaxPartitionsPerRequest caps the partitions one CreateTopics or
// CreatePartitions request may add, as Kafka's controller does
// (MAX_PARTITIONS_PER_BATCH): a larger request fails as a whole with
// POLICY_VIOLATION. It is checked first; the records of a request under it
// are then bounded as one operation (CheckOp).
const MaxPartitionsPerRequest = 10000

// errTooManyPartitions is the error of every topic of a request over
// MaxPartitionsPerRequest.
var errTooManyPartitions = apiErr(kerr.PolicyViolation, "Excessively large number of partitions per request.")

// createTopics decides every topic of r against img: the result of each,
// in request order, and the records that create the valid ones (a dry run
// over img checks them, so the batch applies as a whole).
func (c *Controller) createTopics(img *Image, r *CreateTopicsRequest) (*CreateTopicsResult, []Record) {
	if c.requestedPartitions(r) > MaxPartitionsPerRequest {
		return r.Refused(errTooManyPartitions).(*CreateTopicsResult), nil
	}
	count := map[string]int{}
	for _, t := range r.Topics {
		count[t.Name]++
	}
	res := &CreateTopicsResult{Topics: make([]CreatedTopic, 0, len(r.Topics))}
	var recs []Record
	cur := img
	for _, t := range r.Topics {
		if count[t.Name] > 1 {
			res.Topics = append(res.Topics, CreatedTopic{Name: t.Name, Error: apiErr(kerr.InvalidRequest, "Duplicate topic name.")})
			continue
		}
		topicRecs, overrides, err := c.createTopicRecords(cur, t)
		if err == nil {
			cur, err = dryRun(cur, topicRecs)
		}
		if err != nil {
			res.Topics = append(res.Topics, CreatedTopic{Name: t.Name, Error: ErrorOf(err)})
			continue
		}
		recs = append(recs, topicRecs...)
		res.Topics = append(res.Topics, c.created(cur, t.Name, overrides))
	}
	return res, recs
}

// requestedPartitions counts the partitions r asks for.
func (c *Controller) requestedPartitions(r *CreateTopicsRequest) int64 {
	var n int64
	for _, t := range r.Topics {
		switch {
		case len(t.Assignments) > 0:
			n += int64(len(t.Assignments))
		case t.NumPartitions == -1:
			n += c.Config.Int("num.partitions")
		case t.NumPartitions > 0:
			n += int64(t.NumPartitions)
		}
	}
	return n
}

// created is the result of a topic created in img with overrides: its id,
// partition count, replication factor and resolved configs (v5+, v7).
func (c *Controller) created(img *Image, name string, overrides map[string]string) CreatedTopic {
	t, _ := img.Topic(name)
	p0, _ := t.Partition(0)
	out := CreatedTopic{Name: name, TopicID: t.ID(), NumPartitions: t.NumPartitions(), ReplicationFactor: int16(len(p0.Replicas))}
	resolved, err := c.Config.ResolveTopic(overrides)
	if err != nil {
		out.ConfigErrorCode = ErrorOf(err).Code
		return out
	}
	out.Configs = make([]CreatedTopicConfig, 0, len(resolved))
	for _, r := range resolved {
		cfg := CreatedTopicConfig{Name: r.Name, ReadOnly: r.ReadOnly, Source: int8(r.Source), Sensitive: r.Sensitive}
		if !r.Null && !r.Sensitive {
			v := r.Value
			cfg.Value = &v
		}
		out.Configs = append(out.Configs, cfg)
	}
	return out
}

// createTopicRecords checks one topic of a CreateTopicsRequest against img
// and returns the records that create it and its config overrides.
func (c *Controller) createTopicRecords(img *Image, t CreatableTopic) ([]Record, map[string]string, error) {
	if err := refuseInternalCreate(t.Name); err != nil {
		return nil, nil, err
	}
	if err := ValidateTopicName(t.Name); err != nil {
		return nil, nil, err
	}
	if _, ok := img.Topic(t.Name); ok {
		return nil, nil, apiErr(kerr.TopicAlreadyExists, "Topic '%s' already exists.", t.Name)
	}
	overrides, err := requestedTopicConfigs(t.Configs)
	if err != nil {
		return nil, nil, err
	}
	id, err := c.newTopicID(img)
	if err != nil {
		return nil, nil, err
	}
	if len(t.Assignments) > 0 {
		recs, err := manualTopicRecords(img, t, overrides, id)
		return recs, overrides, err
	}
	partitions, rf := t.NumPartitions, t.ReplicationFactor
	switch {
	case rf == 0 || rf < -1:
		return nil, nil, apiErr(kerr.InvalidReplicationFactor, "Replication factor must be larger than 0, or -1 to use the default value.")
	case partitions == 0 || partitions < -1:
		return nil, nil, apiErr(kerr.InvalidPartitions, "Number of partitions was set to an invalid non-positive value.")
	}
	if partitions == -1 {
		partitions = int32(c.Config.Int("num.partitions"))
	}
	if rf == -1 {
		rf = c.Config.DefaultReplicationFactor(c.defaultFactorBase(img))
	}
	overrides = withTopicDefaults(c.Config, rf, overrides)
	recs, err := NewTopicRecords(img, t.Name, partitions, rf, overrides, nil, id)
	return recs, overrides, err
}

// requestedTopicConfigs collects a request's topic configs (the last of a
// repeated name wins) and validates them.
func requestedTopicConfigs(cs []ConfigValue) (map[string]string, error) {
	out, err := nonNullConfigs(len(cs), func(i int) (string, *string) { return cs[i].Name, cs[i].Value })
	if err != nil {
		return nil, err
	}
	if err := config.ValidateTopicConfigs(out); err != nil {
		return nil, err
	}
	return out, nil
}

// withTopicDefaults adds the overrides weir gives a new topic: with
// replication factor 3 or more, min.insync.replicas=2 unless the request
// or the broker configuration sets it (docs/DESIGN.md "Defaults").
func withTopicDefaults(cfg *config.Broker, rf int16, overrides map[string]string) map[string]string {
	if rf < 3 {
		return overrides
	}
	if _, ok := overrides["min.insync.replicas"]; ok {
		return overrides
	}
	if _, set := cfg.Value("min.insync.replicas"); set {
		return overrides
	}
	out := maps.Clone(overrides)
	if out == nil {
		out = map[string]string{}
	}
	out["min.insync.replicas"] = "2"
	return out
}

// manualTopicRecords creates topic t on the replica lists the request
// assigns, with Kafka's checks: -1 partitions and replication factor,
// partitions numbered 0..n-1 once each.
func manualTopicRecords(img *Image, t CreatableTopic, overrides map[string]string, id UUID) ([]Record, error) {
	if t.ReplicationFactor != -1 {
		return nil, apiErr(kerr.InvalidRequest, "A manual partition assignment was specified, but replication factor was not set to -1.")
	}
	if t.NumPartitions != -1 {
		return nil, apiErr(kerr.InvalidRequest, "A manual partition assignment was specified, but numPartitions was not set to -1.")
	}
	byIndex := map[int32][]int32{}
	for _, a := range t.Assignments {
		if _, dup := byIndex[a.Partition]; dup {
			return nil, apiErr(kerr.InvalidReplicaAssignment, "Found multiple manual partition assignments for partition %d", a.Partition)
		}
		byIndex[a.Partition] = a.Replicas
	}
	lists := make([][]int32, len(byIndex))
	for i := range lists {
		replicas, ok := byIndex[int32(i)]
		if !ok {
			return nil, apiErr(kerr.InvalidReplicaAssignment, "partitions should be a consecutive 0-based integer sequence")
		}
		lists[i] = replicas
	}
	parts, err := assignedPartitionRecords(img, id, 0, lists, -1)
	if err != nil {
		return nil, err
	}
	recs := []Record{TopicRecord{Name: t.Name, TopicID: id}}
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		recs = append(recs, ConfigRecord{ResourceType: ResourceTopic, ResourceName: t.Name, Name: k, Value: overrides[k]})
	}
	return append(recs, parts...), nil
}

// refuseInternalCreate refuses a CreateTopics of an internal topic, with
// Kafka's answer for the one it reserves (ControllerApis refuses
// __cluster_metadata with INVALID_REQUEST, whether or not it exists).
// weir extends it to __consumer_offsets and __transaction_state, which
// Kafka's controller would create with any partition count: the group and
// transaction coordinators create them, with their own settings, and a
// different partition count would move every group to another partition.
func refuseInternalCreate(name string) error {
	if name == MetadataTopic || IsInternalTopic(name) {
		return apiErr(kerr.InvalidRequest, "Creation of internal topic %s is prohibited.", name)
	}
	return nil
}
