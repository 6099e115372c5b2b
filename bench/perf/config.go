package perf

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirmq/weir/bench"
)

// ErrInvalidConfig matches (errors.Is) the configurations' Validate errors
// and those of ParseAcks and ParseCompression. Their text is only the
// detail ("acks \"2\": want 0, 1, -1 or all"), so that a command printing
// it after its own name does not repeat a prefix.
var ErrInvalidConfig = errors.New("perf: invalid config")

// invalidf returns an invalid setting's error (see bench.InvalidConfig).
func invalidf(format string, args ...any) error {
	return bench.InvalidConfig(ErrInvalidConfig, format, args...)
}

// DefaultBroker is the bootstrap broker when none is given.
const DefaultBroker = "127.0.0.1:9092"

// Acks is the producer's required acknowledgements, Kafka's acks setting.
type Acks int16

const (
	// AcksNone (acks=0): the broker sends no response; a record counts as
	// acknowledged once its request is written.
	AcksNone Acks = 0
	// AcksLeader (acks=1): the leader has appended the record.
	AcksLeader Acks = 1
	// AcksAll (acks=-1, "all"): every in-sync replica has the record.
	AcksAll Acks = -1
)

// ParseAcks reads an acks setting as Kafka's clients do: "0", "1", "-1" or
// "all".
func ParseAcks(s string) (Acks, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "0":
		return AcksNone, nil
	case "1":
		return AcksLeader, nil
	case "-1", "all":
		return AcksAll, nil
	}
	return 0, invalidf("acks %q, want 0, 1, -1 or all", s)
}

// String returns the setting as Kafka writes it: "0", "1" or "all".
func (a Acks) String() string {
	if a == AcksAll {
		return "all"
	}
	return strconv.Itoa(int(a))
}

// Compression is a record batch compression codec, named as Kafka's
// compression.type values.
type Compression string

// The codecs a producer run can use.
const (
	CompressionNone   Compression = "none"
	CompressionGzip   Compression = "gzip"
	CompressionSnappy Compression = "snappy"
	CompressionLz4    Compression = "lz4"
	CompressionZstd   Compression = "zstd"
)

// Compressions lists the codecs in Kafka's attribute order.
var Compressions = []Compression{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLz4, CompressionZstd}

// ParseCompression reads a codec name (case-insensitive).
func ParseCompression(s string) (Compression, error) {
	c := Compression(strings.ToLower(strings.TrimSpace(s)))
	for _, known := range Compressions {
		if c == known {
			return c, nil
		}
	}
	return "", invalidf("compression %q, want one of none, gzip, snappy, lz4, zstd", s)
}

// Codec returns the kgo codec of c.
func (c Compression) Codec() kgo.CompressionCodec {
	switch c {
	case CompressionGzip:
		return kgo.GzipCompression()
	case CompressionSnappy:
		return kgo.SnappyCompression()
	case CompressionLz4:
		return kgo.Lz4Compression()
	case CompressionZstd:
		return kgo.ZstdCompression()
	}
	return kgo.NoCompression()
}

// ProducerConfig describes one producer run. Start from
// DefaultProducerConfig and set Topic and Records.
type ProducerConfig struct {
	// Brokers are the bootstrap brokers, host:port each. Default
	// DefaultBroker.
	Brokers []string
	// Topic is the topic to produce to. If it does not exist, the run's
	// metadata request lets the broker create it, as the Java producer's
	// does; a broker whose auto.create.topics.enable is false refuses, and
	// the run fails with a *MissingTopicError.
	Topic string
	// Records is the number of records to send, at least 1.
	Records int64
	// RecordSize is the size in bytes of each record's value; records have
	// no key. Default 1024.
	RecordSize int
	// Acks is the acknowledgement the producer waits for. Default AcksAll.
	Acks Acks
	// Throughput caps the send rate in records per second; a negative
	// value means unlimited (Kafka's -1), zero is invalid. Default -1.
	Throughput float64
	// Linger is how long a partition's batch may wait for more records
	// (linger.ms). Default 5 ms, Kafka 4's default.
	Linger time.Duration
	// BatchBytes bounds a record batch in bytes (kgo's
	// ProducerBatchMaxBytes). Default 1 MiB.
	BatchBytes int32
	// Compression is the batch codec. Default CompressionNone.
	Compression Compression
	// Idempotent enables the idempotent producer; it requires AcksAll, as
	// in the Java client. Default true (with AcksAll).
	Idempotent bool
	// MaxInFlight is the number of produce requests in flight per broker
	// when not idempotent (an idempotent producer always allows 5).
	// Default 5.
	MaxInFlight int
	// ReportInterval is how often a progress line is written; 0 disables
	// them. Default 5 s, as Kafka's tool.
	ReportInterval time.Duration
	// TopicTimeout bounds the metadata requests that check and create the
	// topic before the first record is sent. Default DefaultTopicTimeout.
	TopicTimeout time.Duration
}

// DefaultProducerConfig returns the defaults of `weir perf produce`,
// without a topic or a record count.
func DefaultProducerConfig() ProducerConfig {
	return ProducerConfig{
		Brokers:        []string{DefaultBroker},
		RecordSize:     1024,
		Acks:           AcksAll,
		Throughput:     -1,
		Linger:         5 * time.Millisecond,
		BatchBytes:     1 << 20,
		Compression:    CompressionNone,
		Idempotent:     true,
		MaxInFlight:    5,
		ReportInterval: 5 * time.Second,
		TopicTimeout:   DefaultTopicTimeout,
	}
}

