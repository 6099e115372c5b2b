package perf

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DefaultTopicTimeout is the default bound on the metadata requests that
// check (and for a producer, create) the topic before a run, so that an
// unreachable broker fails the run instead of hanging.
const DefaultTopicTimeout = 30 * time.Second

// topicRetryBackoff is the pause between metadata requests while a broker
// answers LEADER_NOT_AVAILABLE for a topic it is creating.
const topicRetryBackoff = 100 * time.Millisecond

// MissingTopicError is the error of a run whose topic does not exist: a
// consumer run's, or a producer run's when the broker does not create
// topics on demand (its auto.create.topics.enable is false). It unwraps to
// kerr.UnknownTopicOrPartition, the code the broker answered.
type MissingTopicError struct {
	// Topic is the topic the run was given.
	Topic string
	// AutoCreateRefused says the metadata request allowed the broker to
	// create the topic and it did not.
	AutoCreateRefused bool
}

// Error says what is missing and, for a producer, why it was not created.
func (e *MissingTopicError) Error() string {
	if e.AutoCreateRefused {
		return fmt.Sprintf("topic %s does not exist and the broker does not auto-create topics", e.Topic)
	}
	return fmt.Sprintf("topic %s does not exist", e.Topic)
}

// Unwrap returns the broker's error code.
func (e *MissingTopicError) Unwrap() error { return kerr.UnknownTopicOrPartition }

// checkTopic asks the brokers for topic's metadata and returns its number of
// partitions, giving up after timeout. With autoCreate the request allows the broker to create the
// topic, as the Java producer's metadata requests do (so
// kafka-producer-perf-test.sh creates a missing topic on a broker with
// auto.create.topics.enable=true); a topic the broker is still creating
// (LEADER_NOT_AVAILABLE) is asked for again until it has leaders. A topic
// the broker does not know and will not create is a *MissingTopicError, any
// other error the broker's code and message: a run against a missing topic
// fails at once rather than after the client's retries.
func checkTopic(ctx context.Context, cl *kgo.Client, topic string, autoCreate bool, timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		partitions, err := topicMetadata(ctx, cl, topic, autoCreate)
		if !errors.Is(err, kerr.LeaderNotAvailable) {
			return partitions, err
		}
		t := time.NewTimer(topicRetryBackoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, fmt.Errorf("metadata of topic %s: still %w when giving up: %w", topic, err, ctx.Err())
		case <-t.C:
		}
	}
}

// topicMetadata sends one Metadata request for topic and reads its answer.
func topicMetadata(ctx context.Context, cl *kgo.Client, topic string, autoCreate bool) (int, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	req.AllowAutoTopicCreation = autoCreate
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, fmt.Errorf("metadata of topic %s: %w", topic, err)
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		err := kerr.ErrorForCode(t.ErrorCode)
		switch {
		case errors.Is(err, kerr.UnknownTopicOrPartition):
			return 0, &MissingTopicError{Topic: topic, AutoCreateRefused: autoCreate}
		case err != nil:
			return 0, fmt.Errorf("topic %s: %w", topic, err)
		case len(t.Partitions) == 0:
			// Kafka answers a topic it is creating with LEADER_NOT_AVAILABLE;
			// a broker that lists it before its partitions is treated alike.
			return 0, fmt.Errorf("topic %s has no partitions yet: %w", topic, kerr.LeaderNotAvailable)
		}
		return len(t.Partitions), nil
	}
	return 0, fmt.Errorf("metadata of topic %s: the broker did not answer for it", topic)
}
