package durability

import (
	"context"
	"os"
	"strconv"
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

	producer := startSeqProducer(ctx, newClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner())), 0)
	for round := range killRounds() {
		producer.waitAcked(t, producer.ackedCount()+2000)
		if err := p.Kill(); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: killed with %d acknowledged", round, producer.ackedCount())
		p = start()
	}
	producer.waitAcked(t, producer.ackedCount()+2000)
	acked := producer.finish(ctx, t)
	seen := checkLog(t, readAll(ctx, t, addr, admin), acked)
	t.Logf("%d produced and acknowledged, %d read back over %d kills", len(acked), len(seen), killRounds())
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