// Validate checks the fields' ranges and combinations.
func (c ProducerConfig) Validate() error {
	if err := validateCommon(c.Brokers, c.Topic, c.Records); err != nil {
		return err
	}
	switch {
	case c.RecordSize < 0:
		return invalidf("record size %d is negative", c.RecordSize)
	case c.Acks != AcksNone && c.Acks != AcksLeader && c.Acks != AcksAll:
		return invalidf("acks %d, want 0, 1 or -1", c.Acks)
	case c.Throughput == 0:
		return invalidf("throughput 0 would never send; use a negative value for no limit")
	case c.Linger < 0:
		return invalidf("linger %v is negative", c.Linger)
	case c.BatchBytes < 1:
		return invalidf("batch bytes %d, need at least 1", c.BatchBytes)
	case c.Idempotent && c.Acks != AcksAll:
		return invalidf("the idempotent producer needs acks=all, not acks=%v", c.Acks)
	case c.MaxInFlight < 1:
		return invalidf("max in flight %d, need at least 1", c.MaxInFlight)
	case c.ReportInterval < 0:
		return invalidf("report interval %v is negative", c.ReportInterval)
	case c.TopicTimeout <= 0:
		return invalidf("topic timeout %v, need more than 0", c.TopicTimeout)
	}
	if _, err := ParseCompression(string(c.Compression)); err != nil {
		return err
	}
	return nil
}

// clientOpts returns the kgo options of a producer run.
func (c ProducerConfig) clientOpts() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Brokers...),
		kgo.DefaultProduceTopic(c.Topic),
		kgo.AllowAutoTopicCreation(), // as the Java producer's metadata requests
		kgo.ProducerLinger(c.Linger),
		kgo.ProducerBatchMaxBytes(c.BatchBytes),
		kgo.ProducerBatchCompression(c.Compression.Codec()),
	}
	switch c.Acks {
	case AcksNone:
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()))
	case AcksLeader:
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()))
	default:
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	}
	if !c.Idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite(), kgo.MaxProduceRequestsInflightPerBroker(c.MaxInFlight))
	}
	return opts
}

// ConsumerConfig describes one consumer run. Start from
// DefaultConsumerConfig and set Topic and Records.
type ConsumerConfig struct {
	// Brokers are the bootstrap brokers, host:port each. Default
	// DefaultBroker.
	Brokers []string
	// Topic is the topic to consume; it must exist (a consumer run never
	// creates it: there would be nothing to read).
	Topic string
	// Records is the number of records to consume, at least 1.
	Records int64
	// Timeout is the longest wait for the next records; when it passes the
	// run ends early with ErrTimeout. Default 10 s, as Kafka's tool.
	Timeout time.Duration
	// Group, when set, consumes as a member of this consumer group (its
	// committed offsets, if any, are where it starts). When empty, every
	// partition is read directly from its start offset.
	Group string
	// FromLatest starts partitions without a committed offset at their
	// end instead of their start (Kafka's --from-latest,
	// auto.offset.reset=latest): the run counts only records produced
	// after it started.
	FromLatest bool
	// ReportInterval is how often a progress line (ConsumerWindow) is
	// written while records arrive; 0 disables them. Default 5 s, as
	// Kafka's tool.
	ReportInterval time.Duration
}

// DefaultConsumerConfig returns the defaults of `weir perf consume`,
// without a topic or a record count.
func DefaultConsumerConfig() ConsumerConfig {
	return ConsumerConfig{
		Brokers:        []string{DefaultBroker},
		Timeout:        10 * time.Second,
		ReportInterval: 5 * time.Second,
	}
}

// Validate checks the fields' ranges.
func (c ConsumerConfig) Validate() error {
	if err := validateCommon(c.Brokers, c.Topic, c.Records); err != nil {
		return err
	}
	switch {
	case c.Timeout <= 0:
		return invalidf("timeout %v, need more than 0", c.Timeout)
	case c.ReportInterval < 0:
		return invalidf("report interval %v is negative", c.ReportInterval)
	}
	return nil
}

// clientOpts returns the kgo options of a consumer run; onAssigned is
// called when the group assigns partitions.
func (c ConsumerConfig) clientOpts(onAssigned func()) []kgo.Opt {
	reset := kgo.NewOffset().AtStart()
	if c.FromLatest {
		reset = kgo.NewOffset().AtEnd()
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Brokers...),
		kgo.ConsumeTopics(c.Topic),
		kgo.ConsumeResetOffset(reset),
	}
	if c.Group != "" {
		opts = append(opts, kgo.ConsumerGroup(c.Group),
			kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) { onAssigned() }))
	}
	return opts
}

// validateCommon checks the fields both runs share.
func validateCommon(brokers []string, topic string, records int64) error {
	switch {
	case len(brokers) == 0:
		return invalidf("no brokers")
	case topic == "":
		return invalidf("no topic")
	case records < 1:
		return invalidf("%d records, need at least 1", records)
	}
	for _, b := range brokers {
		if strings.TrimSpace(b) == "" {
			return invalidf("empty broker address")
		}
	}
	return nil
}
