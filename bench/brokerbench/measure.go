package brokerbench

import (
	"context"
	"fmt"

	"github.com/weirmq/weir/bench/perf"
)

// produce runs a franz-go producer (bench/perf) against addr with the
// peers' setup: Config's linger, batch bytes and requests in flight. At
// acks=all it is idempotent (franz-go's default, five requests in flight);
// otherwise it is not, as the client requires.
func (r *runner) produce(ctx context.Context, addr, topic string, records int64, size int, acks perf.Acks, rate float64) (perf.ProducerSummary, error) {
	cfg := perf.DefaultProducerConfig()
	cfg.Brokers = []string{addr}
	cfg.Topic = topic
	cfg.Records = records
	cfg.RecordSize = size
	cfg.Acks = acks
	cfg.Idempotent = acks == perf.AcksAll
	cfg.Throughput = rate
	cfg.Linger = r.cfg.Linger
	cfg.BatchBytes = r.cfg.BatchBytes
	cfg.MaxInFlight = r.cfg.MaxInFlight
	cfg.Compression = r.cfg.Compression
	cfg.ReportInterval = 0
	res, err := perf.RunProducer(ctx, cfg, nil)
	if err != nil {
		return perf.ProducerSummary{}, fmt.Errorf("produce %d records of %d B to %s at %s: %w", records, size, topic, addr, err)
	}
	return res.Summary(), nil
}

// consume reads records records of topic from its start, without a group.
func (r *runner) consume(ctx context.Context, addr, topic string, records int64) (perf.ConsumerSummary, error) {
	cfg := perf.DefaultConsumerConfig()
	cfg.Brokers = []string{addr}
	cfg.Topic = topic
	cfg.Records = records
	cfg.Timeout = r.cfg.ConsumeTimeout
	res, err := perf.RunConsumer(ctx, cfg, nil)
	if err != nil {
		return perf.ConsumerSummary{}, fmt.Errorf("consume %d records of %s at %s: %w", records, topic, addr, err)
	}
	return res.Summary(), nil
}
