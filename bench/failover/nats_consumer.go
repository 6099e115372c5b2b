package failover

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// natsConsumer is the verifiable consumer of the NATS reference: one
// durable pull consumer per stream (explicit ack, from the stream's
// start, every subject), each message recorded (record number,
// partition = subject index, offset = stream sequence) before it is
// acked. It keeps its reads in a consumer (consumer.go) without a Kafka
// client, so the rounds ask it what they ask the weir consumer.
type natsConsumer struct {
	*consumer
	conn  *nats.Conn
	ccs   []jetstream.ConsumeContext
	names []string // the topics, by index
}

// natsConsumerSettings states the consumer's settings, for the report.
func natsConsumerSettings(durable string) []string {
	return []string{"nats.go " + natsClientVersion() + " jetstream pull consumer, one durable per stream: " + durable,
		"deliver all, explicit ack after the message is recorded (Ack, not double-acked)",
		"Consume at nats.go's defaults (500 messages a pull, 30 s expiry, heartbeat 15 s)",
		"consumer replicas the stream's (3)"}
}

// newNATSConsumer creates the durable consumers (named durable) of
// topics' streams on urls and consumes until close.
func newNATSConsumer(ctx context.Context, urls string, topics []string, durable string, timeout time.Duration) (*natsConsumer, error) {
	conn, err := nats.Connect(urls)
	if err != nil {
		return nil, fmt.Errorf("nats consumer: connect: %w", err)
	}
	c := &natsConsumer{consumer: &consumer{done: make(chan struct{}), rounds: map[uint32]*roundReads{}, topic: topicIndex(topics)},
		conn: conn, names: topics}
	close(c.done)
	js, err := jetstream.New(conn)
	if err != nil {
		c.close()
		return nil, fmt.Errorf("nats consumer: %w", err)
	}
	for i, t := range topics {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		cons, err := js.CreateOrUpdateConsumer(cctx, natsStreamName(t), jetstream.ConsumerConfig{Durable: durable,
			AckPolicy: jetstream.AckExplicitPolicy, DeliverPolicy: jetstream.DeliverAllPolicy})
		cancel()
		if err != nil {
			c.close()
			return nil, fmt.Errorf("nats consumer on %s: %w", t, err)
		}
		topic := int32(i)
		cc, err := cons.Consume(func(m jetstream.Msg) { c.handle(topic, m) }, jetstream.ConsumeErrHandler(func(jetstream.ConsumeContext, error) {
			c.fetchErrors.Add(1)
		}))
		if err != nil {
			c.close()
			return nil, fmt.Errorf("nats consume %s: %w", t, err)
		}
		c.ccs = append(c.ccs, cc)
	}
	c.mu.Lock()
	c.assigned = true
	c.mu.Unlock()
	return c, nil
}

// handle records one message, then acks it.
func (c *natsConsumer) handle(topic int32, m jetstream.Msg) {
	md, err := m.Metadata()
	round, seq, _, derr := decodeValue(m.Data())
	part, perr := subjectPartition(m.Subject())
	if err != nil || derr != nil || perr != nil {
		c.foreign.Add(1)
		_ = m.Ack()
		return
	}
	c.recordRead(round, Read{Seq: seq, Topic: topic, Partition: part, Offset: int64(md.Sequence.Stream), AtNs: time.Now().UnixNano()})
	if err := m.Ack(); err != nil {
		c.commitFailures.Add(1)
	}
}

// recordRead notes one record read now.
func (c *consumer) recordRead(round uint32, r Read) {
	now := time.Now().UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.arrivals = append(c.arrivals, now)
	c.counts = append(c.counts, 1)
	rr := c.rounds[round]
	if rr == nil {
		rr = &roundReads{}
		c.rounds[round] = rr
	}
	rr.reads = append(rr.reads, r)
	for int(r.Seq) >= len(rr.seen) {
		rr.seen = append(rr.seen, make([]bool, len(rr.seen)+1024)...)
	}
	rr.seen[r.Seq] = true
}

