package partitiontest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/log/batch"
)

// attempt is one produce request of a directProducer: one record to one
// partition.
type attempt struct {
	value  string
	part   int32
	sent   time.Time // just before the request was written
	done   time.Time // when its answer (or its failure) arrived
	code   int16     // the partition's error code; -1 when err is set
	err    error     // a transport error: no answer
	offset int64     // the record's offset, when code is 0
}

// ok reports whether the node acknowledged the record.
func (a attempt) ok() bool { return a.err == nil && a.code == 0 }

// outcome describes a's answer.
func (a attempt) outcome() string {
	switch {
	case a.err != nil:
		return a.err.Error()
	case a.code == 0:
		return fmt.Sprintf("acknowledged at offset %d", a.offset)
	default:
		return kerr.ErrorForCode(a.code).Error()
	}
}

// directProducer sends raw Produce requests, one record each, to one
// node only, over a connection of its own, round robin over a set of
// partitions, one request at a time, and records every attempt. Records
// are not idempotent, so a retry cannot hide anything: each value is sent
// once.
type directProducer struct {
	label     string
	nd        *node
	topic     string
	parts     []int32
	acks      int16
	timeoutMs int32
	client    *kgo.Client

	mu       sync.Mutex
	attempts []attempt
}

// newDirectProducer returns a producer to nd; its client is closed when
// the test ends.
func (c *cluster) newDirectProducer(label string, nd *node, topic string, parts []int32, acks int16, timeout time.Duration) *directProducer {
	c.t.Helper()
	// franz-go rewrites a raw Produce request's acks to the client's
	// RequiredAcks, so the client is configured with the same acks.
	opts := []kgo.Opt{kgo.SeedBrokers(nd.kafka), kgo.RequestRetries(0)}
	switch acks {
	case -1:
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case 1:
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	default:
		c.t.Fatalf("directProducer: acks %d: want -1 or 1", acks)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return &directProducer{label: label, nd: nd, topic: topic, parts: parts, acks: acks,
		timeoutMs: int32(timeout / time.Millisecond), client: cl}
}

// pace is the pause between two requests of a directProducer, so that a
// node answering at once with an error is not flooded.
const pace = 20 * time.Millisecond

// run sends requests until stop is closed, then returns.
func (p *directProducer) run(stop <-chan struct{}) {
	tick := time.NewTicker(pace)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		part := p.parts[i%len(p.parts)]
		a := p.send(part, fmt.Sprintf("%s-%d-%06d", p.label, part, i))
		p.mu.Lock()
		p.attempts = append(p.attempts, a)
		p.mu.Unlock()
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

// send produces one record and waits for the answer.
func (p *directProducer) send(part int32, value string) attempt {
	a := attempt{value: value, part: part, code: -1, offset: -1}
	rec, err := batch.Build(batch.Options{
		ProducerID: batch.NoProducerID, ProducerEpoch: batch.NoProducerEpoch, BaseSequence: batch.NoSequence,
		PartitionLeaderEpoch: batch.NoPartitionLeaderEpoch, BaseTimestamp: time.Now().UnixMilli(),
	}, []kmsg.Record{{Value: []byte(value)}})
	if err != nil {
		a.err = err
		return a
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = p.acks, p.timeoutMs
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = p.topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = part, rec
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)

	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	a.sent = time.Now()
	resp, err := p.client.SeedBrokers()[0].Request(ctx, req)
	a.done = time.Now()
	if err != nil {
		a.err = err
		return a
	}
	r := resp.(*kmsg.ProduceResponse)
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		a.err = fmt.Errorf("produce response with %d topics", len(r.Topics))
		return a
	}
	rpart := r.Topics[0].Partitions[0]
	a.code, a.offset = rpart.ErrorCode, rpart.BaseOffset
	return a
}

// all returns a copy of the attempts so far.
func (p *directProducer) all() []attempt {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]attempt(nil), p.attempts...)
}

// answeredAfter counts the attempts sent after t that got an answer.
func (p *directProducer) answeredAfter(t time.Time) int {
	n := 0
	for _, a := range p.all() {
		if a.sent.After(t) && a.err == nil {
			n++
		}
	}
	return n
}

// acked is one record a producer had acknowledged.
type acked struct {
	value  string
	part   int32
	offset int64
	at     time.Time
}

// clusterProducer is an idempotent franz-go producer with acks=all at its
// defaults but for quicker metadata refreshes, writing round robin over
// every partition of a topic with a bounded number of records in flight,
// recording what was acknowledged.
type clusterProducer struct {
	label  string
	topic  string
	nparts int32
	client *kgo.Client

	next atomic.Int64 // the next value's sequence number

	mu     sync.Mutex
	acks   []acked
	failed []string // the first few failures, for the log
	nfail  int
}

// nextRecord returns the next record: round robin over the partitions,
// a value unique to the producer.
func (p *clusterProducer) nextRecord() *kgo.Record {
	i := p.next.Add(1) - 1
	part := int32(i % int64(p.nparts))
	return &kgo.Record{Topic: p.topic, Partition: part, Value: fmt.Appendf(nil, "%s-%d-%06d", p.label, part, i)}
}

// maxInFlight bounds a clusterProducer's records awaiting an answer.
const maxInFlight = 8

// newClusterProducer returns a producer bootstrapped from seeds; its
// client is closed when the test ends.
func (c *cluster) newClusterProducer(label string, seeds []string, topic string, nparts int32) *clusterProducer {
	c.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.MetadataMinAge(250*time.Millisecond), kgo.ProduceRequestTimeout(2*time.Second),
		kgo.RecordDeliveryTimeout(30*time.Second))
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return &clusterProducer{label: label, topic: topic, nparts: nparts, client: cl}
}

// run produces until stop is closed, then waits for the answers of the
// records in flight.
func (p *clusterProducer) run(stop <-chan struct{}) {
	slots := make(chan struct{}, maxInFlight)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-stop:
			return
		case slots <- struct{}{}:
		}
		rec := p.nextRecord()
		wg.Add(1)
		p.client.Produce(context.Background(), rec, func(r *kgo.Record, err error) {
			defer wg.Done()
			defer func() { <-slots }()
			p.mu.Lock()
			defer p.mu.Unlock()
			if err != nil {
				p.nfail++
				if len(p.failed) < 5 {
					p.failed = append(p.failed, fmt.Sprintf("%s: %v", r.Value, err))
				}
				return
			}
			p.acks = append(p.acks, acked{value: string(r.Value), part: r.Partition, offset: r.Offset, at: time.Now()})
		})
	}
}

// produceN produces n records and waits for them, failing the test on
// any failure (for phases where the cluster is whole).
func (c *cluster) produceN(p *clusterProducer, n int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		p.client.Produce(ctx, p.nextRecord(), func(r *kgo.Record, err error) {
			defer wg.Done()
			p.mu.Lock()
			defer p.mu.Unlock()
			if err != nil {
				p.nfail++
				p.failed = append(p.failed, fmt.Sprintf("%s: %v", r.Value, err))
				return
			}
			p.acks = append(p.acks, acked{value: string(r.Value), part: r.Partition, offset: r.Offset, at: time.Now()})
		})
	}
	wg.Wait()
	if p.failures() > 0 {
		c.t.Fatalf("%s: %d produces failed on a whole cluster: %s", p.label, p.failures(), p.firstFailures())
	}
}

// all returns a copy of the acknowledged records so far.
func (p *clusterProducer) all() []acked {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]acked(nil), p.acks...)
}

// failures returns how many records failed.
func (p *clusterProducer) failures() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.nfail
}
