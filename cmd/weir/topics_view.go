package main

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicSummary is one topic as `weir topics list --format json` prints it.
type topicSummary struct {
	Name              string `json:"name"`
	TopicID           string `json:"topic_id"`
	Partitions        int    `json:"partitions"`
	ReplicationFactor int    `json:"replication_factor"`
	Internal          bool   `json:"internal"`
}

// newTopicSummary summarizes a topic's metadata.
func newTopicSummary(d kadm.TopicDetail) topicSummary {
	return topicSummary{Name: d.Topic, TopicID: topicID(d.ID), Partitions: len(d.Partitions),
		ReplicationFactor: replicationFactor(d), Internal: d.IsInternal}
}

// topicView is one topic as `weir topics describe` prints it: its
// metadata, every config, and each partition with its offsets.
type topicView struct {
	Name string `json:"name"`
	// TopicID is Kafka's Uuid text (base64url, no padding), "" from a
	// broker without topic ids.
	TopicID           string          `json:"topic_id"`
	Internal          bool            `json:"internal"`
	PartitionCount    int             `json:"partition_count"`
	ReplicationFactor int             `json:"replication_factor"`
	Configs           []configView    `json:"configs"`
	Partitions        []partitionView `json:"partitions"`
}

// partitionView is one partition of a topicView.
type partitionView struct {
	Partition int32 `json:"partition"`
	// Leader is -1 when the partition has none.
	Leader          int32   `json:"leader"`
	LeaderEpoch     int32   `json:"leader_epoch"`
	Replicas        []int32 `json:"replicas"`
	ISR             []int32 `json:"isr"`
	OfflineReplicas []int32 `json:"offline_replicas"`
	// StartOffset is the log start offset, HighWatermark the offset after
	// the last record consumers can read; both -1 when the leader did not
	// answer them, and OffsetsError says why.
	StartOffset   int64  `json:"start_offset"`
	HighWatermark int64  `json:"high_watermark"`
	OffsetsError  string `json:"offsets_error,omitempty"`
}

// newTopicView assembles a topic's description from its metadata, its
// described configs and the listed start and end offsets of its
// partitions.
func newTopicView(d kadm.TopicDetail, configs []kadm.Config, start, end kadm.ListedOffsets) topicView {
	v := topicView{Name: d.Topic, TopicID: topicID(d.ID), Internal: d.IsInternal,
		PartitionCount: len(d.Partitions), ReplicationFactor: replicationFactor(d),
		Configs: newConfigViews(configs), Partitions: []partitionView{}}
	for _, p := range d.Partitions.Sorted() {
		pv := partitionView{Partition: p.Partition, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch,
			Replicas: nonNil(p.Replicas), ISR: nonNil(p.ISR), OfflineReplicas: nonNil(p.OfflineReplicas),
			StartOffset: -1, HighWatermark: -1}
		so, soErr := partitionOffset(start, d.Topic, p.Partition)
		hw, hwErr := partitionOffset(end, d.Topic, p.Partition)
		if err := errors.Join(soErr, hwErr); err != nil {
			pv.OffsetsError = offsetsError(soErr, hwErr)
		} else {
			pv.StartOffset, pv.HighWatermark = so, hw
		}
		v.Partitions = append(v.Partitions, pv)
	}
	return v
}

// errNoOffsets is a partition's offsets error when the answer left it out
// (its leader's broker failed).
var errNoOffsets = errors.New("no answer from its leader")

// partitionOffset returns one partition's listed offset, or why there is
// none.
func partitionOffset(l kadm.ListedOffsets, topic string, partition int32) (int64, error) {
	o, ok := l.Lookup(topic, partition)
	switch {
	case !ok:
		return -1, errNoOffsets
	case o.Err != nil:
		return -1, o.Err
	}
	return o.Offset, nil
}

// offsetsError names the error of a partition's offsets: the Kafka error
// code's name when the broker answered one.
func offsetsError(errs ...error) string {
	for _, err := range errs {
		if err == nil {
			continue
		}
		var ke *kerr.Error
		if errors.As(err, &ke) {
			return ke.Message
		}
		return err.Error()
	}
	return ""
}

// nonNil returns ids, or an empty list for nil (JSON prints [] not null).
func nonNil(ids []int32) []int32 {
	if ids == nil {
		return []int32{}
	}
	return ids
}

// topicID prints a topic id as Kafka does; "" for the zero id.
func topicID(id kadm.TopicID) string {
	if id == (kadm.TopicID{}) {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(id[:])
}

// replicationFactor is the replica count of a topic's first partition, 0
// for a topic without partitions.
func replicationFactor(d kadm.TopicDetail) int {
	ps := d.Partitions.Sorted()
	if len(ps) == 0 {
		return 0
	}
	return len(ps[0].Replicas)
}

// writeText prints v as kafka-topics.sh --describe does, with the start
// offset and high watermark added to each partition's line, then every
// config as kafka-configs.sh --describe --all does, e.g.
//
//	Topic: orders	TopicId: 3Xh_pYxNSe6dcHZYJ5ZA9w	PartitionCount: 2	ReplicationFactor: 1	Configs: cleanup.policy=compact
//		Topic: orders	Partition: 0	Leader: 1	Replicas: 1	Isr: 1	StartOffset: 0	HighWatermark: 12
//		Topic: orders	Partition: 1	Leader: none	Replicas: 1	Isr: 	Offline: 1	StartOffset: -1	HighWatermark: -1	OffsetsError: LEADER_NOT_AVAILABLE
//	All configs for topic orders are:
//	  cleanup.policy=compact sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact, DEFAULT_CONFIG:log.cleanup.policy=delete}
//	  ...
//
// The Configs field lists the configs not at their default (the source
// is not DEFAULT_CONFIG), sorted by name; a value the broker withheld (a
// sensitive one) prints as null, as Kafka's tools print it.
func (v topicView) writeText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Topic: %s", v.Name)
	if v.TopicID != "" {
		fmt.Fprintf(&b, "\tTopicId: %s", v.TopicID)
	}
	fmt.Fprintf(&b, "\tPartitionCount: %d\tReplicationFactor: %d\tConfigs: %s\n",
		v.PartitionCount, v.ReplicationFactor, overrideList(v.Configs))
	for _, p := range v.Partitions {
		leader := "none"
		if p.Leader >= 0 {
			leader = strconv.Itoa(int(p.Leader))
		}
		fmt.Fprintf(&b, "\tTopic: %s\tPartition: %d\tLeader: %s\tReplicas: %s\tIsr: %s",
			v.Name, p.Partition, leader, brokerList(p.Replicas), brokerList(p.ISR))
		if len(p.OfflineReplicas) > 0 {
			fmt.Fprintf(&b, "\tOffline: %s", brokerList(p.OfflineReplicas))
		}
		fmt.Fprintf(&b, "\tStartOffset: %d\tHighWatermark: %d", p.StartOffset, p.HighWatermark)
		if p.OffsetsError != "" {
			fmt.Fprintf(&b, "\tOffsetsError: %s", p.OffsetsError)
		}
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write description: %w", err)
	}
	return writeConfigBlock(w, "All configs for topic "+v.Name+" are:", v.Configs)
}

// overrideList formats the configs whose source is not the default as
// "k=v,k=v", sorted by name.
func overrideList(configs []configView) string {
	var kv []string
	for _, c := range configs {
		if c.Source != sourceName(kmsg.ConfigSourceDefaultConfig) {
			kv = append(kv, c.Name+"="+nullable(c.Value))
		}
	}
	slices.Sort(kv)
	return strings.Join(kv, ",")
}
