package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// TestSarama runs the suite with IBM/sarama at its default configuration
// (Version 2.8.0, acks=1, hash partitioner): topics by ClusterAdmin;
// produce with a SyncProducer (which needs Producer.Return.Successes), at
// acks=1, acks=all and each codec; consume with ConsumePartition from
// offset 0.
func TestSarama(t *testing.T) {
	runSuite(t, driver{
		name:        "sarama",
		variants:    append(acksVariants(), codecVariants(allCodecs...)...),
		createTopic: saramaCreateTopic,
		produce:     saramaProduce,
		consume:     saramaConsume,
	})
}

func saramaCreateTopic(ctx context.Context, addr, topic string, n int32) error {
	admin, err := sarama.NewClusterAdmin([]string{addr}, sarama.NewConfig())
	if err != nil {
		return fmt.Errorf("cluster admin: %w", err)
	}
	defer admin.Close()
	return withContext(ctx, func() error {
		return admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: n, ReplicationFactor: 1}, false)
	})
}

func saramaCodec(name string) (sarama.CompressionCodec, error) {
	switch name {
	case "gzip":
		return sarama.CompressionGZIP, nil
	case "snappy":
		return sarama.CompressionSnappy, nil
	case "lz4":
		return sarama.CompressionLZ4, nil
	case "zstd":
		return sarama.CompressionZSTD, nil
	}
	return sarama.CompressionNone, fmt.Errorf("unknown codec %q", name)
}

func saramaProduce(ctx context.Context, addr, topic string, v variant, recs []record) ([]location, error) {
	cfg := sarama.NewConfig()
	cfg.Producer.Return.Successes = true // a SyncProducer requires it
	switch v.acks {
	case "", "1":
	case "all":
		cfg.Producer.RequiredAcks = sarama.WaitForAll
	default:
		return nil, fmt.Errorf("sarama variant with acks=%s not supported by the suite", v.acks)
	}
	if v.codec != "" {
		c, err := saramaCodec(v.codec)
		if err != nil {
			return nil, err
		}
		cfg.Producer.Compression = c
	}
	prod, err := sarama.NewSyncProducer([]string{addr}, cfg)
	if err != nil {
		return nil, fmt.Errorf("sync producer: %w", err)
	}
	msgs := make([]*sarama.ProducerMessage, len(recs))
	for i, r := range recs {
		m := &sarama.ProducerMessage{
			Topic:     topic,
			Key:       sarama.ByteEncoder(r.Key),
			Value:     sarama.ByteEncoder(r.Value),
			Timestamp: time.UnixMilli(r.Timestamp),
		}
		for _, h := range r.Headers {
			m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
		}
		msgs[i] = m
	}
	err = withContext(ctx, func() error { return prod.SendMessages(msgs) })
	if ctx.Err() == nil {
		// Not after a timeout: SendMessages may still be feeding the
		// producer, and sending to a closed producer panics.
		prod.Close()
	}
	if err != nil {
		return nil, saramaProduceError(err)
	}
	locs := make([]location, len(msgs))
	for i, m := range msgs {
		locs[i] = location{Partition: m.Partition, Offset: m.Offset}
	}
	return locs, nil
}

// saramaProduceError summarizes ProducerErrors, which can hold thousands.
func saramaProduceError(err error) error {
	var pe sarama.ProducerErrors
	if errors.As(err, &pe) && len(pe) > 0 {
		return fmt.Errorf("%d records failed, the first: %w", len(pe), pe[0].Err)
	}
	return err
}

func saramaConsume(ctx context.Context, addr, topic string, n int32) ([]record, error) {
	client, err := sarama.NewClient([]string{addr}, sarama.NewConfig())
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	defer client.Close()
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		return nil, fmt.Errorf("consumer: %w", err)
	}
	defer consumer.Close()
	// All partitions at once, as an application would: sarama fetches
	// them together.
	parts := make([][]record, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for p := range n {
		end, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			return nil, fmt.Errorf("high watermark of partition %d: %w", p, err)
		}
		if end == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[p], errs[p] = saramaConsumePartition(ctx, consumer, topic, p, end)
		}()
	}
	wg.Wait()
	return slices.Concat(parts...), errors.Join(errs...)
}

// saramaConsumePartition reads partition p from offset 0 up to end.
func saramaConsumePartition(ctx context.Context, consumer sarama.Consumer, topic string, p int32, end int64) ([]record, error) {
	pc, err := consumer.ConsumePartition(topic, p, 0)
	if err != nil {
		return nil, fmt.Errorf("consume partition %d: %w", p, err)
	}
	defer pc.Close()
	var out []record
	for {
		select {
		case m, ok := <-pc.Messages():
			if !ok {
				return out, fmt.Errorf("partition %d: consumer closed at %d records of %d", p, len(out), end)
			}
			out = append(out, saramaRecord(m))
			if m.Offset >= end-1 {
				return out, nil
			}
		case <-ctx.Done():
			return out, fmt.Errorf("partition %d: %d records read, high watermark %d: %w", p, len(out), end, ctx.Err())
		}
	}
}

func saramaRecord(m *sarama.ConsumerMessage) record {
	r := record{
		Partition:     m.Partition,
		Offset:        m.Offset,
		Key:           m.Key,
		Value:         m.Value,
		Timestamp:     m.Timestamp.UnixMilli(),
		TimestampType: -1, // sarama does not expose it
	}
	for _, h := range m.Headers {
		r.Headers = append(r.Headers, header{Key: string(h.Key), Value: h.Value})
	}
	return r
}

// withContext runs f, a call that takes no context, and returns its error,
// or ctx's error if ctx ends first (f then finishes in the background).
func withContext(ctx context.Context, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
