package metadata

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// autoCreateTopics creates the named topics that do not exist in img, as
// Kafka's AutoTopicCreationManager would: __consumer_offsets with the
// offsets.topic.* settings and compacted configs, any other topic with
// num.partitions and default.replication.factor. One request creates at
// most one bounded operation's worth of topics (OpBudget), in request
// order; the rest are answered LEADER_NOT_AVAILABLE and created by the
// client's retries, where Kafka's controller would refuse the whole
// creation. __transaction_state is not auto-created: its coordinator
// creates it (weir has none yet).
func (c *Controller) autoCreateTopics(img *Image, r *AutoCreateTopicsRequest) (*AutoCreateTopicsResult, []Record) {
	res := &AutoCreateTopicsResult{Topics: make([]TopicError, len(r.Names))}
	var recs []Record
	var budget OpBudget
	cur := img
	full := false
	for i, name := range r.Names {
		res.Topics[i].Name = name
		if _, ok := cur.Topic(name); ok {
			continue
		}
		if full {
			res.Topics[i].Error = apiErr(kerr.LeaderNotAvailable, "Not created by this request; retry.")
			continue
		}
		topicRecs, err := c.autoCreateRecords(cur, name)
		var next *Image
		if err == nil {
			next, err = dryRun(cur, topicRecs)
		}
		if err != nil {
			res.Topics[i].Error = ErrorOf(err)
			if errors.Is(err, ErrInvalidReplicationFactor) && c.Voters > 1 {
				// A forming cluster: fewer brokers registered than the
				// default factor needs. The client's retry creates the
				// topic once they are.
				res.Topics[i].Error = apiErr(kerr.LeaderNotAvailable, "Waiting for enough brokers to register: %s", res.Topics[i].Error.Message)
			}
			continue
		}
		if !budget.Add(topicRecs) {
			// One operation is bounded (MaxRecordsPerOp, MaxOpBytes): the
			// topics left are created by the client's retry.
			full = true
			res.Topics[i].Error = apiErr(kerr.LeaderNotAvailable, "Not created by this request; retry.")
			continue
		}
		cur = next
		recs = append(recs, topicRecs...)
	}
	return res, recs
}

// autoCreateRecords returns the records that auto-create topic name.
func (c *Controller) autoCreateRecords(img *Image, name string) ([]Record, error) {
	if name == TransactionStateTopic {
		return nil, apiErr(kerr.UnknownTopicOrPartition, "%s is not auto-created", name)
	}
	id, err := c.newTopicID(img)
	if err != nil {
		return nil, err
	}
	brokers := c.defaultFactorBase(img)
	if name == ConsumerOffsetsTopic {
		// Kafka's GroupCoordinator.offsetsTopicConfigs, with
		// offsets.topic.segment.bytes at its default.
		configs := map[string]string{"cleanup.policy": "compact", "compression.type": "producer", "segment.bytes": "104857600"}
		return NewTopicRecords(img, name, int32(c.Config.Int("offsets.topic.num.partitions")),
			c.Config.OffsetsTopicReplicationFactor(brokers), configs, nil, id)
	}
	rf := c.Config.DefaultReplicationFactor(brokers)
	return NewTopicRecords(img, name, int32(c.Config.Int("num.partitions")), rf,
		withTopicDefaults(c.Config, rf, nil), nil, id)
}
