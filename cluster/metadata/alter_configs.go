package metadata

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/config"
)

// alterConfigs decides every resource of r against img and returns its
// result and the records of the valid changes. Topic resources only: the
// topic's new overrides (AlterConfigs: the request's configs, those left
// out removed; IncrementalAlterConfigs: the operations applied to the
// current ones) are validated with the config table (INVALID_CONFIG) and
// proposed as ConfigRecords. weir serves no dynamic broker configs: a
// broker resource that names the receiving broker or the cluster default
// and changes anything gets INVALID_REQUEST with Kafka's "Cannot update
// these configs dynamically"; other resource types get INVALID_REQUEST.
func (c *Controller) alterConfigs(img *Image, r *AlterConfigsRequest) (*AlterConfigsResult, []Record) {
	type key struct {
		typ  int8
		name string
	}
	count := map[key]int{}
	for _, a := range r.Resources {
		count[key{a.Type, a.Name}]++
	}
	res := &AlterConfigsResult{Resources: make([]ResourceError, len(r.Resources))}
	var recs []Record
	cur := img
	for i, a := range r.Resources {
		res.Resources[i] = ResourceError{Type: a.Type, Name: a.Name}
		if count[key{a.Type, a.Name}] > 1 {
			res.Resources[i].Error = apiErr(kerr.InvalidRequest, "Duplicate resource.")
			continue
		}
		rs, err := c.alterRecords(cur, r, a)
		if err == nil {
			cur, err = dryRun(cur, rs)
		}
		if res.Resources[i].Error = ErrorOf(err); err == nil {
			recs = append(recs, rs...)
		}
	}
	return res, recs
}

// alterRecords returns the records of one resource's change.
func (c *Controller) alterRecords(img *Image, r *AlterConfigsRequest, a AlterConfigsResource) ([]Record, error) {
	switch kmsg.ConfigResourceType(a.Type) {
	case kmsg.ConfigResourceTypeTopic:
		if err := ValidateTopicName(a.Name); err != nil {
			return nil, err
		}
		if _, ok := img.Topic(a.Name); !ok {
			return nil, apiErr(kerr.UnknownTopicOrPartition, "%s", kerr.UnknownTopicOrPartition.Description)
		}
		old := img.Config(TopicResource(a.Name))
		var next map[string]string
		var err error
		if r.Incremental {
			next, err = incrementalOverrides(c.Config, old, a.Configs)
		} else {
			next, err = replacedOverrides(a.Configs)
		}
		if err != nil {
			return nil, err
		}
		if err := config.ValidateTopicConfigs(next); err != nil {
			return nil, err
		}
		recs := configDiffRecords(a.Name, old, next)
		if len(recs) > 0 {
			recs = append(recs, c.minISRChanges(img, a.Name, next)...)
		}
		return recs, nil
	case kmsg.ConfigResourceTypeBroker:
		if err := checkBrokerResource(a.Name, r.Node); err != nil {
			return nil, err
		}
		if len(a.Configs) > 0 {
			names := make([]string, len(a.Configs))
			for i, c := range a.Configs {
				names[i] = c.Name
			}
			return nil, apiErr(kerr.InvalidRequest, "Cannot update these configs dynamically: Set(%s)", strings.Join(names, ", "))
		}
		return nil, nil
	}
	return nil, apiErr(kerr.InvalidRequest, "Unexpected resource type %s.", kmsg.ConfigResourceType(a.Type))
}

