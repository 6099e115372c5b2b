package failover

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// natsProducer is the verifiable producer of the NATS reference: the same
// records (record.go's values) at the same rate as the weir producer,
// published with nats.go's JetStream client to one subject per partition
// (natsSubject), async with PublishAsync (the default) or one at a time
// with Publish (Config.Sync). The pub ack's stream sequence is the
// record's offset.
type natsProducer struct {
	sync bool
	// noAck publishes with core NATS, no pub ack (acks=0): a record counts
	// as acknowledged once handed to the connection, offset -1.
	noAck      bool
	msgID      bool // set Nats-Msg-Id (Config.Idempotent)
	conn       *nats.Conn
	js         jetstream.JetStream
	topics     []string
	partitions int
	size       int
	timeout    time.Duration

	mu     sync.Mutex
	errors map[string]int64
}

// natsSubject is partition p of topic's subject; natsStreamName its
// stream.
func natsSubject(topic string, p int) string { return fmt.Sprintf("%s.%d", topic, p) }

func natsStreamName(topic string) string { return topic }

// natsProducerSettings states the producer's settings, for the report.
func natsProducerSettings(cfg Config) []string {
	mode := "async PublishAsync with pub-ack futures"
	if cfg.Sync {
		mode = "sync Publish (each after the previous one's outcome)"
	}
	acks := "pub ack after the stream's R3 quorum (2 of 3) stored the message (NATS's only ack; acks=all)"
	switch cfg.Acks {
	case AcksLeader:
		acks = "acks=1 has no NATS equivalent: the R3 quorum pub ack (2 of 3) is used, as for acks=all"
	case AcksNone:
		acks = "acks=0: core NATS publish without a pub ack (acknowledged once handed to the connection)"
	}
	s := []string{"nats.go " + natsClientVersion() + " jetstream", mode, acks,
		fmt.Sprintf("Nats-Msg-Id set (server de-duplication): %v (--idempotent)", cfg.Idempotent),
		fmt.Sprintf("pub ack wait %v (nats.go's default request timeout, set on PublishAsync too)", min(natsAckWait, cfg.RoundTimeout)),
		fmt.Sprintf("a failed publish (no responders after nats.go's 2 retries, no pub ack, a dropped connection) published again every %v until %v after its send (--round-timeout, as franz-go's record delivery timeout)", natsRetryWait, cfg.RoundTimeout),
		fmt.Sprintf("records spread round-robin over %d topic stream(s) x %d subjects <topic>.<partition>", cfg.Topics, cfg.Partitions),
		"other settings nats.go's defaults (4,000 async publishes outstanding, reconnect wait 2 s)"}
	return s
}

// newNATSProducer connects to urls.
func newNATSProducer(cfg Config, urls string) (*natsProducer, error) {
	conn, err := nats.Connect(urls)
	if err != nil {
		return nil, fmt.Errorf("nats producer: connect: %w", err)
	}
	js, err := jetstream.New(conn, jetstream.WithPublishAsyncTimeout(min(natsAckWait, cfg.RoundTimeout)))
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("nats producer: %w", err)
	}
	return &natsProducer{sync: cfg.Sync, noAck: cfg.Acks == AcksNone, msgID: cfg.Idempotent, conn: conn, js: js,
		topics: cfg.topicNames(), partitions: cfg.Partitions, size: cfg.RecordSize, timeout: cfg.RoundTimeout,
		errors: map[string]int64{}}, nil
}

// send sends n records of round at rate per second; see producer.send.
func (p *natsProducer) send(ctx context.Context, round uint32, n, rate int, rs *roundSends) error {
	start := time.Now()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for seq := 0; seq < n; {
		due := min(n, int(time.Since(start).Seconds()*float64(rate))+1)
		for ; seq < due; seq++ {
			if err := p.sendOne(ctx, round, uint32(seq), rs); err != nil {
				return err
			}
		}
		if seq >= n {
			break
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-tick.C:
		}
	}
	return nil
}

// natsAckWait bounds the wait for one publish's pub ack: nats.go's
// default request timeout (a sync Publish's without a deadline;
// PublishAsync has none unless set).
const natsAckWait = 5 * time.Second

// natsRetryWait is the pause before a failed publish is tried again:
// nats.go's own retry wait on "no responders".
const natsRetryWait = jetstream.DefaultPubRetryWait

