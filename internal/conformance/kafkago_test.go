package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

// TestKafkaGo runs the suite with segmentio/kafka-go: topics by
// Client.CreateTopics; produce with a Writer (default round-robin balancer)
// at its default acks=0 (RequireNone: no acknowledgement, so no reported
// offsets), acks=1, acks=all and each codec (at the default acks=0);
// consume with a Reader per partition, which without a group starts at the
// first offset.
//
// Every operation uses a Transport of its own (default settings) rather
// than kafka-go's shared DefaultTransport, whose pooled connections to the
// broker before its restart would fail the first request after it.
func TestKafkaGo(t *testing.T) {
	vs := []variant{{name: "acks0default", acks: ""}}
	vs = append(vs, acksVariants()...)
	runSuite(t, driver{
		name:        "kafkago",
		defaultAcks: "0",
		variants:    append(vs, codecVariants(allCodecs...)...),
		createTopic: kafkagoCreateTopic,
		produce:     kafkagoProduce,
		consume:     kafkagoConsume,
	})
}

func kafkagoCreateTopic(ctx context.Context, addr, topic string, n int32) error {
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	c := &kafka.Client{Addr: kafka.TCP(addr), Transport: tr}
	resp, err := c.CreateTopics(ctx, &kafka.CreateTopicsRequest{
		Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: int(n), ReplicationFactor: 1}},
	})
	if err != nil {
		return err
	}
	return resp.Errors[topic]
}

func kafkagoCodec(name string) (kafka.Compression, error) {
	switch name {
	case "gzip":
		return kafka.Gzip, nil
	case "snappy":
		return kafka.Snappy, nil
	case "lz4":
		return kafka.Lz4, nil
	case "zstd":
		return kafka.Zstd, nil
	}
	return 0, fmt.Errorf("unknown codec %q", name)
}

func kafkagoProduce(ctx context.Context, addr, topic string, v variant, recs []record) ([]location, error) {
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, Transport: tr}
	switch v.acks {
	case "":
	case "1":
		w.RequiredAcks = kafka.RequireOne
	case "all":
		w.RequiredAcks = kafka.RequireAll
	default:
		return nil, fmt.Errorf("kafka-go variant with acks=%s not supported by the suite", v.acks)
	}
	if v.codec != "" {
		c, err := kafkagoCodec(v.codec)
		if err != nil {
			return nil, err
		}
		w.Compression = c
	}
	// Completion reports where each acknowledged batch went.
	index := make(map[string]int, len(recs))
	for i, r := range recs {
		index[string(r.Key)] = i
	}
	locs := make([]location, len(recs))
	var mu sync.Mutex
	w.Completion = func(msgs []kafka.Message, err error) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			if i, ok := index[string(m.Key)]; ok && err == nil {
				locs[i] = location{Partition: int32(m.Partition), Offset: m.Offset}
			}
		}
	}
	msgs := make([]kafka.Message, len(recs))
	for i, r := range recs {
		m := kafka.Message{Key: r.Key, Value: r.Value, Time: time.UnixMilli(r.Timestamp)}
		for _, h := range r.Headers {
			m.Headers = append(m.Headers, kafka.Header{Key: h.Key, Value: h.Value})
		}
		msgs[i] = m
	}
	err := w.WriteMessages(ctx, msgs...)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, kafkagoWriteError(err)
	}
	if w.RequiredAcks == kafka.RequireNone {
		return nil, nil // nothing acknowledged, nothing reported
	}
	return locs, nil
}

// kafkagoWriteError summarizes WriteErrors, which hold one entry per message.
func kafkagoWriteError(err error) error {
	var we kafka.WriteErrors
	if errors.As(err, &we) {
		for _, e := range we {
			if e != nil {
				return fmt.Errorf("%d of %d messages failed, the first: %w", we.Count(), len(we), e)
			}
		}
	}
	return err
}

func kafkagoConsume(ctx context.Context, addr, topic string, n int32) ([]record, error) {
	ends, err := kafkagoEndOffsets(ctx, addr, topic, n)
	if err != nil {
		return nil, err
	}
	parts := make([][]record, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for p, end := range ends {
		if end == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[p], errs[p] = kafkagoConsumePartition(ctx, addr, topic, int32(p), end)
		}()
	}
	wg.Wait()
	return slices.Concat(parts...), errors.Join(errs...)
}

// kafkagoConsumePartition reads partition p from its first offset up to end.
func kafkagoConsumePartition(ctx context.Context, addr, topic string, p int32, end int64) ([]record, error) {
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{addr}, Topic: topic, Partition: int(p)})
	// Close waits for the Reader's next fetch, a long poll of MaxWait (10 s
	// by default) at the end of the partition: let it finish on its own.
	defer func() { go r.Close() }()
	var out []record
	for {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			return out, fmt.Errorf("partition %d: %d records read, high watermark %d: %w", p, len(out), end, err)
		}
		out = append(out, kafkagoRecord(m))
		if m.Offset >= end-1 {
			return out, nil
		}
	}
}

func kafkagoRecord(m kafka.Message) record {
	r := record{
		Partition:     int32(m.Partition),
		Offset:        m.Offset,
		Key:           m.Key,
		Value:         m.Value,
		Timestamp:     m.Time.UnixMilli(),
		TimestampType: -1, // kafka-go does not expose it
	}
	for _, h := range m.Headers {
		r.Headers = append(r.Headers, header{Key: h.Key, Value: h.Value})
	}
	return r
}

// kafkagoEndOffsets returns the high watermarks of partitions 0..n-1.
func kafkagoEndOffsets(ctx context.Context, addr, topic string, n int32) ([]int64, error) {
	req := &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{}}
	for p := range n {
		req.Topics[topic] = append(req.Topics[topic], kafka.LastOffsetOf(int(p)))
	}
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&kafka.Client{Addr: kafka.TCP(addr), Transport: tr}).ListOffsets(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("list offsets: %w", err)
	}
	ends := make([]int64, n)
	seen := 0
	for _, po := range resp.Topics[topic] {
		if po.Error != nil {
			return nil, fmt.Errorf("list offsets of partition %d: %w", po.Partition, po.Error)
		}
		if po.Partition < 0 || po.Partition >= int(n) {
			return nil, fmt.Errorf("list offsets: unexpected partition %d", po.Partition)
		}
		ends[po.Partition] = po.LastOffset
		seen++
	}
	if seen != int(n) {
		return nil, fmt.Errorf("list offsets: %d partitions answered, want %d", seen, n)
	}
	return ends, nil
}
