package wire

// CreateTopics (key 19), versions 0-7.
//
// v1 validate_only and error messages (KIP-78/KIP-108). v2 throttle time.
// v4 -1 partitions or replication factor means the broker default
// (KIP-464; weir, like Kafka's controller, accepts -1 at every version).
// v5 flexible (KIP-482) and the created topic's partition count,
// replication factor and configs (KIP-525). v6 quota errors (KIP-599; weir
// has no quotas). v7 topic id (KIP-516).
//
// The request goes to the controller as a metadata.CreateTopicsRequest:
// it checks every topic against its latest image, places the partitions
// (cluster/metadata/create_topics.go, placement.go) and creates the valid
// ones in one batch; timeout_ms bounds the wait for it to apply
// (REQUEST_TIMED_OUT after it, though the topics may still be created),
// and 0 or less waits without a deadline. validate_only is decided by the
// controller too, against the same image, without a write.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
)

func (h *BrokerHandler) handleCreateTopics(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.CreateTopicsRequest)
	creq := createTopicsRequest(r)
	return Defer(func(ctx context.Context) Response {
		pctx, cancel := proposeContext(ctx, r.TimeoutMillis)
		defer cancel()
		res, err := askController[*metadata.CreateTopicsResult](pctx, h.broker, creq)
		if err != nil {
			h.log.Info("create topics not applied", "client", req.ClientID, "err", err)
		}
		logCreateErrors(h, req, res)
		return Reply(createTopicsResponse(r, res))
	})
}

// createTopicsRequest is r as the controller takes it.
func createTopicsRequest(r *kmsg.CreateTopicsRequest) *metadata.CreateTopicsRequest {
	out := &metadata.CreateTopicsRequest{Topics: make([]metadata.CreatableTopic, len(r.Topics)), ValidateOnly: r.ValidateOnly}
	for i, t := range r.Topics {
		ct := metadata.CreatableTopic{Name: t.Topic, NumPartitions: t.NumPartitions, ReplicationFactor: t.ReplicationFactor}
		for _, a := range t.ReplicaAssignment {
			ct.Assignments = append(ct.Assignments, metadata.ReplicaAssignment{Partition: a.Partition, Replicas: a.Replicas})
		}
		for _, c := range t.Configs {
			ct.Configs = append(ct.Configs, metadata.ConfigValue{Name: c.Name, Value: c.Value})
		}
		out.Topics[i] = ct
	}
	return out
}

// logCreateErrors writes one line for the topics a request could not
// create.
func logCreateErrors(h *BrokerHandler, req *Request, res *metadata.CreateTopicsResult) {
	var refused []string
	for _, t := range res.Topics {
		if t.Error.Failed() {
			refused = append(refused, fmt.Sprintf("%s: %s (%s)", t.Name, kerr.ErrorForCode(t.Error.Code), t.Error.Message))
		}
	}
	if len(refused) > 0 {
		h.log.Info("create topics refused", "client", req.ClientID, "count", len(refused), "topics", boundedList(refused))
	}
}

// createTopicsResponse encodes the controller's result.
func createTopicsResponse(r *kmsg.CreateTopicsRequest, res *metadata.CreateTopicsResult) *kmsg.CreateTopicsResponse {
	resp := r.ResponseKind().(*kmsg.CreateTopicsResponse)
	resp.Topics = make([]kmsg.CreateTopicsResponseTopic, len(res.Topics))
	for i, t := range res.Topics {
		out := kmsg.NewCreateTopicsResponseTopic()
		out.Topic = t.Name
		if t.Error.Failed() {
			out.ErrorCode, out.ErrorMessage = errorFields(t.Error)
			resp.Topics[i] = out
			continue
		}
		out.TopicID = t.TopicID
		out.NumPartitions, out.ReplicationFactor = t.NumPartitions, t.ReplicationFactor
		out.ConfigErrorCode = t.ConfigErrorCode
		if t.ConfigErrorCode == 0 {
			out.Configs = make([]kmsg.CreateTopicsResponseTopicConfig, len(t.Configs))
			for j, c := range t.Configs {
				e := kmsg.NewCreateTopicsResponseTopicConfig()
				e.Name, e.Value, e.ReadOnly = c.Name, c.Value, c.ReadOnly
				e.Source, e.IsSensitive = c.Source, c.Sensitive
				out.Configs[j] = e
			}
		}
		resp.Topics[i] = out
	}
	return resp
}
