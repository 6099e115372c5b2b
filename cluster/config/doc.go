// Package config is weir's one typed table of Kafka configs and everything
// that reads it: the server.properties parser, the topic config resolver
// behind DescribeConfigs, the validator behind CreateTopics and AlterConfigs,
// the mapping to package log's Config, and the generated docs/configs.md.
//
// Every config is spelled, typed and defaulted as in Apache Kafka, except the
// few defaults where weir departs on purpose (see the table and
// docs/DESIGN.md "Defaults"). A topic config names its broker-level
// synonyms in Kafka's order; the effective value of a topic config is, first
// to last:
//
//  1. the topic's override (DYNAMIC_TOPIC_CONFIG), from the metadata image;
//  2. the first broker synonym set in server.properties or by a flag
//     (STATIC_BROKER_CONFIG), converted to the topic config's unit;
//  3. the first broker synonym with a default (DEFAULT_CONFIG);
//  4. the topic config's own default.
//
// Callers:
//
//  1. At start, Parse (or ParseFile) the server.properties file, then apply
//     command-line flags with Broker.Override.
//  2. On CreateTopics, AlterConfigs and IncrementalAlterConfigs, call
//     ValidateTopicConfigs on the topic's overrides; a failure wraps
//     ErrInvalidConfig and maps to INVALID_CONFIG.
//  3. On DescribeConfigs, call Broker.ResolveTopic with the topic's
//     overrides (or Broker.Describe for a broker resource) and encode each
//     Resolved entry with its source and synonyms.
//  4. To open a partition log, call ToLogConfig on the resolved topic
//     configs.
//
// The package imports nothing from weir but package log, so wire, actors and
// cluster can all import it.
package config
