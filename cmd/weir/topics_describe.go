package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/weirmq/weir/internal/cli"
)

// describeTopics fetches the metadata, every config and the start and end
// offsets of topic, or of every topic (the internal ones only with
// internal) when topic is empty, in name order.
func describeTopics(ctx context.Context, adm *cli.Admin, topic string, internal bool) ([]topicView, error) {
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
			return nil, topicError(fmt.Sprintf("describe topic %q", topic), d.Err)
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
	start, err := listOffsets(ctx, adm, "list start offsets", adm.ListStartOffsets, names)
	if err != nil {
		return nil, err
	}
	end, err := listOffsets(ctx, adm, "list high watermarks", adm.ListEndOffsets, names)
	if err != nil {
		return nil, err
	}
	out := make([]topicView, 0, len(names))
	for _, name := range names {
		rc, err := configs.On(name, nil)
		if err == nil {
			err = cli.WithBrokerMessage(rc.Err, rc.ErrMessage)
		}
		if err != nil {
			return nil, fmt.Errorf("describe configs of topic %q: %w", name, err)
		}
		out = append(out, newTopicView(topics[name], rc.Configs, start, end))
	}
	return out, nil
}

// listOffsets lists offsets of topics with list. Brokers that fail leave
// their partitions out (the description shows why there); any other
// failure fails the description.
func listOffsets(ctx context.Context, adm *cli.Admin, what string,
	list func(context.Context, ...string) (kadm.ListedOffsets, error), topics []string,
) (kadm.ListedOffsets, error) {
	listed, err := list(ctx, topics...)
	var shards *kadm.ShardErrors
	if err != nil && (!errors.As(err, &shards) || listed == nil) {
		return nil, adm.Explain(ctx, what, err)
	}
	return listed, nil
}

// topicError wraps the error a broker answered for one topic's metadata;
// an unknown topic says where to look.
func topicError(what string, err error) error {
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		return fmt.Errorf("%s: %w (no such topic: 'weir topics list' shows the topics there are)", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// brokerList formats broker ids as "1,2,3".
func brokerList(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}
