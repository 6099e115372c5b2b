package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirmq/weir/internal/cli"
)

// topicDescription is what `weir topics describe` prints of one topic.
type topicDescription struct {
	detail  kadm.TopicDetail
	configs []kadm.Config // as described; String keeps the non-default ones
}

// describeTopics fetches the metadata and configs of topic, or of every
// topic (the internal ones only with internal) when topic is empty, in
// name order.
func describeTopics(ctx context.Context, adm *cli.Admin, topic string, internal bool) ([]topicDescription, error) {
	var want []string
	if topic != "" {
		want = []string{topic}
	}
	topics, err := adm.ListTopicsWithInternal(ctx, want...)
	if err != nil {
		return nil, adm.Explain(ctx, "describe topics", err)
	}
	if topic != "" {
		d, ok := topics[topic]
		switch {
		case !ok:
			return nil, fmt.Errorf("describe topic %q: the broker did not answer for it", topic)
		case d.Err != nil:
			return nil, fmt.Errorf("describe topic %q: %w", topic, d.Err)
		}
	}
	names := topicNames(topics, internal || topic != "")
	if len(names) == 0 {
		return nil, nil
	}
	configs, err := adm.DescribeTopicConfigs(ctx, names...)
	if err != nil {
		return nil, adm.Explain(ctx, "describe topic configs", err)
	}
	out := make([]topicDescription, 0, len(names))
	for _, name := range names {
		rc, err := configs.On(name, nil)
		if err == nil {
			err = cli.WithBrokerMessage(rc.Err, rc.ErrMessage)
		}
		if err != nil {
			return nil, fmt.Errorf("describe configs of topic %q: %w", name, err)
		}
		out = append(out, topicDescription{detail: topics[name], configs: rc.Configs})
	}
	return out, nil
}

// String formats d as kafka-topics.sh --describe does: a line for the
// topic, then one for each partition, each field tab-separated, e.g.
//
//	Topic: orders	TopicId: 3Xh_pYxNSe6dcHZYJ5ZA9w	PartitionCount: 2	ReplicationFactor: 1	Configs: cleanup.policy=compact
//		Topic: orders	Partition: 0	Leader: 1	Replicas: 1	Isr: 1
//		Topic: orders	Partition: 1	Leader: none	Replicas: 1	Isr: 	Offline: 1
//
// Configs lists the configs not at their default, sorted by name; Offline
// appears when a partition has offline replicas.
func (d topicDescription) String() string {
	var b strings.Builder
	t := d.detail
	partitions := t.Partitions.Sorted()
	replication := 0
	if len(partitions) > 0 {
		replication = len(partitions[0].Replicas)
	}
	fmt.Fprintf(&b, "Topic: %s", t.Topic)
	if t.ID != (kadm.TopicID{}) {
		fmt.Fprintf(&b, "\tTopicId: %s", base64.RawURLEncoding.EncodeToString(t.ID[:]))
	}
	fmt.Fprintf(&b, "\tPartitionCount: %d\tReplicationFactor: %d\tConfigs: %s\n",
		len(partitions), replication, overrides(d.configs))
	for _, p := range partitions {
		leader := "none"
		if p.Leader >= 0 {
			leader = strconv.Itoa(int(p.Leader))
		}
		fmt.Fprintf(&b, "\tTopic: %s\tPartition: %d\tLeader: %s\tReplicas: %s\tIsr: %s",
			t.Topic, p.Partition, leader, brokerList(p.Replicas), brokerList(p.ISR))
		if len(p.OfflineReplicas) > 0 {
			fmt.Fprintf(&b, "\tOffline: %s", brokerList(p.OfflineReplicas))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// overrides formats the configs whose source is not the default as
// "k=v,k=v", sorted by name; a value the broker withheld (a sensitive one)
// prints as null, as Kafka's tool does.
func overrides(configs []kadm.Config) string {
	var kv []string
	for _, c := range configs {
		if c.Source == kmsg.ConfigSourceDefaultConfig {
			continue
		}
		v := "null"
		if c.Value != nil {
			v = *c.Value
		}
		kv = append(kv, c.Key+"="+v)
	}
	slices.Sort(kv)
	return strings.Join(kv, ",")
}

// brokerList formats broker ids as "1,2,3".
func brokerList(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}
