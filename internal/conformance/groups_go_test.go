package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"
)

// commitTimeout bounds one synchronous commit of a Go consumer.
const commitTimeout = 30 * time.Second

// TestGroupKgoEager runs the group scenario with kgo and the eager range
// balancer (kgo.Balancers(kgo.RangeBalancer())).
func TestGroupKgoEager(t *testing.T) {
	runGroupScenario(t, kgoGroupClient("kgo-eager", kgo.Balancers(kgo.RangeBalancer())))
}

// TestGroupKgoCooperative runs the group scenario with kgo's default
// balancer, cooperative-sticky (incremental rebalancing).
func TestGroupKgoCooperative(t *testing.T) {
	runGroupScenario(t, kgoGroupClient("kgo-cooperative"))
}

// kgoGroupClient is kgo at its defaults plus opts, except that it commits
// each record with CommitRecords (synchronous) before taking the next, with
// BlockRebalanceOnPoll so that no rebalance completes while it processes
// a poll.
func kgoGroupClient(name string, opts ...kgo.Opt) groupClient {
	return groupClient{
		name:       name,
		syncCommit: true,
		start: func(t *testing.T, cfg memberConfig, d *deliveries) (groupMember, error) {
			reset := kgo.NewOffset().AtStart()
			if cfg.reset == "latest" {
				reset = kgo.NewOffset().AtEnd()
			}
			all := append([]kgo.Opt{
				kgo.SeedBrokers(cfg.addr), kgo.ClientID(cfg.id),
				kgo.ConsumerGroup(cfg.group), kgo.ConsumeTopics(cfg.topic), kgo.ConsumeResetOffset(reset),
				kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(),
			}, opts...)
			if cfg.sessionTimeoutMs > 0 {
				all = append(all, kgo.SessionTimeout(time.Duration(cfg.sessionTimeoutMs)*time.Millisecond))
			}
			cl, err := kgo.NewClient(all...)
			if err != nil {
				return nil, err
			}
			m := newLoopMember(func() error { cl.Close(); return nil })
			go m.run(func(ctx context.Context) bool { return kgoPoll(ctx, cl, cfg.id, d) })
			return m, nil
		},
	}
}

// kgoPoll processes one poll; it returns false once the client is closed.
func kgoPoll(ctx context.Context, cl *kgo.Client, id string, d *deliveries) bool {
	fs := cl.PollFetches(ctx)
	defer cl.AllowRebalance()
	if fs.IsClientClosed() {
		return false
	}
	fs.EachError(func(topic string, p int32, err error) {
		if !errors.Is(err, context.Canceled) {
			d.fail(id, fmt.Errorf("fetch %s-%d: %w", topic, p, err))
		}
	})
	fs.EachRecord(func(r *kgo.Record) {
		cctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
		defer cancel()
		err := cl.CommitRecords(cctx, r)
		if err != nil {
			d.fail(id, fmt.Errorf("commit %s-%d offset %d: %w", r.Topic, r.Partition, r.Offset, err))
		}
		d.add(delivery{member: id, partition: r.Partition, offset: r.Offset, key: string(r.Key), committed: err == nil})
	})
	return true
}

// loopMember is a consumer run by a goroutine calling step until it
// returns false or the member is stopped; then close ends the client.
type loopMember struct {
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	close  func() error
	err    error
}

func newLoopMember(close func() error) *loopMember {
	ctx, cancel := context.WithCancel(context.Background())
	return &loopMember{ctx: ctx, cancel: cancel, done: make(chan struct{}), close: close}
}

// run calls step until it returns false or Stop, then closes the client.
func (m *loopMember) run(step func(ctx context.Context) bool) {
	defer close(m.done)
	for m.ctx.Err() == nil && step(m.ctx) {
	}
	m.err = m.close()
}

// Stop ends the loop and waits for the client to close.
func (m *loopMember) Stop() error {
	m.cancel()
	<-m.done
	return m.err
}

// TestGroupSarama runs the group scenario with sarama's ConsumerGroup at
// its defaults, except that auto-commit is off and each record is marked
// and committed with the session's synchronous Commit before the next
// (commit errors arrive on Errors, Consumer.Return.Errors), and a shorter
// Consumer.MaxWaitTime (see startSaramaMember).
func TestGroupSarama(t *testing.T) {
	runGroupScenario(t, groupClient{name: "sarama", syncCommit: true, start: startSaramaMember})
}

