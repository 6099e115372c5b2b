package durability

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/internal/harness"
)

const (
	pauseRounds = 3               // times the broker is paused
	pauseFor    = 3 * time.Second // how long each pause lasts
)

// startBroker starts `weir serve` on dir and addr, with the
// server.properties file config when it is not "".
func startBroker(t *testing.T, dir, addr, config string) *harness.Process {
	t.Helper()
	args := []string{"serve", "--data", dir, "--listen", addr}
	if config != "" {
		args = append(args, "--config", config)
	}
	return harness.Start(t, harness.Options{Args: args, Name: "weir-serve", ReadyLine: `weir serving node`})
}

// createTopic creates killTopic with killPartitions partitions.
func createTopic(ctx context.Context, t *testing.T, admin *kadm.Client) {
	t.Helper()
	resp, err := admin.CreateTopic(ctx, killPartitions, 1, nil, killTopic)
	if err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}
}

// TestBrokerPauseRoundTrip is Kafka's round_trip_fault_test with a
// ProcessStopFault: a franz-go producer at its defaults (acks=all,
// idempotent, unlimited retries) sends numbered records while `weir serve`
// is paused with SIGSTOP and resumed with SIGCONT, several times; then
// every partition is read back and must hold every acknowledged record
// exactly once, in produce order, at contiguous offsets, and no produce may
// have failed. In "client-waits" the client's timeouts outlast a pause, so
// its requests are answered late; in "client-times-out" they are shorter
// than a pause, so the client drops its connections and resends the same
// batches on new ones while the paused broker still holds the first
// copies in its socket buffers: the idempotent producer's sequence numbers
// must keep them from being written twice.
func TestBrokerPauseRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []kgo.Opt
	}{
		{"client-waits", nil},
		{"client-times-out", []kgo.Opt{kgo.ProduceRequestTimeout(500 * time.Millisecond), kgo.RequestTimeoutOverhead(time.Second)}},
	} {
		t.Run(tc.name, func(t *testing.T) { testBrokerPause(t, tc.opts != nil, tc.opts...) })
	}
}

// produceFailures counts produce requests that got no response (a
// franz-go hook).
type produceFailures struct{ n atomic.Int64 }

func (f *produceFailures) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	if key == int16(kmsg.Produce) && e2e.Err() != nil {
		f.n.Add(1)
	}
}

// testBrokerPause is TestBrokerPauseRoundTrip with the producer options
// given; resends says that they make requests time out during a pause,
// which must then happen.
func testBrokerPause(t *testing.T, resends bool, producerOpts ...kgo.Opt) {
	dir := t.TempDir()
	addr := harness.FreeAddr(t)
	p := startBroker(t, dir, addr, "")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	admin := kadm.NewClient(newClient(t, addr))
	createTopic(ctx, t, admin)
	failures := new(produceFailures)
	producer := newClient(t, addr, append([]kgo.Opt{kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.WithHooks(failures)}, producerOpts...)...)
	// Registered last, so it runs first: a paused broker is resumed
	// before the clients close and the harness kills it.
	t.Cleanup(func() { p.Signal(syscall.SIGCONT) })

	prod := startSeqProducer(ctx, producer, time.Millisecond)
	for round := range pauseRounds {
		prod.waitAcked(t, prod.ackedCount()+500)
		if err := p.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		before := prod.ackedCount()
		time.Sleep(pauseFor) // the fault's duration, not a wait for an event
		if err := p.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: paused %v with %d acknowledged", round, pauseFor, before)
	}
	prod.waitAcked(t, prod.ackedCount()+500)
	acked := prod.finish(ctx, t)

	seen := checkLog(t, readAll(ctx, t, addr, admin), acked)
	t.Logf("%d acknowledged, %d read back over %d pauses; %d produce requests failed and were resent",
		len(acked), len(seen), pauseRounds, failures.n.Load())
	if resends && failures.n.Load() == 0 {
		t.Errorf("no produce request timed out during a pause: the test did not exercise resends")
	}
	if code, err := p.Stop(30 * time.Second); code != 0 || err != nil {
		t.Errorf("weir serve stopped with status %d, %v; want 0", code, err)
	}
}

