package failover

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weirmq/weir/bench/cluster"
)

// producer is the verifiable producer: franz-go, async sends with
// callbacks, each record's value carrying its round, its number and its
// send time.
type producer struct {
	// sync sends each record only after the previous one's outcome, as
	// seed 000's producer did.
	sync   bool
	cl     *kgo.Client
	tally  *errorTally
	topics []string
	size   int
}

// roundSends collects one round's sends and outcomes.
type roundSends struct {
	mu      sync.Mutex
	sent    int
	acks    []Ack
	done    atomic.Int64 // outcomes so far
	lastAck atomic.Int64 // Unix ns of the latest acknowledgement
}

// producerSettings are the client options beyond the defaults, for the
// report.
func producerSettings(cfg Config) []string {
	mode := "async sends with callbacks"
	if cfg.Sync {
		mode = "sync sends (each after the previous one's outcome)"
	}
	s := []string{mode, "acks=" + cfg.Acks, fmt.Sprintf("idempotent=%v", cfg.Idempotent),
		fmt.Sprintf("record delivery timeout %v", cfg.RoundTimeout)}
	s = append(s, "round-robin partitioner (every partition written in turn, each victim's included)")
	return append(s, clientSettings(cfg.ClientTuned)...)
}

// newProducer connects a producer to seeds.
func newProducer(cfg Config, seeds []string) (*producer, error) {
	tally := newErrorTally()
	tally.produceUnanswered = cfg.Acks == AcksNone
	tally.produces = &produceLog{}
	opts := []kgo.Opt{kgo.SeedBrokers(seeds...), kgo.Dialer(tally.dial), kgo.RecordDeliveryTimeout(cfg.RoundTimeout)}
	switch cfg.Acks {
	case AcksAll:
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case AcksLeader:
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()))
	case AcksNone:
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()))
	}
	if !cfg.Idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	// Records go to every partition in turn: franz-go's default
	// partitioner keeps unkeyed records on one partition for 64 KiB (about
	// 600 records here), so a round would write to one or two partitions
	// and a fault would hit the producer only when one of them is the
	// victim's.
	opts = append(opts, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if cfg.ClientTuned {
		opts = append(opts, tunedOpts()...)
	}
	logOpts, err := clientLog(producerLogEnv)
	if err != nil {
		return nil, fmt.Errorf("producer: %w", err)
	}
	cl, err := kgo.NewClient(append(opts, logOpts...)...)
	if err != nil {
		return nil, fmt.Errorf("producer: %w", err)
	}
	return &producer{sync: cfg.Sync, cl: cl, tally: tally, topics: cfg.topicNames(), size: cfg.RecordSize}, nil
}

// close flushes for at most timeout and closes the client.
func (p *producer) close(timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_ = p.cl.Flush(ctx)
	p.cl.Close()
}

// send sends n records of round at rate records per second, spread over
// the topics, and returns once all were handed to the client (their
// outcomes arrive later; see roundSends).
// A sync producer waits for each outcome before the next send, so it
// sends at most at rate and falls behind while the cluster stalls.
func (p *producer) send(ctx context.Context, round uint32, n, rate int, rs *roundSends) error {
	start := time.Now()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for seq := 0; seq < n; {
		due := min(n, int(time.Since(start).Seconds()*float64(rate))+1)
		for ; seq < due; seq++ {
			done := p.sendOne(ctx, round, uint32(seq), rs)
			if p.sync {
				select {
				case <-done:
				case <-ctx.Done():
					return context.Cause(ctx)
				}
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

// sendOne sends one record; the returned channel closes at its outcome.
func (p *producer) sendOne(ctx context.Context, round, seq uint32, rs *roundSends) <-chan struct{} {
	done := make(chan struct{})
	v := make([]byte, p.size)
	sent := time.Now().UnixNano()
	encodeValue(v, round, seq, sent)
	rs.mu.Lock()
	rs.sent++
	rs.mu.Unlock()
	topic := int32(int(seq) % len(p.topics))
	r := &kgo.Record{Topic: p.topics[topic], Value: v}
	p.cl.Produce(ctx, r, func(r *kgo.Record, err error) {
		now := time.Now().UnixNano()
		a := Ack{Seq: seq, Topic: topic, Partition: r.Partition, Offset: r.Offset, SentNs: sent, DoneNs: now, Err: err != nil}
		if err == nil && p.tally.produceUnanswered {
			a.Offset = -1
		}
		rs.mu.Lock()
		rs.acks = append(rs.acks, a)
		rs.mu.Unlock()
		if err == nil {
			rs.lastAck.Store(now)
		}
		rs.done.Add(1)
		close(done)
	})
	return done
}

// waitOutcomes waits until every record sent in rs had its outcome, for
// at most timeout.
func (rs *roundSends) waitOutcomes(ctx context.Context, timeout time.Duration) error {
	rs.mu.Lock()
	sent := rs.sent
	rs.mu.Unlock()
	_, err := cluster.PollUntil(ctx, timeout, 5*time.Millisecond, "every send's outcome", func(context.Context) (bool, error) {
		return rs.done.Load() >= int64(sent), nil
	})
	return err
}

// snapshot copies the outcomes so far.
func (rs *roundSends) snapshot() (sent int, acks []Ack) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.sent, append([]Ack(nil), rs.acks...)
}

// The tuned clients' settings (--client-tuned).
const (
	tunedMetadataMinAge = 100 * time.Millisecond
	tunedMetadataMaxAge = 10 * time.Second
	tunedRetryBackoff   = 50 * time.Millisecond
)

// tunedOpts lowers franz-go's metadata ages (defaults 5 s and 5 min) and
// retry backoff (default from 250 ms up to 2.5 s, with jitter).
func tunedOpts() []kgo.Opt {
	return []kgo.Opt{kgo.MetadataMinAge(tunedMetadataMinAge), kgo.MetadataMaxAge(tunedMetadataMaxAge),
		kgo.RetryBackoffFn(func(int) time.Duration { return tunedRetryBackoff })}
}

// clientSettings states the tuning, for the report.
func clientSettings(tuned bool) []string {
	if !tuned {
		return []string{"other settings franz-go's defaults (--client-defaults)"}
	}
	return []string{fmt.Sprintf("tuned (--client-tuned): metadata min age %v, max age %v, retry backoff %v", tunedMetadataMinAge, tunedMetadataMaxAge, tunedRetryBackoff),
		"other settings franz-go's defaults"}
}

// rdkafkaSettings are the librdkafka producer's settings, for the report.
func rdkafkaSettings(cfg Config, version string) []string {
	mode := "async produce() with delivery callbacks"
	if cfg.Sync {
		mode = "sync (flush() after each produce())"
	}
	s := []string{"librdkafka " + version + " through confluent-kafka (" + cfg.Python + ")", mode, "acks=" + cfg.Acks,
		fmt.Sprintf("enable.idempotence=%v", cfg.Idempotent), fmt.Sprintf("message.timeout.ms=%d", cfg.RoundTimeout.Milliseconds())}
	if cfg.ClientTuned {
		return append(s, "tuned: retry.backoff.ms=50, topic.metadata.refresh.interval.ms=10000, topic.metadata.refresh.fast.interval.ms=100", "other settings librdkafka's defaults")
	}
	return append(s, "other settings librdkafka's defaults; its client errors are not counted")
}
