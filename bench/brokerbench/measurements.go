package brokerbench

import (
	"context"
	"fmt"
	"time"

	"github.com/weirmq/weir/bench/perf"
)

// Measure names one measurement of a repetition, by its letter in the
// list of goals (docs/benchmarks.md, "Broker").
type Measure string

// The measurements of a repetition, each on a fresh broker per target.
const (
	// Throughput: 1 KiB records at acks=1 without fsync, then the same
	// records consumed back (goals a and d).
	Throughput Measure = "a"
	// Fsync: 1 KiB records at acks=1 under an fsync policy (goal b).
	Fsync Measure = "b"
	// Latency: produce latency at a fixed rate with acks=all (goal c).
	Latency Measure = "c"
	// Small: 100-byte records at acks=1 (goal e).
	Small Measure = "e"
	// Memory: broker RSS with idle partitions (goal f).
	Memory Measure = "f"
)

// Metric names one figure of a measurement.
type Metric string

// The figures the measurements record.
const (
	ProduceMiBps   Metric = "produce MiB/s"
	ConsumeMiBps   Metric = "consume MiB/s"
	ProduceRecords Metric = "produce records/s"
	P50Ms          Metric = "p50 ms"
	P99Ms          Metric = "p99 ms"
	P999Ms         Metric = "p99.9 ms"
	RSSMB          Metric = "RSS MB"
	RSSBaselineMB  Metric = "RSS MB without topics"
	// The CPU time spent per MiB of record values: by client and broker
	// together (on 2 cores, what throughput is bound by), and by weir's
	// own process (kfake's cannot be told apart from its client's).
	ProduceCPU       Metric = "produce CPU ms/MiB"
	ProduceBrokerCPU Metric = "produce broker CPU ms/MiB"
	ConsumeCPU       Metric = "consume CPU ms/MiB"
	ConsumeBrokerCPU Metric = "consume broker CPU ms/MiB"
)

// measurement is one entry of a repetition: the targets it compares and
// how one target is measured on a fresh broker.
type measurement struct {
	id      Measure
	targets []Target
	run     func(ctx context.Context, r *runner, t Target, b broker) (map[Metric]float64, error)
}

// measurements lists a repetition's measurements in the order they run.
var measurements = []measurement{
	{Throughput, []Target{Weir, KfakeDataDir}, measureThroughput},
	{Fsync, []Target{WeirFsync, KfakeSync}, measureFsync},
	{Latency, []Target{Weir, KfakeDataDir}, measureLatency},
	{Small, []Target{Weir, KfakeDataDir}, measureSmall},
	{Memory, []Target{Weir}, measureMemory},
}

// benchTopic is the topic of the produce and consume measurements.
const benchTopic = "bench"

// measureThroughput produces Records 1 KiB records at acks=1 and consumes
// them back.
func measureThroughput(ctx context.Context, r *runner, t Target, b broker) (map[Metric]float64, error) {
	if err := createTopics(ctx, b.Addr(), []string{benchTopic}, 1, t.topicConfigs(), r.cfg.StartTimeout); err != nil {
		return nil, err
	}
	figures, err := r.produceFigures(ctx, b, r.cfg.Records, r.cfg.RecordSize)
	if err != nil {
		return nil, err
	}
	var c perf.ConsumerSummary
	err = r.cpu(b, figures, ConsumeCPU, ConsumeBrokerCPU, func() (n float64, err error) {
		c, err = r.consume(ctx, b.Addr(), benchTopic, r.cfg.Records)
		return c.MB, err
	})
	if err != nil {
		return nil, err
	}
	figures[ConsumeMiBps] = c.MBPerSec
	return figures, nil
}

// cpu runs fn, which returns the MiB it moved, and records the CPU time
// per MiB it took under total (client and broker) and, when the broker
// has a process of its own, under brokerOnly.
func (r *runner) cpu(b broker, figures map[Metric]float64, total, brokerOnly Metric, fn func() (float64, error)) error {
	start, err := readCPU(b)
	if err != nil {
		return err
	}
	moved, err := fn()
	if err != nil {
		return err
	}
	end, err := readCPU(b)
	if err != nil {
		return err
	}
	use := end.since(start)
	figures[total] = msPerMiB(use.total(), moved)
	if b.PID() != 0 {
		figures[brokerOnly] = msPerMiB(use.broker, moved)
	}
	return nil
}

