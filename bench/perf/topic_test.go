package perf

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
)

// TestProducerCreatesMissingTopic produces to a topic that does not exist
// on a broker that creates topics on demand: the run's metadata request
// allows auto-creation, as the Java producer's, so the run succeeds.
func TestProducerCreatesMissingTopic(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()
	res, err := RunProducer(context.Background(), producerConfig(brokers, "fresh", 100), nil)
	if err != nil || res.Records != 100 {
		t.Fatalf("produce to a new topic: %d records, %v", res.Records, err)
	}
	got, err := RunConsumer(context.Background(), consumerConfig(brokers, "fresh", 100), nil)
	if err != nil || got.Records != 100 {
		t.Fatalf("consume the new topic: %d records, %v", got.Records, err)
	}
}

// TestMissingTopicError checks the error of runs on a topic that does not
// exist, on a broker that does not create topics: the producer's says the
// broker refused to create it, the consumer's only that it is missing, and
// both carry the broker's UNKNOWN_TOPIC_OR_PARTITION.
func TestMissingTopicError(t *testing.T) {
	brokers := newCluster(t, 1, "exists")
	ctx := context.Background()
	_, err := RunProducer(ctx, producerConfig(brokers, "missing", 10), nil)
	var mt *MissingTopicError
	if !errors.As(err, &mt) || !mt.AutoCreateRefused || !errors.Is(err, kerr.UnknownTopicOrPartition) ||
		err.Error() != "topic missing does not exist and the broker does not auto-create topics" {
		t.Errorf("produce to a missing topic: %v", err)
	}
	_, err = RunConsumer(ctx, consumerConfig(brokers, "missing", 10), nil)
	if !errors.As(err, &mt) || mt.AutoCreateRefused || !errors.Is(err, kerr.UnknownTopicOrPartition) ||
		err.Error() != "topic missing does not exist" {
		t.Errorf("consume a missing topic: %v", err)
	}
}

var consumerProgressRE = regexp.MustCompile(`^([0-9]+) records consumed, [0-9]+\.[0-9] records/sec \([0-9]+\.[0-9]{2} MB/sec\), ([0-9]+) records in all\.$`)

// TestConsumerProgressLines consumes with a progress line due at every
// poll that brings records: the lines' windows add up to the run's records
// and the last one's total is the run's.
func TestConsumerProgressLines(t *testing.T) {
	brokers := newCluster(t, 2, "progress")
	ctx := context.Background()
	if _, err := RunProducer(ctx, producerConfig(brokers, "progress", 500), nil); err != nil {
		t.Fatal(err)
	}
	cfg := consumerConfig(brokers, "progress", 500)
	cfg.ReportInterval = time.Nanosecond
	var progress lockedBuffer
	res, err := RunConsumer(ctx, cfg, &progress)
	if err != nil || res.Records != 500 {
		t.Fatalf("consumed %d records, %v", res.Records, err)
	}
	var sum, total int64
	for _, l := range strings.Split(strings.TrimSuffix(progress.String(), "\n"), "\n") {
		m := consumerProgressRE.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("progress line %q", l)
		}
		p := numberParser{}
		sum += p.int(m[1])
		total = p.int(m[2])
	}
	if sum != 500 || total != 500 {
		t.Errorf("progress lines count %d records, the last %d in all; want 500 and 500", sum, total)
	}

	cfg.ReportInterval = 0
	progress = lockedBuffer{}
	if _, err := RunConsumer(ctx, cfg, &progress); err != nil || progress.String() != "" {
		t.Errorf("ReportInterval 0: %v, progress %q; want no lines", err, progress.String())
	}
}

// TestConsumerFromLatest starts at the end of the topic: the records
// produced before the run are not counted, so it times out with none.
func TestConsumerFromLatest(t *testing.T) {
	brokers := newCluster(t, 1, "latest")
	ctx := context.Background()
	if _, err := RunProducer(ctx, producerConfig(brokers, "latest", 20), nil); err != nil {
		t.Fatal(err)
	}
	cfg := consumerConfig(brokers, "latest", 1)
	cfg.FromLatest = true
	cfg.Timeout = 300 * time.Millisecond
	res, err := RunConsumer(ctx, cfg, nil)
	if !errors.Is(err, ErrTimeout) || res.Records != 0 {
		t.Errorf("from latest: %d records, %v; want none and ErrTimeout", res.Records, err)
	}
}

// TestConfigErrorsHaveNoPrefix checks that the text of invalid settings is
// the detail alone, for a command to print after its own name.
func TestConfigErrorsHaveNoPrefix(t *testing.T) {
	_, aerr := ParseAcks("2")
	_, cerr := ParseCompression("brotli")
	for _, err := range []error{
		aerr, cerr,
		producerConfig([]string{"b:1"}, "t", 0).Validate(),
		consumerConfig([]string{"b:1"}, "", 1).Validate(),
	} {
		if !errors.Is(err, ErrInvalidConfig) || strings.Contains(err.Error(), "perf") || strings.Contains(err.Error(), "invalid config") {
			t.Errorf("error %q: want ErrInvalidConfig without a prefix", err)
		}
	}
}
