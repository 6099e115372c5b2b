package chaos

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// flushTimeout bounds a producer's last flush when it stops.
const flushTimeout = 60 * time.Second

// ProducerOptions shape a continuous producer.
type ProducerOptions struct {
	// Name prefixes the record values (Value); it must be unique in the
	// test.
	Name string
	// Topic receives the records; the client picks partitions with its
	// default partitioner (records have no key).
	Topic string
	// Seeds are the bootstrap addresses.
	Seeds []string
	// Interval is the time between two sends; 0 means 2 ms.
	Interval time.Duration
}

func (o ProducerOptions) interval() time.Duration {
	if o.Interval <= 0 {
		return 2 * time.Millisecond
	}
	return o.Interval
}

// FranzProducer sends records continuously with a franz-go client at its
// defaults (idempotent, acks=all, unlimited retries) and records every
// outcome in a Ledger.
type FranzProducer struct {
	name   string
	cl     *kgo.Client
	ledger *Ledger
	cancel context.CancelFunc
	done   chan struct{}
	sent   atomic.Int64
	acked  atomic.Int64

	stopOnce sync.Once
}

// StartFranz starts a franz-go producer with the client options extra
// added to its defaults, and returns once its first record was
// acknowledged. It fails the test on error.
func StartFranz(t testing.TB, ledger *Ledger, o ProducerOptions, extra ...kgo.Opt) *FranzProducer {
	t.Helper()
	opts := append([]kgo.Opt{kgo.SeedBrokers(o.Seeds...), kgo.DefaultProduceTopic(o.Topic)}, extra...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatalf("chaos: franz-go producer %s: %v", o.Name, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &FranzProducer{name: o.Name, cl: cl, ledger: ledger, cancel: cancel, done: make(chan struct{})}
	t.Cleanup(p.Stop)
	go p.run(ctx, o.interval())
	if why, ok := waitFor(60*time.Second, func() (bool, string) { return p.acked.Load() > 0, "no record acknowledged" }); !ok {
		t.Fatalf("chaos: franz-go producer %s: %s within a minute (%d failed: %v)", o.Name, why, ledger.Failed(), ledger.FailedErrors(3))
	}
	return p
}

func (p *FranzProducer) run(ctx context.Context, every time.Duration) {
	defer close(p.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for seq := int64(0); ; seq++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		v := Value(p.name, seq)
		p.sent.Add(1)
		// The record's context is not ctx: stopping ends the sends, and
		// the records in flight are still flushed.
		p.cl.Produce(context.Background(), &kgo.Record{Value: []byte(v)}, func(r *kgo.Record, err error) {
			if err != nil {
				p.ledger.Fail(v, err)
				return
			}
			p.acked.Add(1)
			p.ledger.Ack(Ack{Partition: r.Partition, Offset: r.Offset, Value: v})
		})
	}
}

// Name returns the producer's value prefix.
func (p *FranzProducer) Name() string { return p.name }

// Acked returns how many records were acknowledged so far.
func (p *FranzProducer) Acked() int64 { return p.acked.Load() }

// Stop ends the sends, waits (a minute at most) until every record in
// flight has its outcome, and closes the client; records still unsent
// then are recorded as failed. Calling it again does nothing.
func (p *FranzProducer) Stop() {
	p.stopOnce.Do(func() {
		p.cancel()
		<-p.done
		ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
		defer cancel()
		_ = p.cl.Flush(ctx) // on timeout, Close fails what is left
		p.cl.Close()
	})
}
