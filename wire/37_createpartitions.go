package wire

// CreatePartitions (key 37), versions 0-3.
//
// v0 is KIP-195: grow a topic to a total count, optionally placing the new
// partitions' replicas, with validate_only. v1 throttle time. v2 flexible
// (KIP-482). v3 quota errors (KIP-599; weir has no quotas).
//
// The request goes to the controller as a
// metadata.CreatePartitionsRequest (cluster/metadata/create_partitions.go
// decides and places it; internal topics do not grow). The valid topics of
// a request grow in one batch; timeout_ms bounds the wait for it.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
)

func (h *BrokerHandler) handleCreatePartitions(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.CreatePartitionsRequest)
	creq := &metadata.CreatePartitionsRequest{Topics: make([]metadata.PartitionsIncrease, len(r.Topics)), ValidateOnly: r.ValidateOnly}
	for i, t := range r.Topics {
		inc := metadata.PartitionsIncrease{Name: t.Topic, Count: t.Count, Assigned: t.Assignment != nil}
		for _, a := range t.Assignment {
			inc.Assignments = append(inc.Assignments, a.Replicas)
		}
		creq.Topics[i] = inc
	}
	return Defer(func(ctx context.Context) Response {
		pctx, cancel := proposeContext(ctx, r.TimeoutMillis)
		defer cancel()
		res, err := askController[*metadata.CreatePartitionsResult](pctx, h.broker, creq)
		if err != nil {
			h.log.Info("create partitions not applied", "client", req.ClientID, "err", err)
		}
		resp := r.ResponseKind().(*kmsg.CreatePartitionsResponse)
		resp.Topics = make([]kmsg.CreatePartitionsResponseTopic, len(res.Topics))
		for i, t := range res.Topics {
			out := kmsg.NewCreatePartitionsResponseTopic()
			out.Topic = t.Name
			out.ErrorCode, out.ErrorMessage = errorFields(t.Error)
			resp.Topics[i] = out
		}
		return Reply(resp)
	})
}