// subjectPartition is the partition of a subject natsSubject made.
func subjectPartition(subject string) (int32, error) {
	i := strings.LastIndexByte(subject, '.')
	p, err := strconv.ParseInt(subject[i+1:], 10, 32)
	if i < 0 || err != nil {
		return 0, fmt.Errorf("subject %q has no partition", subject)
	}
	return int32(p), nil
}

// close stops consuming and closes the connection (the durables stay).
func (c *natsConsumer) close() {
	for _, cc := range c.ccs {
		cc.Stop()
	}
	c.conn.Close()
}

// natsReadBack reads each stream of the missing records with an ordered
// consumer, from the lowest stream sequence at which a missing record was
// acknowledged to the stream's last sequence, and returns the records of
// round it finds: readBack's work for NATS, so that a record the durable
// consumer had not reached is not counted lost.
func natsReadBack(ctx context.Context, urls string, topics []string, round uint32, missing []Ack, timeout time.Duration) ([]Read, error) {
	if len(missing) == 0 {
		return nil, nil
	}
	low := map[int32]uint64{}
	for _, a := range missing {
		o := uint64(max(a.Offset, 1))
		if l, ok := low[a.Topic]; !ok || o < l {
			low[a.Topic] = o
		}
	}
	conn, err := nats.Connect(urls)
	if err != nil {
		return nil, fmt.Errorf("read back: %w", err)
	}
	defer conn.Close()
	js, err := jetstream.New(conn)
	if err != nil {
		return nil, fmt.Errorf("read back: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var reads []Read
	var errs []error
	for topic, from := range low {
		r, err := readStream(ctx, js, topics[topic], topic, round, from)
		reads = append(reads, r...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return reads, errors.Join(errs...)
}

// readStream reads topic's stream from sequence from to its last (as
// the stream's info says when the read starts). An error (no responders
// while the JetStream API is electing, a consumer gone) starts the read
// again after the last sequence read, until ctx ends.
func readStream(ctx context.Context, js jetstream.JetStream, name string, topic int32, round uint32, from uint64) ([]Read, error) {
	var reads []Read
	var last uint64
	next := from
	var lastErr error
	for try := 0; ; try++ {
		if try > 0 {
			t := time.NewTimer(100 * time.Millisecond)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
		if ctx.Err() != nil {
			return reads, fmt.Errorf("read back %s: not read from %d to %d: %w (last error: %v)", name, next, last, context.Cause(ctx), lastErr)
		}
		if last == 0 {
			st, err := js.Stream(ctx, natsStreamName(name))
			if err != nil {
				lastErr = err
				continue
			}
			if last = st.CachedInfo().State.LastSeq; last < from {
				return nil, nil
			}
		}
		r, n, err := readStreamFrom(ctx, js, name, topic, round, next, last)
		reads, next = append(reads, r...), n
		if err == nil {
			return reads, nil
		}
		lastErr = err
	}
}

// readStreamFrom reads with one ordered consumer from sequence from to
// last and returns the reads and the next sequence to read.
func readStreamFrom(ctx context.Context, js jetstream.JetStream, name string, topic int32, round uint32, from, last uint64) ([]Read, uint64, error) {
	oc, err := js.OrderedConsumer(ctx, natsStreamName(name), jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from})
	if err != nil {
		return nil, from, err
	}
	var reads []Read
	next := from
	for next <= last {
		batch, err := oc.Fetch(500, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return reads, next, err
		}
		for m := range batch.Messages() {
			md, err := m.Metadata()
			if err != nil {
				continue
			}
			if rd, seq, _, err := decodeValue(m.Data()); err == nil && rd == round {
				if p, err := subjectPartition(m.Subject()); err == nil {
					reads = append(reads, Read{Seq: seq, Topic: topic, Partition: p, Offset: int64(md.Sequence.Stream)})
				}
			}
			next = max(next, md.Sequence.Stream+1)
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return reads, next, err
		}
		if ctx.Err() != nil {
			return reads, next, context.Cause(ctx)
		}
	}
	return reads, next, nil
}
