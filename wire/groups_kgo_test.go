package wire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// groupTestProps make rebalances quick: no initial delay, and session
// timeouts as short as the tests ask for.
var groupTestProps = map[string]string{
	"group.initial.rebalance.delay.ms": "0",
	"group.min.session.timeout.ms":     "100",
}

// groupWait bounds the waits of the group tests; it fires only when one
// fails.
const groupWait = 30 * time.Second

// waitUntil polls cond until it holds or groupWait passes.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(groupWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cutDialer dials the broker until cut, then refuses, and cut closes the
// connections it made: the client is as good as killed, without a chance
// to leave its group.
type cutDialer struct {
	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

func (d *cutDialer) dial(ctx context.Context, network, host string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut {
		return nil, errors.New("cut")
	}
	c, err := (&net.Dialer{}).DialContext(ctx, network, host)
	if err == nil {
		d.conns = append(d.conns, c)
	}
	return c, err
}

func (d *cutDialer) kill() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cut = true
	for _, c := range d.conns {
		_ = c.Close()
	}
}

// groupLedger records what a group's consumers got.
type groupLedger struct {
	mu    sync.Mutex
	seen  map[string]int           // record key -> deliveries
	owned map[int]map[int32]bool   // consumer -> partitions it owns
	by    map[string]map[int32]int // record key -> partition -> consumer
}

func newGroupLedger() *groupLedger {
	return &groupLedger{seen: map[string]int{}, owned: map[int]map[int32]bool{}, by: map[string]map[int32]int{}}
}

func (l *groupLedger) assign(who int, ps []int32, add bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.owned[who] == nil {
		l.owned[who] = map[int32]bool{}
	}
	for _, p := range ps {
		if add {
			l.owned[who][p] = true
		} else {
			delete(l.owned[who], p)
		}
	}
}

// owners returns how many partitions each listed consumer owns and the
// size of their union.
func (l *groupLedger) owners(who ...int) ([]int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	union := map[int32]bool{}
	var counts []int
	for _, w := range who {
		counts = append(counts, len(l.owned[w]))
		for p := range l.owned[w] {
			union[p] = true
		}
	}
	return counts, len(union)
}

func (l *groupLedger) count() (distinct, dups int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.seen {
		if n > 1 {
			dups += n - 1
		}
	}
	return len(l.seen), dups
}

// groupConsumer is one consumer of a group test: it polls, records, and
// commits synchronously after every poll, with rebalances blocked while
// it processes (so everything it processed is committed before it gives
// a partition up).
type groupConsumer struct {
	cl     *kgo.Client
	dialer *cutDialer
	cancel context.CancelFunc
	done   chan struct{}
}

func startGroupConsumer(t *testing.T, s *Server, l *groupLedger, who int, group, topic string, balancer kgo.GroupBalancer) *groupConsumer {
	t.Helper()
	d := &cutDialer{}
	track := func(add bool) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(_ context.Context, _ *kgo.Client, m map[string][]int32) { l.assign(who, m[topic], add) }
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(s.Addr().String()), kgo.Dialer(d.dial),
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.Balancers(balancer),
		kgo.SessionTimeout(1500*time.Millisecond), kgo.HeartbeatInterval(100*time.Millisecond),
		kgo.RebalanceTimeout(10*time.Second), kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond),
		kgo.OnPartitionsAssigned(track(true)), kgo.OnPartitionsRevoked(track(false)), kgo.OnPartitionsLost(track(false)),
	)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &groupConsumer{cl: cl, dialer: d, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		// A poll blocks rebalances until AllowRebalance, which Close
		// waits for.
		defer cl.AllowRebalance()
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			if fs.IsClientClosed() || ctx.Err() != nil {
				return
			}
			fs.EachRecord(func(r *kgo.Record) {
				l.mu.Lock()
				l.seen[string(r.Key)]++
				if l.by[string(r.Key)] == nil {
					l.by[string(r.Key)] = map[int32]int{}
				}
				l.by[string(r.Key)][r.Partition] = who
				l.mu.Unlock()
			})
			if err := cl.CommitUncommittedOffsets(ctx); err != nil && ctx.Err() == nil {
				t.Logf("consumer %d: commit: %v", who, err)
			}
			cl.AllowRebalance()
		}
	}()
	return c
}

// stop closes the consumer normally (it leaves the group).
func (c *groupConsumer) stop() {
	c.cancel()
	<-c.done
	c.cl.Close()
}

// kill cuts the consumer off without a LeaveGroup, as if its process died.
func (c *groupConsumer) kill() {
	c.dialer.kill()
	c.cancel()
	<-c.done
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	_ = c.cl.LeaveGroupContext(gone) // a canceled leave sends nothing
	c.cl.Close()
}