// sendOne publishes one record and records its outcome in rs (at once
// when sync, from a goroutine when async). A failed publish (no
// responders after nats.go's own retries, no pub ack within natsAckWait,
// a dropped connection) is published again after natsRetryWait until
// Config.RoundTimeout after the record's send, as franz-go retries until
// its record delivery timeout; without Nats-Msg-Id (--idempotent) a retry
// of a publish that was stored after all is a duplicate.
func (p *natsProducer) sendOne(ctx context.Context, round, seq uint32, rs *roundSends) error {
	v := make([]byte, p.size)
	sent := time.Now()
	encodeValue(v, round, seq, sent.UnixNano())
	topic := int32(int(seq) % len(p.topics))
	part := int32(int(seq) / len(p.topics) % p.partitions)
	subject := natsSubject(p.topics[topic], int(part))
	rs.mu.Lock()
	rs.sent++
	rs.mu.Unlock()
	a := Ack{Seq: seq, Topic: topic, Partition: part, SentNs: sent.UnixNano()}
	var opts []jetstream.PublishOpt
	if p.msgID {
		opts = append(opts, jetstream.WithMsgID(fmt.Sprintf("%d-%d", round, seq)))
	}
	deadline := sent.Add(p.timeout)
	switch {
	case p.noAck:
		err := p.conn.Publish(subject, v)
		p.outcome(rs, a, -1, err)
	case p.sync:
		for {
			cctx, cancel := context.WithTimeout(ctx, min(natsAckWait, time.Until(deadline)))
			ack, err := p.js.Publish(cctx, subject, v, opts...)
			cancel()
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if err == nil || !p.retry(ctx, err, deadline) {
				p.outcome(rs, a, ackSeq(ack), err)
				return nil
			}
		}
	default:
		f, err := p.publishAsync(ctx, subject, v, opts)
		if err != nil {
			p.outcome(rs, a, -1, err)
			return nil
		}
		go func() {
			for {
				var err error
				select {
				case ack := <-f.Ok():
					p.outcome(rs, a, ackSeq(ack), nil)
					return
				case err = <-f.Err():
				}
				if !p.retry(ctx, err, deadline) {
					p.outcome(rs, a, -1, err)
					return
				}
				if f, err = p.publishAsync(ctx, subject, v, opts); err != nil {
					p.outcome(rs, a, -1, err)
					return
				}
			}
		}()
	}
	return nil
}

// publishAsync hands one publish to nats.go, waiting while its window of
// outstanding publishes is full.
func (p *natsProducer) publishAsync(ctx context.Context, subject string, v []byte, opts []jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	for {
		f, err := p.js.PublishAsync(subject, v, opts...)
		if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
			return f, err
		}
		if ctx.Err() != nil { // the window is full: the record was not sent
			return nil, context.Cause(ctx)
		}
	}
}

// retry counts a failed attempt's error and reports whether to publish
// again: after natsRetryWait, if that is before deadline.
func (p *natsProducer) retry(ctx context.Context, err error, deadline time.Time) bool {
	p.mu.Lock()
	p.errors[natsErrorName(err)]++
	p.mu.Unlock()
	if time.Until(deadline) <= natsRetryWait {
		return false
	}
	t := time.NewTimer(natsRetryWait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func ackSeq(a *jetstream.PubAck) int64 {
	if a == nil {
		return -1
	}
	return int64(a.Sequence)
}

// outcome records one send's outcome.
func (p *natsProducer) outcome(rs *roundSends, a Ack, offset int64, err error) {
	now := time.Now().UnixNano()
	a.Offset, a.DoneNs, a.Err = offset, now, err != nil
	rs.mu.Lock()
	rs.acks = append(rs.acks, a)
	rs.mu.Unlock()
	if err == nil {
		rs.lastAck.Store(now)
	}
	rs.done.Add(1)
}

// natsErrorName names a publish error for Round.ClientErrors.
func natsErrorName(err error) string {
	switch {
	case errors.Is(err, jetstream.ErrNoStreamResponse), errors.Is(err, nats.ErrNoResponders):
		return "nats: no responders"
	case errors.Is(err, jetstream.ErrAsyncPublishTimeout), errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return "nats: pub ack timeout"
	case errors.Is(err, nats.ErrDisconnected), errors.Is(err, nats.ErrConnectionClosed):
		return "nats: disconnected"
	}
	s := err.Error()
	if i := strings.Index(s, " (10"); i > 0 { // a JetStream API error: "nats: ... (10xxx)"
		s = s[:i]
	}
	return s
}

func (p *natsProducer) errorCounts() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int64, len(p.errors))
	for k, v := range p.errors {
		out[k] = v
	}
	return out
}

func (p *natsProducer) close(timeout time.Duration) {
	select {
	case <-p.js.PublishAsyncComplete():
	case <-time.After(timeout):
	}
	p.conn.Close()
}

var _ sender = (*natsProducer)(nil)