func startSaramaMember(t *testing.T, cfg memberConfig, d *deliveries) (groupMember, error) {
	sc := sarama.NewConfig()
	sc.ClientID = cfg.id
	sc.Consumer.Offsets.AutoCommit.Enable = false
	sc.Consumer.Return.Errors = true
	// sarama holds a broker connection's lock for a whole Fetch, long
	// poll included, and on one node the coordinator's connection is the
	// leader's: each synchronous Commit waits for a Fetch of up to
	// MaxWaitTime (default 500 ms). 20 ms keeps a commit per record usable.
	sc.Consumer.MaxWaitTime = 20 * time.Millisecond
	sc.Consumer.Offsets.Initial = sarama.OffsetOldest
	if cfg.reset == "latest" {
		sc.Consumer.Offsets.Initial = sarama.OffsetNewest
	}
	if cfg.sessionTimeoutMs > 0 {
		sc.Consumer.Group.Session.Timeout = time.Duration(cfg.sessionTimeoutMs) * time.Millisecond
	}
	cg, err := sarama.NewConsumerGroup([]string{cfg.addr}, cfg.group, sc)
	if err != nil {
		return nil, err
	}
	go func() {
		for err := range cg.Errors() {
			d.fail(cfg.id, err)
		}
	}()
	h := saramaHandler{id: cfg.id, d: d}
	m := newLoopMember(cg.Close)
	go m.run(func(ctx context.Context) bool {
		// Consume returns at every rebalance; the loop joins again.
		err := cg.Consume(ctx, []string{cfg.topic}, h)
		switch {
		case errors.Is(err, sarama.ErrClosedConsumerGroup):
			return false
		case err != nil && ctx.Err() == nil:
			d.fail(cfg.id, err)
		}
		return true
	})
	return m, nil
}

// saramaHandler consumes claims, committing each record synchronously.
type saramaHandler struct {
	id string
	d  *deliveries
}

func (saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h saramaHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case m, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			sess.MarkMessage(m, "")
			sess.Commit()
			h.d.add(delivery{member: h.id, partition: m.Partition, offset: m.Offset, key: string(m.Key), committed: true})
		case <-sess.Context().Done():
			return nil
		}
	}
}

// TestGroupKafkaGo runs the group scenario with kafka-go's Reader with a
// GroupID at its defaults (but MaxWait, see startKafkaGoMember):
// CommitInterval 0, so ReadMessage commits each message synchronously. The
// test calls FetchMessage and CommitMessages, which is what ReadMessage
// does, to see a message whose commit failed.
func TestGroupKafkaGo(t *testing.T) {
	runGroupScenario(t, groupClient{name: "kafka-go", syncCommit: true, start: startKafkaGoMember})
}

func startKafkaGoMember(t *testing.T, cfg memberConfig, d *deliveries) (groupMember, error) {
	// MaxWait 500 ms (Kafka's fetch.max.wait.ms) instead of kafka-go's
	// 10 s: Reader.Close waits for the partition readers' long polls,
	// and the scenario closes seven readers.
	rc := kafka.ReaderConfig{Brokers: []string{cfg.addr}, GroupID: cfg.group, Topic: cfg.topic, StartOffset: kafka.FirstOffset,
		MaxWait: 500 * time.Millisecond}
	if cfg.reset == "latest" {
		rc.StartOffset = kafka.LastOffset
	}
	if cfg.sessionTimeoutMs > 0 {
		rc.SessionTimeout = time.Duration(cfg.sessionTimeoutMs) * time.Millisecond
	}
	r := kafka.NewReader(rc)
	m := newLoopMember(r.Close)
	go m.run(func(ctx context.Context) bool {
		msg, err := r.FetchMessage(ctx)
		switch {
		case errors.Is(err, io.EOF):
			return false
		case err != nil:
			if ctx.Err() == nil {
				d.fail(cfg.id, err)
			}
			return true
		}
		cctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
		defer cancel()
		err = r.CommitMessages(cctx, msg)
		if err != nil {
			d.fail(cfg.id, fmt.Errorf("commit partition %d offset %d: %w", msg.Partition, msg.Offset, err))
		}
		d.add(delivery{member: cfg.id, partition: int32(msg.Partition), offset: msg.Offset, key: string(msg.Key), committed: err == nil})
		return true
	})
	return m, nil
}
