package wire

// DeleteTopics (key 20), versions 1-6.
//
// v1 throttle time. v3 TOPIC_DELETION_DISABLED when delete.topic.enable is
// false (INVALID_REQUEST before v3, as Kafka answers). v4 flexible
// (KIP-482). v5 error messages and quota errors (KIP-599; weir has no
// quotas). v6 topics by name or id (KIP-516). v0 is not advertised (Kafka
// 4.0 removed it, KIP-896).
//
// The request goes to the controller as a metadata.DeleteTopicsRequest
// (cluster/metadata/delete_topics.go decides it: internal topics are
// refused with INVALID_TOPIC_EXCEPTION; weir's metadata log is no topic,
// so asking for it finds nothing). The valid deletions are one batch;
// timeout_ms bounds the wait for it to apply.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
)

func (h *BrokerHandler) handleDeleteTopics(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.DeleteTopicsRequest)
	dreq := &metadata.DeleteTopicsRequest{Topics: deleteQueries(r)}
	return Defer(func(ctx context.Context) Response {
		pctx, cancel := proposeContext(ctx, r.TimeoutMillis)
		defer cancel()
		res, err := askController[*metadata.DeleteTopicsResult](pctx, h.broker, dreq)
		if err != nil {
			h.log.Info("delete topics not applied", "client", req.ClientID, "err", err)
		}
		return Reply(deleteTopicsResponse(r, res))
	})
}

// deleteTopicsResponse encodes the controller's result: before v3 a
// refusal because deletion is disabled is INVALID_REQUEST, as in Kafka.
func deleteTopicsResponse(r *kmsg.DeleteTopicsRequest, res *metadata.DeleteTopicsResult) *kmsg.DeleteTopicsResponse {
	resp := r.ResponseKind().(*kmsg.DeleteTopicsResponse)
	resp.Topics = make([]kmsg.DeleteTopicsResponseTopic, len(res.Topics))
	for i, t := range res.Topics {
		out := kmsg.NewDeleteTopicsResponseTopic()
		out.Topic, out.TopicID = t.Name, t.ID
		e := t.Error
		if e.Code == kerr.TopicDeletionDisabled.Code && r.Version < 3 {
			e.Code = kerr.InvalidRequest.Code
		}
		out.ErrorCode, out.ErrorMessage = errorFields(e)
		resp.Topics[i] = out
	}
	return resp
}

// deleteQueries lists the topics r names: TopicNames before v6, Topics
// (name or id) from v6.
func deleteQueries(r *kmsg.DeleteTopicsRequest) []metadata.TopicRef {
	var out []metadata.TopicRef
	if r.Version < 6 {
		for _, n := range r.TopicNames {
			out = append(out, metadata.TopicRef{Name: &n})
		}
		return out
	}
	for _, t := range r.Topics {
		out = append(out, metadata.TopicRef{Name: t.Topic, ID: t.TopicID})
	}
	return out
}
