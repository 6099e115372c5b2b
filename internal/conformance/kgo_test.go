package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKgo runs the suite with franz-go's kgo: topics by kadm; produce at
// the default acks=all with the idempotent producer and default snappy
// compression, or acks=1 (which kgo only allows without idempotence), or
// each codec; consume with ConsumePartitions from offset 0.
func TestKgo(t *testing.T) {
	runSuite(t, driver{
		name:        "kgo",
		variants:    append(acksVariants(), codecVariants(allCodecs...)...),
		createTopic: kadmCreateTopic,
		produce:     kgoProduce,
		consume:     kgoConsume,
	})
}

func kgoCodec(name string) (kgo.CompressionCodec, error) {
	switch name {
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.NoCompression(), fmt.Errorf("unknown codec %q", name)
}

func kgoProduce(ctx context.Context, addr, topic string, v variant, recs []record) ([]location, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(addr)}
	switch v.acks {
	case "", "all":
	case "1":
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	default:
		return nil, fmt.Errorf("kgo variant with acks=%s not supported by the suite", v.acks)
	}
	if v.codec != "" {
		c, err := kgoCodec(v.codec)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.ProducerBatchCompression(c))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("new client: %w", err)
	}
	defer cl.Close()

	locs := make([]location, len(recs))
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for i, r := range recs {
		kr := &kgo.Record{
			Topic:     topic,
			Key:       r.Key,
			Value:     r.Value,
			Timestamp: time.UnixMilli(r.Timestamp),
		}
		for _, h := range r.Headers {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
		}
		wg.Add(1)
		cl.Produce(ctx, kr, func(kr *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = fmt.Errorf("record %d: %w", i, err)
				}
				mu.Unlock()
				return
			}
			locs[i] = location{Partition: kr.Partition, Offset: kr.Offset}
		})
	}
	wg.Wait()
	return locs, firstErr
}

func kgoConsume(ctx context.Context, addr, topic string, n int32) ([]record, error) {
	ends, err := kgoEndOffsets(ctx, addr, topic, n)
	if err != nil {
		return nil, err
	}
	start := make(map[int32]kgo.Offset, n)
	for p := range n {
		start[p] = kgo.NewOffset().At(0)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: start}))
	if err != nil {
		return nil, fmt.Errorf("new client: %w", err)
	}
	defer cl.Close()
	var out []record
	remaining := pendingPartitions(ends)
	for len(remaining) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("partitions %v not read to their end: %w", remaining, err)
		}
		var errs []error
		fs.EachError(func(t string, p int32, err error) {
			errs = append(errs, fmt.Errorf("fetch %s[%d]: %w", t, p, err))
		})
		if len(errs) > 0 {
			return out, errors.Join(errs...)
		}
		fs.EachRecord(func(kr *kgo.Record) {
			out = append(out, kgoRecord(kr))
			if kr.Offset >= ends[kr.Partition]-1 {
				delete(remaining, kr.Partition)
			}
		})
	}
	return out, nil
}

func kgoRecord(kr *kgo.Record) record {
	r := record{
		Partition:     kr.Partition,
		Offset:        kr.Offset,
		Key:           kr.Key,
		Value:         kr.Value,
		Timestamp:     kr.Timestamp.UnixMilli(),
		TimestampType: kr.Attrs.TimestampType(),
	}
	for _, h := range kr.Headers {
		r.Headers = append(r.Headers, header{Key: h.Key, Value: h.Value})
	}
	return r
}

// kgoEndOffsets returns the high watermark of partitions 0..n-1 by kadm.
func kgoEndOffsets(ctx context.Context, addr, topic string, n int32) (map[int32]int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil, fmt.Errorf("new client: %w", err)
	}
	defer cl.Close()
	listed, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	ends := make(map[int32]int64, n)
	for p := range n {
		o, ok := listed.Lookup(topic, p)
		if !ok {
			return nil, fmt.Errorf("list end offsets: partition %d missing", p)
		}
		ends[p] = o.Offset
	}
	return ends, nil
}

// pendingPartitions returns the partitions with records to read, as a set.
func pendingPartitions(ends map[int32]int64) map[int32]bool {
	m := make(map[int32]bool)
	for p, end := range ends {
		if end > 0 {
			m[p] = true
		}
	}
	return m
}
