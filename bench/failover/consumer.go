package failover

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// consumer is the verifiable consumer: one franz-go member of a consumer
// group over every topic of the run, reading from the start, committing
// after it has recorded each poll's records (auto-commit off), noting
// when records arrived and when its partitions were revoked or lost and
// assigned again.
type consumer struct {
	cl    *kgo.Client
	tally *errorTally
	done  chan struct{}
	// topic numbers each topic as Read.Topic does.
	topic map[string]int32

	commitFailures atomic.Int64
	foreign        atomic.Int64
	fetchErrors    atomic.Int64

	mu         sync.Mutex
	rounds     map[uint32]*roundReads
	arrivals   []int64 // Unix ns of each poll that returned records
	counts     []int32 // and how many records each returned
	revokedAt  int64   // of a rebalance under way, 0 when none
	rebalances []span
	assigned   bool
}

// span is a time interval, Unix nanoseconds.
type span struct{ from, to int64 }

// roundReads is one round's records read.
type roundReads struct {
	reads []Read
	seen  []bool // by Seq
}

// consumerSettings are the client options beyond the defaults.
func consumerSettings(group string, tuned bool) []string {
	s := []string{"group " + group, "reset to the earliest offset", "auto-commit off, CommitUncommittedOffsets after each poll's records are recorded",
		"BlockRebalanceOnPoll"}
	return append(s, clientSettings(tuned)...)
}

// newConsumer joins group on seeds and consumes topics until close; it
// reports its partitions to asg as member, when asg is set.
func newConsumer(seeds, topics []string, group string, tuned bool, asg *assignments, member int) (*consumer, error) {
	c := &consumer{tally: newErrorTally(), done: make(chan struct{}), rounds: map[uint32]*roundReads{}, topic: topicIndex(topics)}
	note := func(f func(int, map[string][]int32, int64), ps map[string][]int32) {
		if asg != nil {
			f(member, ps, time.Now().UnixNano())
		}
	}
	opts := []kgo.Opt{kgo.SeedBrokers(seeds...), kgo.Dialer(c.tally.dial),
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topics...), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { c.onAssigned(); note(asg.assigned, ps) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { c.onRevoked(); note(asg.removed, ps) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { c.onRevoked(); note(asg.removed, ps) })}
	if tuned {
		opts = append(opts, tunedOpts()...)
	}
	logOpts, err := clientLog(consumerLogEnv)
	if err != nil {
		return nil, fmt.Errorf("consumer: %w", err)
	}
	opts = append(opts, logOpts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("consumer: %w", err)
	}
	c.cl = cl
	go c.loop()
	return c, nil
}

func (c *consumer) onRevoked() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.revokedAt == 0 {
		c.revokedAt = time.Now().UnixNano()
	}
}

func (c *consumer) onAssigned() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.revokedAt != 0 {
		c.rebalances = append(c.rebalances, span{c.revokedAt, time.Now().UnixNano()})
		c.revokedAt = 0
	}
	c.assigned = true
}

// loop polls, records and commits until the client is closed.
func (c *consumer) loop() {
	defer close(c.done)
	ctx := context.Background()
	for {
		fs := c.cl.PollFetches(ctx)
		if fs.IsClientClosed() {
			return
		}
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.Canceled) {
				c.fetchErrors.Add(1)
			}
		})
		if n := fs.NumRecords(); n > 0 {
			c.record(fs)
			if err := c.cl.CommitUncommittedOffsets(ctx); err != nil {
				c.commitFailures.Add(1)
			}
		}
		c.cl.AllowRebalance()
	}
}

// record notes every record of one poll.
func (c *consumer) record(fs kgo.Fetches) {
	now := time.Now().UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.arrivals = append(c.arrivals, now)
	c.counts = append(c.counts, int32(fs.NumRecords()))
	fs.EachRecord(func(r *kgo.Record) {
		round, seq, _, err := decodeValue(r.Value)
		if err != nil {
			c.foreign.Add(1)
			return
		}
		rr := c.rounds[round]
		if rr == nil {
			rr = &roundReads{}
			c.rounds[round] = rr
		}
		rr.reads = append(rr.reads, Read{Seq: seq, Topic: c.topic[r.Topic], Partition: r.Partition, Offset: r.Offset, AtNs: now})
		for int(seq) >= len(rr.seen) {
			rr.seen = append(rr.seen, make([]bool, len(rr.seen)+1024)...)
		}
		rr.seen[seq] = true
	})
}

// ready reports whether the member has its first assignment.
func (c *consumer) ready() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.assigned
}

// missing counts the acknowledged records of acks not read yet.
func (c *consumer) missing(round uint32, acks []Ack) int { return len(c.missingAcks(round, acks)) }

// missingAcks returns the acknowledged records of acks not read yet.
func (c *consumer) missingAcks(round uint32, acks []Ack) []Ack {
	c.mu.Lock()
	defer c.mu.Unlock()
	rr := c.rounds[round]
	var out []Ack
	for _, a := range acks {
		if !a.Err && (rr == nil || int(a.Seq) >= len(rr.seen) || !rr.seen[a.Seq]) {
			out = append(out, a)
		}
	}
	return out
}

// readCount is the number of records of round read so far.
func (c *consumer) readCount(round uint32) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rr := c.rounds[round]; rr != nil {
		return len(rr.reads)
	}
	return 0
}

// reads copies round's records read.
func (c *consumer) reads(round uint32) []Read {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rr := c.rounds[round]; rr != nil {
		return append([]Read(nil), rr.reads...)
	}
	return nil
}

// arrivalsSince copies the arrival times from `from` on and their
// record counts.
func (c *consumer) arrivalsSince(from int64) ([]int64, []int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, _ := slices.BinarySearch(c.arrivals, from)
	return append([]int64(nil), c.arrivals[i:]...), append([]int32(nil), c.counts[i:]...)
}

// rebalanceIn returns the longest rebalance (revoked or lost until
// assigned again) that started within [from, to], and whether one did; a
// rebalance still under way at to counts up to to.
func (c *consumer) rebalanceIn(from, to int64) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var longest int64
	found := false
	for _, s := range c.rebalances {
		if s.from >= from && s.from <= to {
			longest, found = max(longest, s.to-s.from), true
		}
	}
	if c.revokedAt != 0 && c.revokedAt >= from && c.revokedAt <= to {
		longest, found = max(longest, to-c.revokedAt), true
	}
	return time.Duration(longest), found
}

// close leaves the group and stops the loop.
func (c *consumer) close() {
	c.cl.Close()
	<-c.done
}

// topicIndex numbers topics by their place in the list.
func topicIndex(topics []string) map[string]int32 {
	m := make(map[string]int32, len(topics))
	for i, t := range topics {
		m[t] = int32(i)
	}
	return m
}