const (
	bounceRounds    = 2 // rounds of one SIGTERM and one SIGKILL restart
	bounceGroup     = "bounce-group"
	sampleEvery     = 50 * time.Millisecond // committed offsets sampling period
	pollFor         = 500 * time.Millisecond
	groupProperties = "group.initial.rebalance.delay.ms=0\n"
)

// TestGroupConsumerAcrossBrokerBounces is Kafka's test_broker_failure
// (consumer_test.py) and the clean_bounce/hard_bounce rows of
// replication_test.py for one broker: a consumer-group member with
// auto-commit off commits synchronously after each poll while a producer
// writes and `weir serve` is restarted, after SIGTERM then after SIGKILL,
// bounceRounds times, on the same data directory and address. It checks
// that the log holds every acknowledged record exactly once (checkLog);
// that every acknowledged record is consumed; that the group's committed
// offsets never go backwards and never fall behind a commit the broker
// acknowledged (sampled all along and right after each restart); that the
// member sees each partition's offsets in order, rewinding only when its
// partitions were assigned again and only to an offset it committed,
// never below an acknowledged commit; and that once everything is
// consumed the committed offsets are the log end offsets.
func TestGroupConsumerAcrossBrokerBounces(t *testing.T) {
	dir := t.TempDir()
	addr := harness.FreeAddr(t)
	config := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(config, []byte(groupProperties), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startBroker(t, dir, addr, config)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	admin := kadm.NewClient(newClient(t, addr))
	createTopic(ctx, t, admin)
	prod := startSeqProducer(ctx, newClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner())), time.Millisecond)
	cons := startGroupConsumer(ctx, t, addr)
	samples := startCommitSampler(ctx, t, admin, cons)

	bounces := []struct {
		name string
		down func()
	}{
		{"SIGTERM", func() {
			if code, err := p.Stop(30 * time.Second); code != 0 || err != nil {
				t.Errorf("weir serve stopped with status %d, %v; want 0", code, err)
			}
		}},
		{"SIGKILL", func() {
			if err := p.Kill(); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for round := range bounceRounds {
		for _, b := range bounces {
			prod.waitAcked(t, prod.ackedCount()+1000)
			cons.waitCommitted(t, cons.committedTotal()+1000)
			before := cons.ackedCommits()
			b.down()
			p = startBroker(t, dir, addr, config)
			// Runs before this process is killed at cleanup, so the
			// member leaves the group while the broker still runs.
			t.Cleanup(cons.close)
			after := committedOffsets(ctx, t, admin)
			for part, want := range before {
				if got := after[part]; got < want {
					t.Errorf("round %d, after %s: partition %d committed offset %d, but the broker had acknowledged a commit of %d before",
						round, b.name, part, got, want)
				}
			}
			t.Logf("round %d, %s: committed %v before, %v after the restart", round, b.name, before, after)
		}
	}
	prod.waitAcked(t, prod.ackedCount()+1000)
	acked := prod.finish(ctx, t)

	ends, err := admin.ListEndOffsets(ctx, killTopic)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32]int64{}
	for part := range int32(killPartitions) {
		o, ok := ends.Lookup(killTopic, part)
		if !ok || o.Err != nil {
			t.Fatalf("end offset of partition %d: %v", part, o.Err)
		}
		if o.Offset > 0 {
			want[part] = o.Offset
		}
	}
	cons.waitCommittedTo(t, want)
	cons.close()
	samples.stop()
	if got := committedOffsets(ctx, t, admin); !mapsEqual(got, want) {
		t.Errorf("everything consumed: committed offsets %v, want the log end offsets %v", got, want)
	}

	seen := checkLog(t, readAll(ctx, t, addr, admin), acked)
	cons.check(t, acked, seen)
	samples.check(t)
	if code, err := p.Stop(30 * time.Second); code != 0 || err != nil {
		t.Errorf("weir serve stopped with status %d, %v; want 0", code, err)
	}
}

// committedOffsets returns the committed offsets of bounceGroup in
// killTopic, retrying until the broker answers them all.
func committedOffsets(ctx context.Context, t *testing.T, admin *kadm.Client) map[int32]int64 {
	t.Helper()
	deadline := time.Now().Add(progressTimeout)
	for {
		got, err := fetchCommitted(ctx, admin)
		if err == nil {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("committed offsets of %s: %v", bounceGroup, err)
		}
		time.Sleep(sampleEvery)
	}
}

// fetchCommitted is one OffsetFetch of bounceGroup; partitions without a
// commit are left out.
func fetchCommitted(ctx context.Context, admin *kadm.Client) (map[int32]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	resp, err := admin.FetchOffsets(ctx, bounceGroup)
	if err != nil {
		return nil, err
	}
	if err := resp.Error(); err != nil {
		return nil, err
	}
	got := map[int32]int64{}
	for part, o := range resp[killTopic] {
		if o.At >= 0 {
			got[part] = o.At
		}
	}
	return got, nil
}

func mapsEqual(a, b map[int32]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// groupConsumer is a member of bounceGroup consuming killTopic with
// auto-commit off: it polls, checks and records each record, commits what
// it polled synchronously, and only then lets a rebalance happen
// (BlockRebalanceOnPoll), so each commit is for partitions it owns.
type groupConsumer struct {
	cl        *kgo.Client
	done      chan struct{}
	closeOnce sync.Once

	mu         sync.Mutex
	next       map[int32]int64          // offset after the last record delivered
	fresh      map[int32]bool           // assigned since its last delivery
	acked      map[int32]int64          // the last commit the broker acknowledged
	sent       map[int32]map[int64]bool // every offset a commit carried
	at         map[position]int64       // the record delivered at each position
	deliveries map[int64]int            // how often each record was delivered
	rewinds    int
	commits    int
	commitErrs []error
	pollErrs   []error
	assigns    int // OnPartitionsAssigned calls
	losses     int // OnPartitionsRevoked and OnPartitionsLost calls
	violations []string
}

func startGroupConsumer(ctx context.Context, t *testing.T, addr string) *groupConsumer {
	t.Helper()
	c := &groupConsumer{
		done:       make(chan struct{}),
		next:       map[int32]int64{},
		fresh:      map[int32]bool{},
		acked:      map[int32]int64{},
		sent:       map[int32]map[int64]bool{},
		at:         map[position]int64{},
		deliveries: map[int64]int{},
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(addr),
		kgo.ConsumerGroup(bounceGroup),
		kgo.ConsumeTopics(killTopic),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.SessionTimeout(6*time.Second), // group.min.session.timeout.ms
		kgo.HeartbeatInterval(time.Second),
		kgo.FetchMaxWait(pollFor),
		kgo.OnPartitionsAssigned(c.onAssigned),
		kgo.OnPartitionsRevoked(c.onLost),
		kgo.OnPartitionsLost(c.onLost),
	)
	if err != nil {
		t.Fatal(err)
	}
	c.cl = cl
	t.Cleanup(c.close)
	go c.run(ctx)
	return c
}

// close stops the consumer and closes its client (leaving the group);
// later calls do nothing.
func (c *groupConsumer) close() {
	c.closeOnce.Do(func() {
		c.cl.Close()
		<-c.done
	})
}

func (c *groupConsumer) run(ctx context.Context) {
	defer close(c.done)
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, pollFor)
		fs := c.cl.PollFetches(pctx)
		cancel()
		if fs.IsClientClosed() {
			return
		}
		fs.EachError(func(topic string, part int32, err error) {
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				return
			}
			c.mu.Lock()
			c.pollErrs = append(c.pollErrs, fmt.Errorf("%s/%d: %w", topic, part, err))
			c.mu.Unlock()
		})
		fs.EachRecord(c.deliver)
		c.commit(ctx)
		c.cl.AllowRebalance()
	}
}

