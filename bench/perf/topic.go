package perf

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// topicCheckTimeout bounds the metadata request that checks the topic
// before a run, so an unreachable broker fails the run instead of hanging.
const topicCheckTimeout = 30 * time.Second

// checkTopic asks the brokers for topic's metadata and returns its number
// of partitions, or the Kafka error the broker answered for it (such as
// UNKNOWN_TOPIC_OR_PARTITION): a run against a missing topic fails at once
// rather than after the client's retries.
func checkTopic(ctx context.Context, cl *kgo.Client, topic string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, topicCheckTimeout)
	defer cancel()
	topics, err := kadm.NewClient(cl).ListTopicsWithInternal(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("metadata of topic %q: %w", topic, err)
	}
	d, ok := topics[topic]
	switch {
	case !ok:
		return 0, fmt.Errorf("metadata of topic %q: the broker did not answer for it", topic)
	case d.Err != nil:
		return 0, fmt.Errorf("topic %q: %w", topic, d.Err)
	}
	return len(d.Partitions), nil
}
