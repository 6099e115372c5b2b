package wire

// AlterConfigs (key 33), versions 0-2.
//
// v0 is KIP-133: replace a resource's whole set of overrides, with
// validate_only. v1 throttle time. v2 flexible (KIP-482). Kafka deprecates
// it for IncrementalAlterConfigs (44, KIP-339), which shares this file's
// planning.
//
// Topic resources only: the request's configs become the topic's
// overrides (those it leaves out are removed), validated with
// cluster/config's ValidateTopicConfigs (INVALID_CONFIG), and the changes
// are proposed as ConfigRecords (the partition actors learning the new
// values is the cluster's job). weir serves no dynamic broker configs, so a
// broker resource that names this broker or the cluster default and
// changes anything gets INVALID_REQUEST with Kafka's "Cannot update these
// configs dynamically" message; other resource types get INVALID_REQUEST.
// All valid resources of a request change in one proposal.

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/cluster/metadata"
)

func (h *BrokerHandler) handleAlterConfigs(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.AlterConfigsRequest)
	alters := make([]configAlter, len(r.Resources))
	for i, res := range r.Resources {
		alters[i] = configAlter{typ: res.ResourceType, name: res.ResourceName}
		for _, c := range res.Configs {
			alters[i].names = append(alters[i].names, c.Name)
		}
		alters[i].topic = replaceOverrides(res.Configs)
	}
	return h.alterConfigs(req, alters, r.ValidateOnly, func(errs []error) Response {
		resp := r.ResponseKind().(*kmsg.AlterConfigsResponse)
		resp.Resources = make([]kmsg.AlterConfigsResponseResource, len(alters))
		for i, a := range alters {
			out := kmsg.NewAlterConfigsResponseResource()
			out.ResourceType, out.ResourceName = a.typ, a.name
			out.ErrorCode, out.ErrorMessage = alterErrorFields(errs[i])
			resp.Resources[i] = out
		}
		return Reply(resp)
	})
}

// replaceOverrides is AlterConfigs' change of a topic's overrides: the
// request's configs replace them all.
func replaceOverrides(cs []kmsg.AlterConfigsRequestResourceConfig) func(*config.Broker, map[string]string) (map[string]string, error) {
	return func(*config.Broker, map[string]string) (map[string]string, error) {
		out := make(map[string]string, len(cs))
		var nulls []string
		for _, c := range cs {
			if c.Value == nil {
				nulls = append(nulls, c.Name)
				continue
			}
			out[c.Name] = *c.Value
		}
		if len(nulls) > 0 {
			return nil, apiErr(kerr.InvalidConfig, "Null value not supported for topic configs: %s", strings.Join(nulls, ","))
		}
		return out, nil
	}
}

// configAlter is one resource of an AlterConfigs or
// IncrementalAlterConfigs request.
type configAlter struct {
	typ  kmsg.ConfigResourceType
	name string
	// names are the configs the request changes.
	names []string
	// topic computes a topic's new overrides from its current ones.
	topic func(cfg *config.Broker, old map[string]string) (map[string]string, error)
}

// alterConfigs plans alters against the latest image and, unless
// validateOnly, proposes the changes; answer builds the response from the
// error of each resource (nil for success).
func (h *BrokerHandler) alterConfigs(req *Request, alters []configAlter, validateOnly bool, answer func([]error) Response) Response {
	if validateOnly {
		errs, _ := h.planAlters(h.broker.Image(), alters)
		h.logAlterErrors(req, alters, errs)
		return answer(errs)
	}
	return Defer(func(ctx context.Context) Response {
		var errs []error
		_, err := h.broker.Propose(ctx, func(img *metadata.Image) ([]metadata.Record, error) {
			var recs []metadata.Record
			errs, recs = h.planAlters(img, alters)
			return recs, nil
		})
		if err != nil {
			h.log.Info("config changes not applied", "client", req.ClientID, "err", err)
			if errs == nil { // the proposal was never built
				errs = make([]error, len(alters))
			}
			for i := range errs {
				if errs[i] == nil {
					errs[i] = err
				}
			}
		}
		h.logAlterErrors(req, alters, errs)
		return answer(errs)
	})
}

func (h *BrokerHandler) logAlterErrors(req *Request, alters []configAlter, errs []error) {
	for i, err := range errs {
		if err != nil {
			h.log.Info("config change refused", "client", req.ClientID, "type", alters[i].typ,
				"name", alters[i].name, "err", err)
		}
	}
}

// planAlters decides every resource against img and returns its error (nil
// when valid) and the records of the valid changes.
func (h *BrokerHandler) planAlters(img *metadata.Image, alters []configAlter) ([]error, []metadata.Record) {
	type key struct {
		typ  kmsg.ConfigResourceType
		name string
	}
	count := map[key]int{}
	for _, a := range alters {
		count[key{a.typ, a.name}]++
	}
	errs := make([]error, len(alters))
	var recs []metadata.Record
	cur := img
	for i, a := range alters {
		if count[key{a.typ, a.name}] > 1 {
			errs[i] = apiErr(kerr.InvalidRequest, "Duplicate resource.")
			continue
		}
		rs, err := h.alterRecords(cur, a)
		if err == nil {
			cur, err = dryRun(cur, rs)
		}
		if errs[i] = err; err == nil {
			recs = append(recs, rs...)
		}
	}
	return errs, recs
}

// alterRecords returns the records of one resource's change.
func (h *BrokerHandler) alterRecords(img *metadata.Image, a configAlter) ([]metadata.Record, error) {
	switch a.typ {
	case kmsg.ConfigResourceTypeTopic:
		if err := metadata.ValidateTopicName(a.name); err != nil {
			return nil, err
		}
		if _, ok := img.Topic(a.name); !ok {
			return nil, apiErr(kerr.UnknownTopicOrPartition, "%s", kerr.UnknownTopicOrPartition.Description)
		}
		old := img.Config(metadata.TopicResource(a.name))
		next, err := a.topic(h.broker.Config(), old)
		if err != nil {
			return nil, err
		}
		if err := config.ValidateTopicConfigs(next); err != nil {
			return nil, err
		}
		return configDiffRecords(a.name, old, next), nil
	case kmsg.ConfigResourceTypeBroker:
		if err := h.checkBrokerResource(a.name, true); err != nil {
			return nil, err
		}
		if len(a.names) > 0 {
			return nil, apiErr(kerr.InvalidRequest, "Cannot update these configs dynamically: Set(%s)", strings.Join(a.names, ", "))
		}
		return nil, nil
	}
	return nil, apiErr(kerr.InvalidRequest, "Unexpected resource type %s.", a.typ)
}

// configDiffRecords returns the ConfigRecords that turn topic's overrides
// old into next, by key.
func configDiffRecords(topic string, old, next map[string]string) []metadata.Record {
	var recs []metadata.Record
	for _, k := range slices.Sorted(maps.Keys(next)) {
		if v, ok := old[k]; !ok || v != next[k] {
			recs = append(recs, metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, ResourceName: topic, Name: k, Value: next[k]})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(old)) {
		if _, ok := next[k]; !ok {
			recs = append(recs, metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, ResourceName: topic, Name: k, Remove: true})
		}
	}
	return recs
}

// alterErrorFields is a resource's error code and message.
func alterErrorFields(err error) (int16, *string) {
	if err == nil {
		return 0, nil
	}
	ke := adminError(err)
	return ke.Code, &ke.Message
}