func (c *groupConsumer) violate(format string, args ...any) {
	c.violations = append(c.violations, fmt.Sprintf(format, args...))
}

// deliver checks and records one delivered record.
func (c *groupConsumer) deliver(r *kgo.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := recordSeq(r)
	if err != nil {
		c.violate("%v", err)
		return
	}
	part := r.Partition
	pos := position{part, r.Offset}
	if prev, ok := c.at[pos]; ok && prev != s {
		c.violate("partition %d offset %d delivered record %d, earlier record %d", part, r.Offset, s, prev)
	}
	c.at[pos] = s
	c.deliveries[s]++
	next := c.next[part]
	switch {
	case r.Offset == next:
	case r.Offset > next:
		c.violate("partition %d: offsets %d to %d skipped", part, next, r.Offset-1)
	case !c.fresh[part]:
		c.violate("partition %d: offset %d delivered after %d without a new assignment", part, r.Offset, next-1)
	case r.Offset < c.acked[part]:
		c.violate("partition %d: consuming restarted at %d, below the acknowledged commit %d", part, r.Offset, c.acked[part])
	case r.Offset != 0 && !c.sent[part][r.Offset]:
		c.violate("partition %d: consuming restarted at %d, an offset never committed", part, r.Offset)
	default:
		c.rewinds++
	}
	c.fresh[part] = false
	c.next[part] = r.Offset + 1
}

