package config

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/weirmq/weir/log"
)

// Source says where a config's value came from, numbered as Kafka's
// DescribeConfigs v1+ config_source.
type Source int8

// Kafka's config sources.
const (
	SourceUnknown              Source = 0
	SourceDynamicTopic         Source = 1
	SourceDynamicBroker        Source = 2
	SourceDynamicDefaultBroker Source = 3
	SourceStaticBroker         Source = 4
	SourceDefault              Source = 5
	SourceDynamicBrokerLogger  Source = 6
)

// String returns Kafka's name of the source.
func (s Source) String() string {
	switch s {
	case SourceDynamicTopic:
		return "DYNAMIC_TOPIC_CONFIG"
	case SourceDynamicBroker:
		return "DYNAMIC_BROKER_CONFIG"
	case SourceDynamicDefaultBroker:
		return "DYNAMIC_DEFAULT_BROKER_CONFIG"
	case SourceStaticBroker:
		return "STATIC_BROKER_CONFIG"
	case SourceDefault:
		return "DEFAULT_CONFIG"
	case SourceDynamicBrokerLogger:
		return "DYNAMIC_BROKER_LOGGER_CONFIG"
	}
	return "UNKNOWN"
}

// ResolvedSynonym is one candidate value of a config, as DescribeConfigs
// lists it among the synonyms.
type ResolvedSynonym struct {
	// Name is the config that holds the value (the topic config itself or
	// a broker synonym), Value its value in that config's own unit.
	Name, Value string
	Source      Source
}

// Resolved is a config's effective value with everything DescribeConfigs
// v1+ reports about it.
type Resolved struct {
	Name string
	// Value is the effective value in the config's unit; meaningless when
	// Null.
	Value string
	// Null is true when the config has no value (unset, null default) or
	// is sensitive (its value is never returned).
	Null      bool
	Source    Source
	Type      Type
	ReadOnly  bool
	Sensitive bool
	// Synonyms are every candidate value, first wins: the topic override,
	// then each broker synonym in Kafka's order, configured before default.
	Synonyms []ResolvedSynonym
	Doc      string
}

