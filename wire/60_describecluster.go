package wire

// DescribeCluster (key 60), versions 0-1.
//
// v0 is KIP-700: the brokers, cluster id and controller id that Metadata
// also carries, without topics (always flexible). v1 endpoint_type
// (KIP-919): 1 describes brokers; 2 (controllers) is for controller
// endpoints, which a broker answers with UNSUPPORTED_ENDPOINT_TYPE as
// Kafka's brokers do. v2 (include_fenced_brokers, KIP-1073) is not served.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// endpointTypeBrokers is DescribeCluster's endpoint type for brokers.
const endpointTypeBrokers = 1

func (h *BrokerHandler) handleDescribeCluster(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.DescribeClusterRequest)
	img := h.broker.Image()
	resp := r.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.EndpointType = endpointTypeBrokers
	resp.ClusterID = img.ClusterID()
	resp.ControllerID = controllerID(img)
	resp.ClusterAuthorizedOperations = authorizedOpsOmitted
	if r.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = clusterAuthorizedOps
	}
	resp.Brokers = []kmsg.DescribeClusterResponseBroker{}
	if r.Version >= 1 && r.EndpointType != endpointTypeBrokers {
		h.log.Info("describe cluster refused", "client", req.ClientID, "endpoint_type", r.EndpointType)
		msg := "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER"
		resp.ErrorCode, resp.ErrorMessage = kerr.UnsupportedEndpointType.Code, &msg
		return Reply(resp)
	}
	for _, b := range metadataBrokers(img) {
		out := kmsg.NewDescribeClusterResponseBroker()
		out.NodeID, out.Host, out.Port, out.Rack = b.NodeID, b.Host, b.Port, b.Rack
		resp.Brokers = append(resp.Brokers, out)
	}
	return Reply(resp)
}
