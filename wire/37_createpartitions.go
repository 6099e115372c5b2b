package wire

// CreatePartitions (key 37), versions 0-3.
//
// v0 is KIP-195: grow a topic to a total count, optionally placing the new
// partitions' replicas, with validate_only. v1 throttle time. v2 flexible
// (KIP-482). v3 quota errors (KIP-599; weir has no quotas).
//
// New partitions get the replication factor of partition 0, placed as
// CreateTopics places them, or on the replicas the request assigns (checked
// as Kafka's controller checks a manual assignment). The valid topics of a
// request grow in one proposal; timeout_ms bounds the wait for it.
// Internal topics do not grow (INVALID_TOPIC_EXCEPTION, as Kafka refuses
// other writes to them; its controller would grow them): a group's
// __consumer_offsets partition is its id's hash modulo the count, so a
// new count would leave committed offsets where no coordinator looks.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
)

func (h *BrokerHandler) handleCreatePartitions(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.CreatePartitionsRequest)
	if addedPartitions(h.broker.Image(), r) > maxPartitionsPerRequest {
		h.log.Info("create partitions refused", "client", req.ClientID, "reason", "too many partitions")
		results := make([]kmsg.CreatePartitionsResponseTopic, len(r.Topics))
		for i, t := range r.Topics {
			results[i] = createPartitionsResult(t.Topic, errTooManyPartitions)
		}
		return Reply(createPartitionsResponse(r, results))
	}
	if r.ValidateOnly {
		results, _ := planCreatePartitions(h.broker.Image(), r)
		return Reply(createPartitionsResponse(r, results))
	}
	return Defer(func(ctx context.Context) Response {
		pctx, cancel := proposeContext(ctx, r.TimeoutMillis)
		defer cancel()
		var results []kmsg.CreatePartitionsResponseTopic
		_, err := h.broker.Propose(pctx, func(img *metadata.Image) ([]metadata.Record, error) {
			var recs []metadata.Record
			results, recs = planCreatePartitions(img, r)
			return recs, nil
		})
		if err != nil {
			h.log.Info("create partitions not applied", "client", req.ClientID, "err", err)
			if results == nil { // the proposal was never built
				for _, t := range r.Topics {
					results = append(results, createPartitionsResult(t.Topic, nil))
				}
			}
			for i := range results {
				if results[i].ErrorCode == 0 {
					results[i] = createPartitionsResult(results[i].Topic, err)
				}
			}
		}
		return Reply(createPartitionsResponse(r, results))
	})
}

// addedPartitions counts the partitions r would add to the topics of img.
func addedPartitions(img *metadata.Image, r *kmsg.CreatePartitionsRequest) int64 {
	var n int64
	for _, t := range r.Topics {
		if top, ok := img.Topic(t.Topic); ok && t.Count > top.NumPartitions() {
			n += int64(t.Count - top.NumPartitions())
		}
	}
	return n
}

func createPartitionsResponse(r *kmsg.CreatePartitionsRequest, results []kmsg.CreatePartitionsResponseTopic) *kmsg.CreatePartitionsResponse {
	resp := r.ResponseKind().(*kmsg.CreatePartitionsResponse)
	resp.Topics = results
	if resp.Topics == nil {
		resp.Topics = []kmsg.CreatePartitionsResponseTopic{}
	}
	return resp
}

// planCreatePartitions decides every topic of r against img and returns
// each result in request order and the records that grow the valid ones.
func planCreatePartitions(img *metadata.Image, r *kmsg.CreatePartitionsRequest) ([]kmsg.CreatePartitionsResponseTopic, []metadata.Record) {
	count := map[string]int{}
	for _, t := range r.Topics {
		count[t.Topic]++
	}
	results := make([]kmsg.CreatePartitionsResponseTopic, 0, len(r.Topics))
	var recs []metadata.Record
	cur := img
	for _, t := range r.Topics {
		var err error
		var rs []metadata.Record
		if count[t.Topic] > 1 {
			err = apiErr(kerr.InvalidRequest, "Duplicate topic name.")
		} else if rs, err = growRecords(cur, t); err == nil {
			cur, err = dryRun(cur, rs)
		}
		if err == nil {
			recs = append(recs, rs...)
		}
		results = append(results, createPartitionsResult(t.Topic, err))
	}
	return results, recs
}

// growRecords returns the records that grow topic t.Topic to t.Count
// partitions.
func growRecords(img *metadata.Image, t kmsg.CreatePartitionsRequestTopic) ([]metadata.Record, error) {
	top, ok := img.Topic(t.Topic)
	if !ok {
		return nil, apiErr(kerr.UnknownTopicOrPartition, "%s", kerr.UnknownTopicOrPartition.Description)
	}
	if top.Internal() {
		return nil, apiErr(kerr.InvalidTopicException, "Cannot add partitions to internal topic %s.", t.Topic)
	}
	current := top.NumPartitions()
	switch {
	case t.Count < current:
		return nil, apiErr(kerr.InvalidPartitions, "The topic %s currently has %d partition(s); %d would not be an increase.", t.Topic, current, t.Count)
	case t.Count == current:
		return nil, apiErr(kerr.InvalidPartitions, "Topic already has %d partition(s).", current)
	case int64(t.Count-current) > maxPartitionsPerRequest:
		return nil, errTooManyPartitions
	case t.Assignment == nil:
		return metadata.AddPartitionRecords(img, t.Topic, t.Count, nil)
	}
	if add := int(t.Count - current); len(t.Assignment) != add {
		return nil, apiErr(kerr.InvalidReplicaAssignment, "Attempted to add %d additional partition(s), but only %d assignment(s) were specified.", add, len(t.Assignment))
	}
	lists := make([][]int32, len(t.Assignment))
	for i, a := range t.Assignment {
		lists[i] = a.Replicas
	}
	p0, _ := top.Partition(0)
	return assignedPartitionRecords(img, top.ID(), current, lists, len(p0.Replicas))
}

func createPartitionsResult(topic string, err error) kmsg.CreatePartitionsResponseTopic {
	res := kmsg.NewCreatePartitionsResponseTopic()
	res.Topic = topic
	if err != nil {
		ke := adminError(err)
		res.ErrorCode, res.ErrorMessage = ke.Code, &ke.Message
	}
	return res
}
