package wire

// IncrementalAlterConfigs (key 44), versions 0-1.
//
// v0 is KIP-339: per config SET (0), DELETE (1), APPEND (2) and SUBTRACT
// (3, the last two for list configs only), with validate_only. v1 flexible
// (KIP-482).
//
// Topic resources only, as AlterConfigs (33_alterconfigs.go, which holds
// the shared planning): the operations are applied to the topic's current
// overrides, the result is validated, and the changes are proposed as
// ConfigRecords. APPEND and SUBTRACT start from the config's effective
// value when the topic has no override. A config named twice in one
// resource gets INVALID_REQUEST, as in Kafka.

import (
	"context"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/config"
)

func (h *BrokerHandler) handleIncrementalAlterConfigs(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.IncrementalAlterConfigsRequest)
	alters := make([]configAlter, len(r.Resources))
	for i, res := range r.Resources {
		alters[i] = configAlter{typ: res.ResourceType, name: res.ResourceName}
		for _, c := range res.Configs {
			alters[i].names = append(alters[i].names, c.Name)
		}
		alters[i].topic = incrementalOverrides(res.Configs)
	}
	return h.alterConfigs(req, alters, r.ValidateOnly, func(errs []error) Response {
		resp := r.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
		resp.Resources = make([]kmsg.IncrementalAlterConfigsResponseResource, len(alters))
		for i, a := range alters {
			out := kmsg.NewIncrementalAlterConfigsResponseResource()
			out.ResourceType, out.ResourceName = a.typ, a.name
			out.ErrorCode, out.ErrorMessage = alterErrorFields(errs[i])
			resp.Resources[i] = out
		}
		return Reply(resp)
	})
}

// incrementalOverrides applies the operations of cs to a topic's current
// overrides.
func incrementalOverrides(cs []kmsg.IncrementalAlterConfigsRequestResourceConfig) func(*config.Broker, map[string]string) (map[string]string, error) {
	return func(cfg *config.Broker, old map[string]string) (map[string]string, error) {
		next := make(map[string]string, len(old)+len(cs))
		for k, v := range old {
			next[k] = v
		}
		seen := map[string]bool{}
		for _, c := range cs {
			if seen[c.Name] {
				return nil, apiErr(kerr.InvalidRequest, "Error due to duplicate config keys")
			}
			seen[c.Name] = true
			if err := applyConfigOp(cfg, old, next, c); err != nil {
				return nil, err
			}
		}
		return next, nil
	}
}

// applyConfigOp applies one operation to next.
func applyConfigOp(cfg *config.Broker, old, next map[string]string, c kmsg.IncrementalAlterConfigsRequestResourceConfig) error {
	switch c.Op {
	case kmsg.IncrementalAlterConfigOpSet:
		if c.Value == nil {
			return apiErr(kerr.InvalidConfig, "Null value not supported for topic configs: %s", c.Name)
		}
		next[c.Name] = *c.Value
	case kmsg.IncrementalAlterConfigOpDelete:
		delete(next, c.Name)
	case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
		e, ok := config.LookupTopic(c.Name)
		if !ok {
			return apiErr(kerr.InvalidConfig, "Unknown topic config name: %s", c.Name)
		}
		if e.Type != config.TypeList {
			return apiErr(kerr.InvalidConfig, "Can't %s to key %s because its type is not LIST.", opName(c.Op), c.Name)
		}
		current, err := currentListValue(cfg, old, next, c.Name)
		if err != nil {
			return err
		}
		next[c.Name] = strings.Join(changeList(current, splitValues(c.Value), c.Op == kmsg.IncrementalAlterConfigOpAppend), ",")
	default:
		return apiErr(kerr.InvalidRequest, "Unknown alter config operation type %d", int8(c.Op))
	}
	return nil
}

func opName(op kmsg.IncrementalAlterConfigOp) string {
	if op == kmsg.IncrementalAlterConfigOpAppend {
		return "APPEND"
	}
	return "SUBTRACT"
}

// currentListValue is the elements of a list config before an APPEND or
// SUBTRACT: the override being built, else the topic's effective value.
func currentListValue(cfg *config.Broker, old, next map[string]string, name string) ([]string, error) {
	if v, ok := next[name]; ok {
		return splitValues(&v), nil
	}
	resolved, err := cfg.ResolveTopic(old)
	if err != nil {
		return nil, err
	}
	for _, r := range resolved {
		if r.Name == name && !r.Null {
			return splitValues(&r.Value), nil
		}
	}
	return nil, nil
}

// changeList appends the values missing from list, or removes values from
// it.
func changeList(list, values []string, add bool) []string {
	out := slices.Clone(list)
	for _, v := range values {
		switch {
		case add && !slices.Contains(out, v):
			out = append(out, v)
		case !add:
			out = slices.DeleteFunc(out, func(x string) bool { return x == v })
		}
	}
	return out
}

// splitValues splits a list value at commas, trimming blanks and dropping
// empty elements.
func splitValues(s *string) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, p := range strings.Split(*s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
