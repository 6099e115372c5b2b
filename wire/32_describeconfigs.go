package wire

// DescribeConfigs (key 32), versions 1-4.
//
// v1 include_synonyms and config_source (KIP-226; replaces v0's
// is_default, so v0 is not served). v2 throttle time. v3
// include_documentation and config_type (KIP-569). v4 flexible (KIP-482).
//
// A topic resource is described from its overrides in the image resolved
// over the broker's configuration (cluster/config's ResolveTopic): each
// config's value, source (DYNAMIC_TOPIC_CONFIG, STATIC_BROKER_CONFIG,
// DEFAULT_CONFIG), synonyms in Kafka's order, type and documentation. A
// broker resource named by this broker's id gets every broker config
// (Broker.Describe); the empty name asks, as in Kafka, for the cluster-wide
// dynamic defaults only, of which weir has none. Other resource types get
// INVALID_REQUEST, as Kafka answers the types it does not serve.

import (
	"context"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/cluster/metadata"
)

func (h *BrokerHandler) handleDescribeConfigs(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.DescribeConfigsRequest)
	img := h.broker.Image()
	resp := r.ResponseKind().(*kmsg.DescribeConfigsResponse)
	resp.Resources = make([]kmsg.DescribeConfigsResponseResource, 0, len(r.Resources))
	for _, res := range r.Resources {
		out := kmsg.NewDescribeConfigsResponseResource()
		out.ResourceType, out.ResourceName = res.ResourceType, res.ResourceName
		out.Configs = []kmsg.DescribeConfigsResponseResourceConfig{}
		resolved, err := h.describeResource(img, res)
		if err != nil {
			ke := adminError(err)
			out.ErrorCode, out.ErrorMessage = ke.Code, &ke.Message
			h.log.Info("describe configs refused", "client", req.ClientID, "type", res.ResourceType,
				"name", res.ResourceName, "error", ke.Name)
		}
		for _, c := range resolved {
			if len(res.ConfigNames) > 0 && !slices.Contains(res.ConfigNames, c.Name) {
				continue
			}
			out.Configs = append(out.Configs, describedConfig(c, r.IncludeSynonyms, r.IncludeDocumentation))
		}
		resp.Resources = append(resp.Resources, out)
	}
	return Reply(resp)
}

// describeResource resolves every config of res.
func (h *BrokerHandler) describeResource(img *metadata.Image, res kmsg.DescribeConfigsRequestResource) ([]config.Resolved, error) {
	switch res.ResourceType {
	case kmsg.ConfigResourceTypeTopic:
		if err := metadata.ValidateTopicName(res.ResourceName); err != nil {
			return nil, err
		}
		if _, ok := img.Topic(res.ResourceName); !ok {
			return nil, apiErr(kerr.UnknownTopicOrPartition, "%s", kerr.UnknownTopicOrPartition.Description)
		}
		return h.broker.Config().ResolveTopic(img.Config(metadata.TopicResource(res.ResourceName)))
	case kmsg.ConfigResourceTypeBroker:
		if res.ResourceName == "" {
			return nil, nil // the dynamic cluster-wide defaults: none
		}
		if err := h.checkBrokerResource(res.ResourceName, true); err != nil {
			return nil, err
		}
		return h.broker.Config().Describe(), nil
	}
	return nil, apiErr(kerr.InvalidRequest, "Unsupported resource type: %s", res.ResourceType)
}

// checkBrokerResource checks that a broker resource names this broker (or
// the cluster default, "", when orEmpty), with Kafka's messages.
func (h *BrokerHandler) checkBrokerResource(name string, orEmpty bool) error {
	if name == "" && orEmpty {
		return nil
	}
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return apiErr(kerr.InvalidRequest, "Broker id must be an integer, but it is: %s", name)
	}
	if int32(id) != h.broker.NodeID() {
		if orEmpty {
			return apiErr(kerr.InvalidRequest, "Unexpected broker id, expected %d or empty string, but received %s", h.broker.NodeID(), name)
		}
		return apiErr(kerr.InvalidRequest, "Unexpected broker id, expected %d, but received %s", h.broker.NodeID(), name)
	}
	return nil
}

// describedConfig encodes one resolved config.
func describedConfig(c config.Resolved, synonyms, doc bool) kmsg.DescribeConfigsResponseResourceConfig {
	out := kmsg.NewDescribeConfigsResponseResourceConfig()
	out.Name, out.Value = c.Name, resolvedValue(c)
	out.ReadOnly, out.IsSensitive = c.ReadOnly, c.Sensitive
	out.IsDefault = c.Source == config.SourceDefault
	out.Source = kmsg.ConfigSource(c.Source)
	out.ConfigType = kmsg.ConfigType(c.Type)
	out.ConfigSynonyms = []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{}
	if synonyms {
		for _, s := range c.Synonyms {
			syn := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			syn.Name, syn.Source = s.Name, kmsg.ConfigSource(s.Source)
			if !c.Sensitive {
				v := s.Value
				syn.Value = &v
			}
			out.ConfigSynonyms = append(out.ConfigSynonyms, syn)
		}
	}
	if doc && c.Doc != "" {
		d := c.Doc
		out.Documentation = &d
	}
	return out
}
