package perf

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
)

// newCluster starts a one-broker kfake cluster holding topics, each with
// partitions partitions, and returns its addresses.
func newCluster(t *testing.T, partitions int32, topics ...string) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

func producerConfig(brokers []string, topic string, records int64) ProducerConfig {
	cfg := DefaultProducerConfig()
	cfg.Brokers, cfg.Topic, cfg.Records = brokers, topic, records
	return cfg
}

func consumerConfig(brokers []string, topic string, records int64) ConsumerConfig {
	cfg := DefaultConsumerConfig()
	cfg.Brokers, cfg.Topic, cfg.Records = brokers, topic, records
	return cfg
}

// lockedBuffer collects progress lines written from the client's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var progressRE = regexp.MustCompile(`^[0-9]+ records sent, [0-9]+\.[0-9] records/sec \([0-9]+\.[0-9]{2} MB/sec\), [0-9]+\.[0-9] ms avg latency, [0-9]+\.[0-9] ms max latency\.$`)

func TestProduceThenConsume(t *testing.T) {
	brokers := newCluster(t, 3, "perf")
	ctx := context.Background()

	cfg := producerConfig(brokers, "perf", 3000)
	cfg.RecordSize = 100
	cfg.ReportInterval = time.Nanosecond // a progress line for every acknowledgement
	var progress lockedBuffer
	res, err := RunProducer(ctx, cfg, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if res.Records != 3000 || res.Bytes != 300000 || res.Failed != 0 || res.Latency.Count() != 3000 || res.Elapsed <= 0 {
		t.Errorf("producer result %+v", res)
	}
	lines := strings.Split(strings.TrimSuffix(progress.String(), "\n"), "\n")
	var sent int64
	for _, l := range lines {
		if !progressRE.MatchString(l) {
			t.Fatalf("progress line %q is not in Kafka's format", l)
		}
		var n int64
		fmt.Sscan(l, &n)
		sent += n
	}
	if sent != 3000 {
		t.Errorf("progress lines count %d records, want 3000", sent)
	}
	if _, err := ParseProducerSummary(res.Summary().String()); err != nil {
		t.Errorf("summary does not parse back: %v", err)
	}

	got, err := RunConsumer(ctx, consumerConfig(brokers, "perf", 3000), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Records != 3000 || got.Bytes != 300000 || got.Rebalance != 0 || got.End.Before(got.Start) {
		t.Errorf("consumer result %+v", got)
	}

	group := consumerConfig(brokers, "perf", 3000)
	group.Group = "perf-group"
	got, err = RunConsumer(ctx, group, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Records != 3000 || got.Bytes != 300000 || got.Rebalance <= 0 || got.Rebalance > got.End.Sub(got.Start) {
		t.Errorf("group consumer result %+v", got)
	}
}

// TestEveryAcksAndCodec produces with each acks setting and codec (the
// idempotent producer with acks=all), then reads every record back.
func TestEveryAcksAndCodec(t *testing.T) {
	brokers := newCluster(t, 2, "codecs")
	ctx := context.Background()
	var total int64
	for _, acks := range []Acks{AcksNone, AcksLeader, AcksAll} {
		for _, codec := range Compressions {
			cfg := producerConfig(brokers, "codecs", 200)
			cfg.Acks, cfg.Idempotent, cfg.Compression, cfg.RecordSize = acks, acks == AcksAll, codec, 300
			res, err := RunProducer(ctx, cfg, nil)
			if err != nil || res.Records != 200 {
				t.Fatalf("acks=%v %s: %d records, %v", acks, codec, res.Records, err)
			}
			total += 200
		}
	}
	got, err := RunConsumer(ctx, consumerConfig(brokers, "codecs", total), nil)
	if err != nil || got.Records != total || got.Bytes != total*300 {
		t.Fatalf("consumed %d records, %d bytes, %v; want %d, %d", got.Records, got.Bytes, err, total, total*300)
	}
}

func TestUnknownTopic(t *testing.T) {
	brokers := newCluster(t, 1, "exists")
	ctx := context.Background()
	if _, err := RunProducer(ctx, producerConfig(brokers, "missing", 10), nil); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("produce to a missing topic: %v, want UNKNOWN_TOPIC_OR_PARTITION", err)
	}
	if _, err := RunConsumer(ctx, consumerConfig(brokers, "missing", 10), nil); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("consume a missing topic: %v, want UNKNOWN_TOPIC_OR_PARTITION", err)
	}
}

func TestInvalidConfigIsRefusedBeforeConnecting(t *testing.T) {
	cfg := producerConfig([]string{"127.0.0.1:1"}, "t", 1)
	cfg.Acks = AcksLeader // still idempotent
	if _, err := RunProducer(context.Background(), cfg, nil); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("RunProducer = %v, want ErrInvalidConfig", err)
	}
	if _, err := RunConsumer(context.Background(), consumerConfig([]string{"127.0.0.1:1"}, "t", 0), nil); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("RunConsumer = %v, want ErrInvalidConfig", err)
	}
}

func TestConsumerTimesOutWhenRecordsStop(t *testing.T) {
	brokers := newCluster(t, 2, "short")
	ctx := context.Background()
	if _, err := RunProducer(ctx, producerConfig(brokers, "short", 50), nil); err != nil {
		t.Fatal(err)
	}
	cfg := consumerConfig(brokers, "short", 51)
	cfg.Timeout = 300 * time.Millisecond
	got, err := RunConsumer(ctx, cfg, nil)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("RunConsumer = %v, want ErrTimeout", err)
	}
	if got.Records != 50 || got.Bytes != 50*1024 {
		t.Errorf("result %+v, want the 50 records there are", got)
	}
}

// TestThroughputCap checks the pacing end to end: at 2000 records/s, 100
// records cannot be acknowledged in less than their schedule.
func TestThroughputCap(t *testing.T) {
	brokers := newCluster(t, 1, "paced")
	cfg := producerConfig(brokers, "paced", 100)
	cfg.Throughput = 2000
	res, err := RunProducer(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if schedule := 99 * time.Second / 2000; res.Elapsed < schedule-minSleep {
		t.Errorf("100 records at 2000/s took %v, less than the schedule %v", res.Elapsed, schedule)
	}
}

// cancelWriter cancels a context at the first progress line.
type cancelWriter struct {
	once   sync.Once
	cancel context.CancelFunc
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.once.Do(w.cancel)
	return len(p), nil
}

func TestProducerStopsWhenCancelled(t *testing.T) {
	brokers := newCluster(t, 1, "endless")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := producerConfig(brokers, "endless", 1<<40)
	cfg.Throughput = 1000
	cfg.ReportInterval = time.Nanosecond
	res, err := RunProducer(ctx, cfg, &cancelWriter{cancel: cancel})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("RunProducer = %v, want context.Canceled", err)
	}
	if res.Records < 1 || res.Records > 1<<20 {
		t.Errorf("%d records acknowledged before the cancel", res.Records)
	}
}

// TestConsumerStopsWhenCancelled cancels a consumer waiting for records
// that never come (most likely while it polls; the outcome is the same if
// the cancel comes earlier).
func TestConsumerStopsWhenCancelled(t *testing.T) {
	brokers := newCluster(t, 1, "empty")
	ctx, cancel := context.WithCancel(context.Background())
	cfg := consumerConfig(brokers, "empty", 10)
	cfg.Timeout = time.Hour
	done := make(chan error, 1)
	go func() {
		_, err := RunConsumer(ctx, cfg, nil)
		done <- err
	}()
	time.AfterFunc(200*time.Millisecond, cancel)
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("RunConsumer = %v, want context.Canceled", err)
	}
}