// produceKeys produces records from..to-1 (kgoRecord) to topic.
func produceKeys(t *testing.T, cl *kgo.Client, topic string, from, to int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), groupWait)
	defer cancel()
	for i := from; i < to; i++ {
		cl.Produce(ctx, kgoRecord(topic, i), func(r *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce %s: %v", r.Key, err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// committedAtEnd reports whether the group's committed offsets equal the
// topic's end offsets on every partition.
func committedAtEnd(t *testing.T, adm *kadm.Client, group, topic string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Logf("end offsets: %v", err)
		return false
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Logf("fetch offsets: %v", err)
		return false
	}
	ok := true
	ends.Each(func(e kadm.ListedOffset) {
		c, found := committed.Lookup(topic, e.Partition)
		if e.Offset > 0 && (!found || c.At != e.Offset) {
			ok = false
		}
	})
	return ok
}

// TestKgoGroupSharing runs three franz-go consumers in one group over a
// 12-partition topic, with the eager range balancer and with
// cooperative-sticky: they share the partitions, consume every record
// once (commits are synchronous and rebalances wait for them), a
// consumer killed without LeaveGroup has its partitions moved to the
// others after its session timeout, and a new consumer resumes from the
// committed offsets.
func TestKgoGroupSharing(t *testing.T) {
	for _, tc := range []struct {
		name     string
		balancer kgo.GroupBalancer
	}{
		{"eager-range", kgo.RangeBalancer()},
		{"cooperative-sticky", kgo.CooperativeStickyBalancer()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, b := startBroker(t, groupTestProps)
			topic, group := "share-"+tc.name[:4], "g-"+tc.name
			createTopic(t, b, topic, 12)
			producer := newKgo(t, s, kgo.ProducerLinger(time.Millisecond))
			adm := kadm.NewClient(newKgo(t, s))
			l := newGroupLedger()

			cs := make([]*groupConsumer, 3)
			for i := range cs {
				cs[i] = startGroupConsumer(t, s, l, i, group, topic, tc.balancer)
			}
			waitUntil(t, "three consumers owning four partitions each", func() bool {
				counts, union := l.owners(0, 1, 2)
				return union == 12 && counts[0] == 4 && counts[1] == 4 && counts[2] == 4
			})
			described := describeGroup(t, adm, group)
			if described.State != "Stable" || len(described.Members) != 3 || described.Protocol != tc.balancer.ProtocolName() {
				t.Fatalf("described %s with %d members, protocol %q; want Stable, 3, %q",
					described.State, len(described.Members), described.Protocol, tc.balancer.ProtocolName())
			}

			produceKeys(t, producer, topic, 0, 1200)
			waitUntil(t, "1200 records consumed", func() bool { n, _ := l.count(); return n == 1200 })
			waitUntil(t, "commits at the end offsets", func() bool { return committedAtEnd(t, adm, group, topic) })

			t.Logf("consumed and committed 1200 records; killing consumer 2")
			killed := time.Now()
			cs[2].kill()
			waitUntil(t, "the survivors owning all twelve partitions", func() bool {
				_, union := l.owners(0, 1)
				return union == 12
			})
			if took := time.Since(killed); took < time.Second {
				t.Errorf("partitions moved %v after the kill, before the 1.5s session timeout could expire", took)
			}
			produceKeys(t, producer, topic, 1200, 2400)
			waitUntil(t, "2400 records consumed", func() bool { n, _ := l.count(); return n == 2400 })
			waitUntil(t, "commits at the end offsets", func() bool { return committedAtEnd(t, adm, group, topic) })
			if _, dups := l.count(); dups != 0 {
				t.Errorf("%d duplicate deliveries with synchronous commits", dups)
			}

			cs[0].stop()
			cs[1].stop()
			// A new member resumes from the committed offsets: it reads
			// only what is produced now, though it resets to the start.
			fresh := newGroupLedger()
			c := startGroupConsumer(t, s, fresh, 9, group, topic, tc.balancer)
			defer c.stop()
			produceKeys(t, producer, topic, 2400, 2410)
			waitUntil(t, "the ten new records", func() bool { n, _ := fresh.count(); return n == 10 })
			fresh.mu.Lock()
			var keys []string
			for k := range fresh.seen {
				keys = append(keys, k)
			}
			fresh.mu.Unlock()
			sort.Strings(keys)
			for _, k := range keys {
				var i int
				if _, err := fmt.Sscanf(k, "key-%d", &i); err != nil || i < 2400 {
					t.Errorf("resumed consumer read %s, committed before it joined", k)
				}
			}
		})
	}
}

// describeGroup describes one group with kadm.
func describeGroup(t *testing.T, adm *kadm.Client, group string) kadm.DescribedGroup {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ds, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := ds[group]
	if !ok || d.Err != nil {
		t.Fatalf("describe %s: %v", group, d.Err)
	}
	return d
}