// commit commits what was polled and not committed yet, synchronously,
// and records what the request carried and what the broker acknowledged.
func (c *groupConsumer) commit(ctx context.Context) {
	offsets := c.cl.UncommittedOffsets()
	if len(offsets) == 0 {
		return
	}
	c.cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.commits++
		carried := map[int32]int64{}
		for _, rt := range req.Topics {
			for _, rp := range rt.Partitions {
				carried[rp.Partition] = rp.Offset
				if c.sent[rp.Partition] == nil {
					c.sent[rp.Partition] = map[int64]bool{}
				}
				c.sent[rp.Partition][rp.Offset] = true
			}
		}
		if err != nil {
			c.commitErrs = append(c.commitErrs, err)
			return
		}
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					c.commitErrs = append(c.commitErrs, fmt.Errorf("partition %d: %w", rp.Partition, err))
					continue
				}
				off, ok := carried[rp.Partition]
				if !ok {
					c.violate("commit answered for partition %d, which it did not carry", rp.Partition)
					continue
				}
				if off < c.acked[rp.Partition] {
					c.violate("partition %d: commit of %d acknowledged after one of %d", rp.Partition, off, c.acked[rp.Partition])
				}
				c.acked[rp.Partition] = off
			}
		}
	})
}

func (c *groupConsumer) onAssigned(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.assigns++
	for _, part := range assigned[killTopic] {
		c.fresh[part] = true
	}
}

func (c *groupConsumer) onLost(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(lost) > 0 {
		c.losses++
	}
}

// ackedCommits returns the last commit the broker acknowledged, per
// partition.
func (c *groupConsumer) ackedCommits() map[int32]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[int32]int64, len(c.acked))
	for k, v := range c.acked {
		out[k] = v
	}
	return out
}

// committedTotal is the sum of the acknowledged commits.
func (c *groupConsumer) committedTotal() int64 {
	var n int64
	for _, o := range c.ackedCommits() {
		n += o
	}
	return n
}

// waitCommitted waits until the acknowledged commits add up to n.
func (c *groupConsumer) waitCommitted(t *testing.T, n int64) {
	t.Helper()
	c.waitFor(t, fmt.Sprintf("commits adding up to %d", n), func(acked map[int32]int64) bool {
		var sum int64
		for _, o := range acked {
			sum += o
		}
		return sum >= n
	})
}

// waitCommittedTo waits until the acknowledged commits are want.
func (c *groupConsumer) waitCommittedTo(t *testing.T, want map[int32]int64) {
	t.Helper()
	c.waitFor(t, fmt.Sprintf("commits of %v", want), func(acked map[int32]int64) bool { return mapsEqual(acked, want) })
}

