package wire

// AlterConfigs (key 33), versions 0-2.
//
// v0 is KIP-133: replace a resource's whole set of overrides, with
// validate_only. v1 throttle time. v2 flexible (KIP-482). Kafka deprecates
// it for IncrementalAlterConfigs (44, KIP-339), which shares this file's
// round trip.
//
// The request goes to the controller as a metadata.AlterConfigsRequest
// (cluster/metadata/alter_configs.go decides it): topic resources only,
// the request's configs become the topic's overrides (those it leaves out
// are removed), validated with cluster/config's ValidateTopicConfigs
// (INVALID_CONFIG), proposed as ConfigRecords (the partition actors
// learning the new values is the cluster's job). weir serves no dynamic
// broker configs, so a broker resource that names this broker or the
// cluster default and changes anything gets INVALID_REQUEST with Kafka's
// "Cannot update these configs dynamically" message; other resource types
// get INVALID_REQUEST. All valid resources of a request change in one
// batch.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
)

func (h *BrokerHandler) handleAlterConfigs(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.AlterConfigsRequest)
	areq := &metadata.AlterConfigsRequest{Node: h.broker.NodeID(), ValidateOnly: r.ValidateOnly,
		Resources: make([]metadata.AlterConfigsResource, len(r.Resources))}
	for i, res := range r.Resources {
		a := metadata.AlterConfigsResource{Type: int8(res.ResourceType), Name: res.ResourceName}
		for _, c := range res.Configs {
			a.Configs = append(a.Configs, metadata.ConfigChange{Name: c.Name, Value: c.Value})
		}
		areq.Resources[i] = a
	}
	return h.alterConfigs(req, areq, func(res *metadata.AlterConfigsResult) Response {
		resp := r.ResponseKind().(*kmsg.AlterConfigsResponse)
		resp.Resources = make([]kmsg.AlterConfigsResponseResource, len(res.Resources))
		for i, a := range res.Resources {
			out := kmsg.NewAlterConfigsResponseResource()
			out.ResourceType, out.ResourceName = kmsg.ConfigResourceType(a.Type), a.Name
			out.ErrorCode, out.ErrorMessage = errorFields(a.Error)
			resp.Resources[i] = out
		}
		return Reply(resp)
	})
}

// alterConfigs asks the controller for areq; answer builds the response
// from its result.
func (h *BrokerHandler) alterConfigs(req *Request, areq *metadata.AlterConfigsRequest, answer func(*metadata.AlterConfigsResult) Response) Response {
	return Defer(func(ctx context.Context) Response {
		res, err := askController[*metadata.AlterConfigsResult](ctx, h.broker, areq)
		if err != nil {
			h.log.Info("config changes not applied", "client", req.ClientID, "err", err)
		}
		for _, a := range res.Resources {
			if a.Error.Failed() {
				h.log.Info("config change refused", "client", req.ClientID, "type", kmsg.ConfigResourceType(a.Type),
					"name", a.Name, "err", a.Error)
			}
		}
		return answer(res)
	})
}
