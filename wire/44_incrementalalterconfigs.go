package wire

// IncrementalAlterConfigs (key 44), versions 0-1.
//
// v0 is KIP-339: per config SET (0), DELETE (1), APPEND (2) and SUBTRACT
// (3, the last two for list configs only), with validate_only. v1 flexible
// (KIP-482).
//
// Topic resources only, as AlterConfigs (33_alterconfigs.go, which holds
// the shared round trip); the controller (cluster/metadata/alter_configs.go)
// applies the operations to the topic's current overrides, validates the
// result and proposes the changes as ConfigRecords. APPEND and SUBTRACT
// start from the config's effective value when the topic has no override.
// A config named twice in one resource gets INVALID_REQUEST, as in Kafka.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
)

func (h *BrokerHandler) handleIncrementalAlterConfigs(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.IncrementalAlterConfigsRequest)
	areq := &metadata.AlterConfigsRequest{Node: h.broker.NodeID(), Incremental: true, ValidateOnly: r.ValidateOnly,
		Resources: make([]metadata.AlterConfigsResource, len(r.Resources))}
	for i, res := range r.Resources {
		a := metadata.AlterConfigsResource{Type: int8(res.ResourceType), Name: res.ResourceName}
		for _, c := range res.Configs {
			a.Configs = append(a.Configs, metadata.ConfigChange{Name: c.Name, Op: int8(c.Op), Value: c.Value})
		}
		areq.Resources[i] = a
	}
	return h.alterConfigs(req, areq, func(res *metadata.AlterConfigsResult) Response {
		resp := r.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
		resp.Resources = make([]kmsg.IncrementalAlterConfigsResponseResource, len(res.Resources))
		for i, a := range res.Resources {
			out := kmsg.NewIncrementalAlterConfigsResponseResource()
			out.ResourceType, out.ResourceName = kmsg.ConfigResourceType(a.Type), a.Name
			out.ErrorCode, out.ErrorMessage = errorFields(a.Error)
			resp.Resources[i] = out
		}
		return Reply(resp)
	})
}
