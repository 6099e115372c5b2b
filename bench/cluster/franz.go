package cluster

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// producer is a client producing one record to every partition of the
// failover topic every Config.ProduceEvery, at its default settings, and
// logging when each partition's records are acknowledged.
type producer interface {
	// label names the client and its version ("franz-go v1.22.3").
	label() string
	// acks is the producer's acknowledgement log.
	acks() *ackLog
	// stop ends the producer, lets it deliver what it holds (bounded),
	// and completes the log's totals.
	stop() error
}

// franzProducer is franz-go (kgo) in this process.
type franzProducer struct {
	cl     *kgo.Client
	log    *ackLog
	cancel context.CancelFunc
	done   chan struct{}
	parts  int
	meta   *metadataHook
}

// metadataHook records when the client wrote each Metadata request: when
// it looked for new leaders.
type metadataHook struct {
	mu    sync.Mutex
	times []time.Time
}

func (h *metadataHook) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == kmsg.Metadata.Int16() && err == nil {
		h.mu.Lock()
		h.times = append(h.times, time.Now())
		h.mu.Unlock()
	}
}

// metadataAfter returns the times of the Metadata requests written in
// [from, to], as durations since from.
func (f *franzProducer) metadataAfter(from, to time.Time) []time.Duration {
	f.meta.mu.Lock()
	defer f.meta.mu.Unlock()
	var out []time.Duration
	for _, t := range f.meta.times {
		if !t.Before(from) && !t.After(to) {
			out = append(out, t.Sub(from))
		}
	}
	return out
}

// startFranz starts a franz-go producer at its defaults, except that the
// record's partition is chosen by the benchmark (ManualPartitioner), and
// returns once every partition acknowledged a first record. A hook (which
// changes nothing the client does) records its Metadata requests.
func startFranz(ctx context.Context, seeds []string, topic string, partitions int, every, minGap, timeout time.Duration) (*franzProducer, error) {
	hook := &metadataHook{}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.WithHooks(hook))
	if err != nil {
		return nil, fmt.Errorf("franz-go client: %w", err)
	}
	f := &franzProducer{cl: cl, log: newAckLog(partitions, minGap), done: make(chan struct{}), parts: partitions, meta: hook}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, partitions)
	for p := range partitions {
		wg.Add(1)
		cl.Produce(sctx, &kgo.Record{Partition: int32(p), Value: make([]byte, recordBytes)}, func(r *kgo.Record, err error) {
			defer wg.Done()
			errs[p] = err
			if err == nil {
				f.log.ack(r.Partition, time.Now())
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		cl.Close()
		return nil, fmt.Errorf("franz-go first records: %w", err)
	}
	pctx, pcancel := context.WithCancel(context.Background())
	f.cancel = pcancel
	go f.run(pctx, every)
	return f, nil
}

// recordBytes is the value size of the failover producers' records.
const recordBytes = 100

// run produces until ctx ends. TryProduce never blocks: a record the
// client has no room for (its buffer is full while partitions stall) is
// counted as dropped, so a stalled partition never holds up the others.
func (f *franzProducer) run(ctx context.Context, every time.Duration) {
	defer close(f.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	value := make([]byte, recordBytes)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for p := range f.parts {
			f.cl.TryProduce(ctx, &kgo.Record{Partition: int32(p), Value: value}, func(r *kgo.Record, err error) {
				switch {
				case err == nil:
					f.log.ack(r.Partition, time.Now())
				case errors.Is(err, kgo.ErrMaxBuffered):
					f.log.count(0, 0, 1)
				case errors.Is(err, context.Canceled):
				default:
					f.log.count(0, 1, 0)
				}
			})
		}
	}
}

func (f *franzProducer) label() string {
	return "franz-go " + moduleVersion("github.com/twmb/franz-go")
}

func (f *franzProducer) acks() *ackLog { return f.log }

func (f *franzProducer) stop() error {
	f.cancel()
	<-f.done
	fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := f.cl.Flush(fctx)
	f.cl.Close()
	if err != nil {
		return fmt.Errorf("franz-go flush: %w", err)
	}
	return nil
}

// moduleVersion returns the version of module path this program was built
// with, or "(unknown version)".
func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "(unknown version)"
}