// minISRChanges returns the partition changes of topic that its new
// overrides next call for: where the ISR has at least the new
// min.insync.replicas, the ELR and LastKnownELR are emptied (KIP-966), as
// a shrink of the ISR to that size would have left them; from then on the
// high watermark moves again and they would no longer hold every
// committed record. (A higher min.insync.replicas fills no ELR: the
// replicas outside the ISR may lack records committed before.)
func (c *Controller) minISRChanges(img *Image, topic string, next map[string]string) []Record {
	t, ok := img.Topic(topic)
	if !ok {
		return nil
	}
	minISR := max(c.minISRDefault(), 1)
	if v, ok := next["min.insync.replicas"]; ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
			minISR = max(n, 1)
		}
	}
	var recs []Record
	for p := range t.partitions.all() {
		if len(p.ISR) < minISR || len(p.ELR)+len(p.LastKnownELR) == 0 {
			continue
		}
		if rec, ok := changeTo(*p, LeaderNoChange, nil, minISR, -1); ok {
			recs = append(recs, rec)
		}
	}
	return recs
}

// checkBrokerResource checks that a broker resource names node, or is ""
// (the cluster default), with Kafka's messages.
func checkBrokerResource(name string, node int32) error {
	if name == "" {
		return nil
	}
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return apiErr(kerr.InvalidRequest, "Broker id must be an integer, but it is: %s", name)
	}
	if int32(id) != node {
		return apiErr(kerr.InvalidRequest, "Unexpected broker id, expected %d or empty string, but received %s", node, name)
	}
	return nil
}

// replacedOverrides is AlterConfigs' change of a topic's overrides: the
// request's configs replace them all.
func replacedOverrides(cs []ConfigChange) (map[string]string, error) {
	return nonNullConfigs(len(cs), func(i int) (string, *string) { return cs[i].Name, cs[i].Value })
}

// nonNullConfigs collects n configs, config(i) giving the name and value
// of the i-th, into a map (the last of a repeated name wins); a null value
// is refused as Kafka refuses it for topic configs.
func nonNullConfigs(n int, config func(i int) (string, *string)) (map[string]string, error) {
	out := make(map[string]string, n)
	var nulls []string
	for i := range n {
		name, value := config(i)
		if value == nil {
			nulls = append(nulls, name)
			continue
		}
		out[name] = *value
	}
	if len(nulls) > 0 {
		return nil, apiErr(kerr.InvalidConfig, "Null value not supported for topic configs: %s", strings.Join(nulls, ","))
	}
	return out, nil
}

// incrementalOverrides applies the operations of cs to a topic's current
// overrides old. APPEND and SUBTRACT start from the config's effective
// value when the topic has no override; a config named twice gets
// INVALID_REQUEST, as in Kafka.
func incrementalOverrides(cfg *config.Broker, old map[string]string, cs []ConfigChange) (map[string]string, error) {
	next := maps.Clone(old)
	if next == nil {
		next = make(map[string]string, len(cs))
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

// applyConfigOp applies one operation to next.
func applyConfigOp(cfg *config.Broker, old, next map[string]string, c ConfigChange) error {
	switch c.Op {
	case OpSet:
		if c.Value == nil {
			return apiErr(kerr.InvalidConfig, "Null value not supported for topic configs: %s", c.Name)
		}
		next[c.Name] = *c.Value
	case OpDelete:
		delete(next, c.Name)
	case OpAppend, OpSubtract:
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
		next[c.Name] = strings.Join(changeList(current, splitValues(c.Value), c.Op == OpAppend), ",")
	default:
		return apiErr(kerr.InvalidRequest, "Unknown alter config operation type %d", c.Op)
	}
	return nil
}

func opName(op int8) string {
	if op == OpAppend {
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

// configDiffRecords returns the ConfigRecords that turn topic's overrides
// old into next, by key.
func configDiffRecords(topic string, old, next map[string]string) []Record {
	var recs []Record
	for _, k := range slices.Sorted(maps.Keys(next)) {
		if v, ok := old[k]; !ok || v != next[k] {
			recs = append(recs, ConfigRecord{ResourceType: ResourceTopic, ResourceName: topic, Name: k, Value: next[k]})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(old)) {
		if _, ok := next[k]; !ok {
			recs = append(recs, ConfigRecord{ResourceType: ResourceTopic, ResourceName: topic, Name: k, Remove: true})
		}
	}
	return recs
}
