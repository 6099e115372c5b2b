package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// configView is one config of a topic or a broker as DescribeConfigs
// answered it, the way `weir topics describe` and `weir cluster config`
// print it (JSON field names in the tags).
type configView struct {
	Name string `json:"name"`
	// Value is nil when the broker sent none: a sensitive config, or one
	// with no value (Kafka's tools print both as null).
	Value     *string `json:"value"`
	Source    string  `json:"source"`
	Sensitive bool    `json:"sensitive"`
	// Synonyms are every candidate value in the broker's order of
	// precedence, the winning one first.
	Synonyms []synonymView `json:"synonyms"`
}

// synonymView is one candidate value of a config: the config that holds it
// (the topic's own override or a broker config), its value and its source.
type synonymView struct {
	Name   string  `json:"name"`
	Value  *string `json:"value"`
	Source string  `json:"source"`
}

// newConfigViews converts described configs, sorted by name as
// kafka-configs.sh --describe sorts them.
func newConfigViews(configs []kadm.Config) []configView {
	out := make([]configView, 0, len(configs))
	for _, c := range configs {
		v := configView{Name: c.Key, Value: c.Value, Source: sourceName(c.Source), Sensitive: c.Sensitive,
			Synonyms: make([]synonymView, 0, len(c.Synonyms))}
		for _, s := range c.Synonyms {
			v.Synonyms = append(v.Synonyms, synonymView{Name: s.Key, Value: s.Value, Source: sourceName(s.Source)})
		}
		out = append(out, v)
	}
	slices.SortStableFunc(out, func(a, b configView) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// sourceName is the name Kafka's admin client gives a DescribeConfigs
// config_source (ConfigEntry.ConfigSource), which kafka-configs.sh prints.
func sourceName(s kmsg.ConfigSource) string {
	switch s {
	case kmsg.ConfigSourceDynamicTopicConfig:
		return "DYNAMIC_TOPIC_CONFIG"
	case kmsg.ConfigSourceDynamicBrokerConfig:
		return "DYNAMIC_BROKER_CONFIG"
	case kmsg.ConfigSourceDynamicDefaultBrokerConfig:
		return "DYNAMIC_DEFAULT_BROKER_CONFIG"
	case kmsg.ConfigSourceStaticBrokerConfig:
		return "STATIC_BROKER_CONFIG"
	case kmsg.ConfigSourceDefaultConfig:
		return "DEFAULT_CONFIG"
	case kmsg.ConfigSourceDynamicBrokerLoggerConfig:
		return "DYNAMIC_BROKER_LOGGER_CONFIG"
	case kmsg.ConfigSourceClientMetricsConfig:
		return "DYNAMIC_CLIENT_METRICS_CONFIG"
	case kmsg.ConfigSourceGroupConfig:
		return "DYNAMIC_GROUP_CONFIG"
	}
	return "UNKNOWN"
}

// nullable prints a config value as Kafka's tools do: null when absent.
func nullable(v *string) string {
	if v == nil {
		return "null"
	}
	return *v
}

// writeConfigBlock prints configs as kafka-configs.sh --describe --all
// does: the header line ("All configs for topic orders are:"), then one
// line a config,
//
//	cleanup.policy=compact sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact, DEFAULT_CONFIG:log.cleanup.policy=delete}
//
// The first synonym's source is the config's source; no synonyms means
// the config's own default (DEFAULT_CONFIG).
func writeConfigBlock(w io.Writer, header string, configs []configView) error {
	var b strings.Builder
	b.WriteString(header + "\n")
	for _, c := range configs {
		syns := make([]string, len(c.Synonyms))
		for i, s := range c.Synonyms {
			syns[i] = s.Source + ":" + s.Name + "=" + nullable(s.Value)
		}
		fmt.Fprintf(&b, "  %s=%s sensitive=%t synonyms={%s}\n", c.Name, nullable(c.Value), c.Sensitive, strings.Join(syns, ", "))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write configs: %w", err)
	}
	return nil
}