func (c *groupConsumer) waitFor(t *testing.T, what string, done func(map[int32]int64) bool) {
	t.Helper()
	deadline := time.Now().Add(progressTimeout)
	for !done(c.ackedCommits()) {
		select {
		case <-c.done:
			t.Fatalf("consumer stopped waiting for %s", what)
		default:
		}
		if time.Now().After(deadline) {
			c.mu.Lock()
			t.Errorf("commit errors: %v; poll errors: %v", c.commitErrs, c.pollErrs)
			c.mu.Unlock()
			t.Fatalf("no %s after %v: acknowledged %v", what, progressTimeout, c.ackedCommits())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// check reports the consumer's violations, and checks that every
// acknowledged record was delivered and that each delivered record sits
// where the log holds it (seen, from checkLog). Call it once closed.
func (c *groupConsumer) check(t *testing.T, acked, seen map[int64]position) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, v := range c.violations {
		if i == 10 {
			t.Errorf("... %d violations in all", len(c.violations))
			break
		}
		t.Error(v)
	}
	missing, dups := 0, 0
	for s := range acked {
		if c.deliveries[s] == 0 {
			missing++
			if missing <= 10 {
				t.Errorf("acknowledged record %d never consumed", s)
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged records never consumed", missing, len(acked))
	}
	for pos, s := range c.at {
		if where, ok := seen[s]; !ok || where != pos {
			t.Errorf("record %d consumed at partition %d offset %d, the log holds it at %v (found %v)", s, pos.partition, pos.offset, where, ok)
		}
	}
	for _, n := range c.deliveries {
		if n > 1 {
			dups++
		}
	}
	t.Logf("consumer: %d records delivered, %d more than once, %d rewinds; %d commits, %d failed (%v); %d assignments, %d revocations or losses; poll errors %v",
		len(c.deliveries), dups, c.rewinds, c.commits, len(c.commitErrs), firstErr(c.commitErrs), c.assigns, c.losses, c.pollErrs)
}

func firstErr(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}

// commitSampler fetches the group's committed offsets every sampleEvery
// and checks that they never go backwards and never fall behind a commit
// the broker acknowledged before the fetch was sent.
type commitSampler struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu         sync.Mutex
	samples    int
	max        map[int32]int64
	violations []string
}

func startCommitSampler(ctx context.Context, t *testing.T, admin *kadm.Client, cons *groupConsumer) *commitSampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &commitSampler{cancel: cancel, done: make(chan struct{}), max: map[int32]int64{}}
	t.Cleanup(s.stop)
	go func() {
		defer close(s.done)
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			acked := cons.ackedCommits()
			got, err := fetchCommitted(ctx, admin)
			if err != nil {
				continue // the broker is down or loading the group
			}
			s.record(acked, got)
		}
	}()
	return s
}

func (s *commitSampler) record(acked, got map[int32]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples++
	parts := make([]int32, 0, len(acked)+len(got))
	for p := range acked {
		parts = append(parts, p)
	}
	for p := range got {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	for _, p := range slices.Compact(parts) {
		o, ok := got[p]
		if !ok {
			o = -1
		}
		if m, ok := s.max[p]; ok && o < m {
			s.violations = append(s.violations, fmt.Sprintf("sample %d: partition %d committed offset went back from %d to %d", s.samples, p, m, o))
		}
		if a, ok := acked[p]; ok && o < a {
			s.violations = append(s.violations, fmt.Sprintf("sample %d: partition %d committed offset %d, below the acknowledged commit %d", s.samples, p, o, a))
		}
		if m, ok := s.max[p]; !ok || o > m {
			s.max[p] = o
		}
	}
}

// stop ends the sampling; later calls do nothing.
func (s *commitSampler) stop() {
	s.cancel()
	<-s.done
}

func (s *commitSampler) check(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, v := range s.violations {
		if i == 10 {
			t.Errorf("... %d violations in all", len(s.violations))
			break
		}
		t.Error(v)
	}
	t.Logf("committed offsets sampled %d times", s.samples)
}