// ResolveTopic returns every topic config's effective value for a topic
// with the given overrides (the topic's configs in the metadata image), in
// table order. Precedence: the override (DYNAMIC_TOPIC_CONFIG), the first
// configured broker synonym (STATIC_BROKER_CONFIG), the first broker
// synonym with a default (DEFAULT_CONFIG), the topic config's own default.
// Invalid overrides fail as ValidateTopicConfigs does.
func (b *Broker) ResolveTopic(overrides map[string]string) ([]Resolved, error) {
	if err := checkTopicKeys(overrides); err != nil {
		return nil, err
	}
	out := make([]Resolved, 0, len(topicTable))
	for _, e := range topicTable {
		r, err := b.resolveTopicEntry(e, overrides)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (b *Broker) resolveTopicEntry(e Entry, overrides map[string]string) (Resolved, error) {
	var syns []ResolvedSynonym
	if v, ok := overrides[e.Name]; ok {
		syns = append(syns, ResolvedSynonym{Name: e.Name, Value: v, Source: SourceDynamicTopic})
	}
	for _, s := range e.Synonyms {
		syns = append(syns, b.brokerCandidates(s.Name)...)
	}
	r := Resolved{Name: e.Name, Type: e.Type, ReadOnly: e.ReadOnly, Sensitive: e.Sensitive,
		Synonyms: syns, Doc: e.Doc, Value: e.Default, Source: SourceDefault}
	if len(syns) > 0 {
		v, err := topicValue(e, syns[0])
		if err != nil {
			return Resolved{}, err
		}
		r.Value, r.Source = v, syns[0].Source
	}
	if r.Sensitive {
		r.Value, r.Null = "", true
	}
	return r, nil
}

// brokerCandidates returns a broker config's configured value, then its
// default, as synonyms.
func (b *Broker) brokerCandidates(name string) []ResolvedSynonym {
	var out []ResolvedSynonym
	if s, ok := b.set[name]; ok {
		out = append(out, ResolvedSynonym{Name: name, Value: s.value, Source: SourceStaticBroker})
	}
	if e, _ := LookupBroker(name); !e.NullDefault {
		out = append(out, ResolvedSynonym{Name: name, Value: e.Default, Source: SourceDefault})
	}
	return out
}

// topicValue converts a winning synonym into the topic config's unit and
// canonical text.
func topicValue(e Entry, s ResolvedSynonym) (string, error) {
	scale := int64(1)
	for _, syn := range e.Synonyms {
		if syn.Name == s.Name {
			scale = syn.Scale
		}
	}
	t := e.Type
	if be, ok := LookupBroker(s.Name); ok && s.Source != SourceDynamicTopic {
		t = be.Type
	}
	v, err := parseValue(t, s.Value)
	if err != nil {
		return "", fmt.Errorf("%w: Invalid value %s for configuration %s: %v", ErrInvalidConfig, s.Value, s.Name, err)
	}
	if scale != 1 {
		v.i = scaleMillis(v.i, scale)
	}
	return formatValue(e.Type, v), nil
}

// scaleMillis multiplies a count of minutes or hours into milliseconds;
// negative means unlimited (-1) and overflow saturates.
func scaleMillis(n, scale int64) int64 {
	switch {
	case n < 0:
		return -1
	case n > math.MaxInt64/scale:
		return math.MaxInt64
	}
	return n * scale
}

func formatValue(t Type, v value) string {
	switch t {
	case TypeBoolean:
		return strconv.FormatBool(v.b)
	case TypeInt, TypeShort, TypeLong:
		return strconv.FormatInt(v.i, 10)
	case TypeDouble:
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	case TypeList:
		return strings.Join(v.list, ",")
	}
	return v.s
}

// Describe returns every broker config's effective value, as
// DescribeConfigs reports a broker resource, in table order.
func (b *Broker) Describe() []Resolved {
	out := make([]Resolved, 0, len(brokerTable))
	for _, e := range brokerTable {
		syns := b.brokerCandidates(e.Name)
		r := Resolved{Name: e.Name, Type: e.Type, ReadOnly: e.ReadOnly, Sensitive: e.Sensitive,
			Synonyms: syns, Doc: e.Doc, Null: true, Source: SourceDefault}
		if len(syns) > 0 {
			r.Value, r.Source, r.Null = syns[0].Value, syns[0].Source, false
		}
		if r.Sensitive {
			r.Value, r.Null = "", true
		}
		out = append(out, r)
	}
	return out
}

// ValidateTopicConfigs checks a topic's overrides, as CreateTopics,
// AlterConfigs and IncrementalAlterConfigs carry them: every name must be a
// topic config and every value valid for it, and together over the
// defaults they must make a valid log.Config. The error wraps
// ErrInvalidConfig.
func ValidateTopicConfigs(overrides map[string]string) error {
	if err := checkTopicKeys(overrides); err != nil {
		return err
	}
	r, err := NewBroker().ResolveTopic(overrides)
	if err != nil {
		return err
	}
	_, err = ToLogConfig(r)
	return err
}

func checkTopicKeys(overrides map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		e, ok := LookupTopic(k)
		if !ok {
			return fmt.Errorf("%w: Unknown topic config name: %s", ErrInvalidConfig, k)
		}
		if err := e.Check(overrides[k]); err != nil {
			return err
		}
	}
	return nil
}

// logFields maps each topic config that package log reads to the field it
// sets.
var logFields = map[string]func(c *log.Config, v value){
	"segment.bytes":             func(c *log.Config, v value) { c.SegmentBytes = v.i },
	"segment.ms":                func(c *log.Config, v value) { c.SegmentMs = v.i },
	"segment.index.bytes":       func(c *log.Config, v value) { c.SegmentIndexBytes = v.i },
	"index.interval.bytes":      func(c *log.Config, v value) { c.IndexIntervalBytes = v.i },
	"retention.ms":              func(c *log.Config, v value) { c.RetentionMs = v.i },
	"retention.bytes":           func(c *log.Config, v value) { c.RetentionBytes = v.i },
	"delete.retention.ms":       func(c *log.Config, v value) { c.DeleteRetentionMs = v.i },
	"min.cleanable.dirty.ratio": func(c *log.Config, v value) { c.MinCleanableDirtyRatio = v.f },
	"min.compaction.lag.ms":     func(c *log.Config, v value) { c.MinCompactionLagMs = v.i },
	"flush.messages":            func(c *log.Config, v value) { c.FlushMessages = v.i },
	"flush.ms":                  func(c *log.Config, v value) { c.FlushMs = v.i },
	"cleanup.policy": func(c *log.Config, v value) {
		c.CleanupDelete = slices.Contains(v.list, "delete")
		c.CleanupCompact = slices.Contains(v.list, "compact")
	},
}

// ToLogConfig maps resolved topic configs (from Broker.ResolveTopic) to
// package log's Config and validates it. Configs package log does not read
// are ignored; those missing keep log.DefaultConfig's values. The error
// wraps ErrInvalidConfig (and log.ErrInvalidConfig when log rejects it).
func ToLogConfig(resolved []Resolved) (log.Config, error) {
	c := log.DefaultConfig()
	for _, r := range resolved {
		set, ok := logFields[r.Name]
		if !ok || r.Null {
			continue
		}
		v, err := parseValue(r.Type, r.Value)
		if err != nil {
			return log.Config{}, fmt.Errorf("%w: Invalid value %s for configuration %s: %v", ErrInvalidConfig, r.Value, r.Name, err)
		}
		set(&c, v)
	}
	if err := c.Validate(); err != nil {
		return log.Config{}, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return c, nil
}
