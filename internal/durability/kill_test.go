package durability

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirmq/weir/internal/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

const (
	killTopic      = "kill-acks-all"
	killPartitions = 3
)

// killRounds is how many times the broker is killed; WEIR_KILL_ROUNDS
// raises it for a longer run.
func killRounds() int {
	if n, err := strconv.Atoi(os.Getenv("WEIR_KILL_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 3
}

// TestSIGKILLAcksAll sends with a franz-go producer at its defaults
// (acks=all, idempotent, unlimited retries) while `weir serve` is killed
// with SIGKILL and restarted, several times; then it reads every partition
// back and checks that every acknowledged record is there exactly once,
// that nothing is duplicated, and that each partition holds its records
// in the order they were produced.
func TestSIGKILLAcksAll(t *testing.T) {
	dir := t.TempDir()
	addr := harness.FreeAddr(t)
	start := func() *harness.Process {
		return harness.Start(t, harness.Options{
			Args:      []string{"serve", "--data", dir, "--listen", addr},
			Name:      "weir-serve",
			ReadyLine: `weir serving node`,
		})
	}
	p := start()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	admin := kadm.NewClient(newClient(t, addr))
	resp, err := admin.CreateTopic(ctx, killPartitions, 1, nil, killTopic)
	if err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}

	producer := newClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var (
		mu    sync.Mutex
		acked = map[int64]bool{}
		fails []error
	)
	stop := make(chan struct{})
	produced := make(chan int64, 1)
	go func() {
		var seq int64
		defer func() { produced <- seq }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			s := seq
			seq++
			r := &kgo.Record{
				Topic:     killTopic,
				Partition: int32(s % killPartitions),
				Key:       []byte(strconv.FormatInt(s, 10)),
				Value:     []byte(fmt.Sprintf("value-%d", s)),
			}
			producer.Produce(ctx, r, func(r *kgo.Record, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					fails = append(fails, err)
					return
				}
				acked[s] = true
			})
		}
	}()

	ackedCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	waitAcked := func(n int) {
		deadline := time.Now().Add(2 * time.Minute)
		for ackedCount() < n {
			mu.Lock()
			var failed error
			if len(fails) > 0 {
				failed = fails[0]
			}
			mu.Unlock()
			if failed != nil {
				t.Fatalf("produce failed: %v", failed)
			}
			if time.Now().After(deadline) {
				t.Fatalf("only %d of %d records acknowledged", ackedCount(), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	for round := range killRounds() {
		waitAcked(ackedCount() + 2000)
		if err := p.Kill(); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: killed with %d acknowledged", round, ackedCount())
		p = start()
	}
	waitAcked(ackedCount() + 2000)
	close(stop)
	sent := <-produced
	if err := producer.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	mu.Lock()
	if len(fails) > 0 {
		t.Errorf("%d produce errors, first: %v", len(fails), fails[0])
	}
	mu.Unlock()

	got := readAll(ctx, t, addr, admin)
	seen := map[int64]int64{}
	for part, recs := range got {
		last := int64(-1)
		for i, r := range recs {
			s, err := strconv.ParseInt(string(r.Key), 10, 64)
			if err != nil {
				t.Fatalf("partition %d offset %d: key %q", part, r.Offset, r.Key)
			}
			if want := fmt.Sprintf("value-%d", s); string(r.Value) != want {
				t.Fatalf("partition %d offset %d: value %q, want %q", part, r.Offset, r.Value, want)
			}
			if int32(s%killPartitions) != part {
				t.Fatalf("record %d in partition %d", s, part)
			}
			if prev, dup := seen[s]; dup {
				t.Fatalf("record %d twice: offsets %d and %d of partition %d", s, prev, r.Offset, part)
			}
			seen[s] = r.Offset
			if s <= last {
				t.Fatalf("partition %d out of order at offset %d: %d after %d", part, r.Offset, s, last)
			}
			if r.Offset != int64(i) {
				t.Fatalf("partition %d: offset %d at position %d", part, r.Offset, i)
			}
			last = s
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for s := range acked {
		if _, ok := seen[s]; !ok {
			t.Errorf("acknowledged record %d lost", s)
		}
	}
	t.Logf("%d produced, %d acknowledged, %d read back over %d kills", sent, len(acked), len(seen), killRounds())
	if _, err := p.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
}

func newClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	c, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// readAll reads every partition of killTopic from offset 0 to its end.
func readAll(ctx context.Context, t *testing.T, addr string, admin *kadm.Client) map[int32][]*kgo.Record {
	t.Helper()
	ends, err := admin.ListEndOffsets(ctx, killTopic)
	if err != nil {
		t.Fatal(err)
	}
	offsets := map[int32]kgo.Offset{}
	want := map[int32]int64{}
	for p := range int32(killPartitions) {
		o, ok := ends.Lookup(killTopic, p)
		if !ok || o.Err != nil {
			t.Fatalf("end offset of partition %d: %v", p, o.Err)
		}
		want[p] = o.Offset
		offsets[p] = kgo.NewOffset().At(0)
	}
	c := newClient(t, addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{killTopic: offsets}))
	got := map[int32][]*kgo.Record{}
	done := func() bool {
		for p, end := range want {
			if int64(len(got[p])) < end {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := c.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("reading back: %v (have %v of %v)", err, lens(got), want)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { got[r.Partition] = append(got[r.Partition], r) })
	}
	return got
}

func lens(m map[int32][]*kgo.Record) map[int32]int {
	out := map[int32]int{}
	for k, v := range m {
		out[k] = len(v)
	}
	return out
}