// measureFsync produces Records 1 KiB records at acks=1 to a broker that
// fsyncs before it acknowledges.
func measureFsync(ctx context.Context, r *runner, t Target, b broker) (map[Metric]float64, error) {
	if err := createTopics(ctx, b.Addr(), []string{benchTopic}, 1, t.topicConfigs(), r.cfg.StartTimeout); err != nil {
		return nil, err
	}
	return r.produceFigures(ctx, b, r.cfg.Records, r.cfg.RecordSize)
}

// measureLatency produces LatencyRecords 1 KiB records at LatencyRate
// records/s with acks=all.
func measureLatency(ctx context.Context, r *runner, t Target, b broker) (map[Metric]float64, error) {
	if err := createTopics(ctx, b.Addr(), []string{benchTopic}, 1, t.topicConfigs(), r.cfg.StartTimeout); err != nil {
		return nil, err
	}
	p, err := r.produce(ctx, b.Addr(), benchTopic, r.cfg.LatencyRecords, r.cfg.RecordSize, perf.AcksAll, r.cfg.LatencyRate)
	if err != nil {
		return nil, err
	}
	return map[Metric]float64{
		P50Ms:          float64(p.P50Ms),
		P99Ms:          float64(p.P99Ms),
		P999Ms:         float64(p.P999Ms),
		ProduceRecords: p.RecordsPerSec,
	}, nil
}

// measureSmall produces SmallRecords records of SmallRecordSize bytes at
// acks=1.
func measureSmall(ctx context.Context, r *runner, t Target, b broker) (map[Metric]float64, error) {
	if err := createTopics(ctx, b.Addr(), []string{benchTopic}, 1, t.topicConfigs(), r.cfg.StartTimeout); err != nil {
		return nil, err
	}
	return r.produceFigures(ctx, b, r.cfg.SmallRecords, r.cfg.SmallRecordSize)
}

// produceFigures produces records records of size bytes at acks=1 as fast
// as they go and returns the throughput and CPU figures.
func (r *runner) produceFigures(ctx context.Context, b broker, records int64, size int) (map[Metric]float64, error) {
	figures := map[Metric]float64{}
	var p perf.ProducerSummary
	err := r.cpu(b, figures, ProduceCPU, ProduceBrokerCPU, func() (n float64, err error) {
		p, err = r.produce(ctx, b.Addr(), benchTopic, records, size, perf.AcksLeader, -1)
		return mib(p.Records, size), err
	})
	if err != nil {
		return nil, err
	}
	figures[ProduceMiBps] = p.MBPerSec
	figures[ProduceRecords] = p.RecordsPerSec
	return figures, nil
}

// measureMemory reads the broker's RSS idle without topics, then with
// IdleTopics x IdlePartitions idle partitions, each after IdleSettle.
func measureMemory(ctx context.Context, r *runner, t Target, b broker) (map[Metric]float64, error) {
	if b.PID() == 0 {
		return nil, fmt.Errorf("%s runs in this process: its memory cannot be measured apart", t)
	}
	if err := sleep(ctx, r.cfg.IdleSettle); err != nil {
		return nil, err
	}
	base, err := readRSS(b.PID())
	if err != nil {
		return nil, err
	}
	topics := make([]string, r.cfg.IdleTopics)
	for i := range topics {
		topics[i] = fmt.Sprintf("idle-%d", i)
	}
	if err := createTopics(ctx, b.Addr(), topics, int32(r.cfg.IdlePartitions), t.topicConfigs(), r.cfg.StartTimeout); err != nil {
		return nil, err
	}
	if err := sleep(ctx, r.cfg.IdleSettle); err != nil {
		return nil, err
	}
	rss, err := readRSS(b.PID())
	if err != nil {
		return nil, err
	}
	return map[Metric]float64{RSSBaselineMB: megabytes(base), RSSMB: megabytes(rss)}, nil
}

// mib is the MiB of values of records records of size bytes.
func mib(records int64, size int) float64 { return float64(records) * float64(size) / (1 << 20) }

// megabytes is n bytes in MB (10^6 bytes), the unit of the RSS goal.
func megabytes(n int64) float64 { return float64(n) / 1e6 }

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
