package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirmq/weir/log"
)

const (
	plTopic      = "durable"
	plPartitions = 3
	plRounds     = 5
	// plSeedEnv overrides the seed, to replay a failure.
	plSeedEnv = "WEIR_NODE_POWERLOSS_SEED"
)

// TestNodePowerLoss runs a whole node on an in-memory file system and
// cuts the power under it while a franz-go producer at its defaults
// (acks=all, idempotent) writes to a topic with the group-commit fsync
// policy (flush.messages=1), several times. A cut is taken as a copy of
// the file system at one instant (MemFS.Clone) that then loses a random
// part of what was not synced (PowerCut or PowerCutDropAll); the next node
// starts on that copy. ARCHITECTURE's durability promise under the fsync
// policy is that a power cut loses nothing acknowledged: so the topic (its
// creation was answered) and every record acknowledged before the cut must
// be there, at the offset its acknowledgement gave, and no record may be
// there twice. This covers the metadata log (raft on log/), producer-id
// allocation (a producer id handed out again after a cut would make the
// new producer's first batches look like duplicates of the old one's) and
// the partition logs together.
func TestNodePowerLoss(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(plSeedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", plSeedEnv, s, err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with %s=%d)", seed, plSeedEnv, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fsys := log.NewMemFS()
	durable := map[int64]plPosition{} // every record acknowledged before a cut
	var next int64                    // the next record number
	for round := range plRounds {
		n, sys := plStartNode(t, fsys)
		if round == 0 {
			adm := adminOf(t, n)
			resp, err := adm.CreateTopic(ctx, plPartitions, 1, map[string]*string{"flush.messages": kadm.StringPtr("1")}, plTopic)
			if err != nil || resp.Err != nil {
				t.Fatalf("create topic: %v %v", err, resp.Err)
			}
		}
		when := fmt.Sprintf("round %d, after %d cuts", round, round)
		plCheck(ctx, t, n, durable, when)
		plCheckTopics(ctx, t, n, fsys, round, when)
		if round > 0 {
			plCheckCommitted(ctx, t, n, round-1, when)
		}
		// Topic creation and deletion answered before the cut must last
		// too: each round creates one topic and deletes the last round's.
		adm := adminOf(t, n)
		if resp, err := adm.CreateTopic(ctx, 2, 1, nil, plMetaTopic(round)); err != nil || resp.Err != nil {
			t.Fatalf("create %s: %v %v", plMetaTopic(round), err, resp.Err)
		}
		if round > 0 {
			if resp, err := adm.DeleteTopic(ctx, plMetaTopic(round-1)); err != nil || resp.Err != nil {
				t.Fatalf("delete %s: %v %v", plMetaTopic(round-1), err, resp.Err)
			}
		}

		p := plStartProducer(ctx, t, n, next)
		// Cut once a random number of records are acknowledged, with more
		// in flight, and a group committed offsets (every topic fsyncs, so
		// __consumer_offsets too: a commit answered must survive the cut).
		p.waitAcked(t, 50+rng.IntN(1500))
		offsets := kadm.Offsets{}
		for part := range int32(plPartitions) {
			offsets.Add(kadm.Offset{Topic: plTopic, Partition: part, At: int64(round*100) + int64(part), LeaderEpoch: -1})
		}
		if resp, err := adm.CommitOffsets(ctx, plGroup, offsets); err != nil || resp.Error() != nil {
			t.Fatalf("round %d: commit: %v %v", round, err, resp.Error())
		}
		acked := p.snapshot()
		cut := fsys.Clone()
		dropAll := rng.IntN(4) == 0
		if dropAll {
			cut.PowerCutDropAll()
		} else {
			cut.PowerCut(rng)
		}
		next = p.stop()
		for s, pos := range acked {
			durable[s] = pos
		}
		t.Logf("round %d: cut (drop all unsynced: %v) with %d acknowledged this round, %d in all", round, dropAll, len(acked), len(durable))
		stopNode(t, n, sys)
		fsys = cut
	}
	n, sys := plStartNode(t, fsys)
	defer stopNode(t, n, sys)
	when := fmt.Sprintf("after the last of %d cuts", plRounds)
	plCheck(ctx, t, n, durable, when)
	plCheckTopics(ctx, t, n, fsys, plRounds, when)
	plCheckCommitted(ctx, t, n, plRounds-1, when)
}

// plGroup commits offsets once a round.
const plGroup = "readers"

// plCheckCommitted checks that plGroup's offsets are the ones committed
// in round, the last before the cut (waiting out the coordinator's load).
func plCheckCommitted(ctx context.Context, t *testing.T, n *Node, round int, when string) {
	t.Helper()
	adm := adminOf(t, n)
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := adm.FetchOffsets(ctx, plGroup)
		if err == nil {
			err = got.Error()
		}
		if err == nil {
			for part := range int32(plPartitions) {
				o, ok := got.Lookup(plTopic, part)
				if want := int64(round*100) + int64(part); !ok || o.At != want {
					t.Fatalf("%s: committed offset of partition %d is %d (found %v), want %d from round %d", when, part, o.At, ok, want, round)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: fetch offsets: %v", when, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// plMetaTopic is the topic round creates (and the next round deletes).
func plMetaTopic(round int) string { return fmt.Sprintf("meta-%d", round) }

// plCheckTopics checks, at the start of round, that the topics are the
// durable one and the previous round's meta topic (if any), and no other,
// and that no partition directory of another topic is left in /data (a
// deletion whose directory rename was lost in the cut).
func plCheckTopics(ctx context.Context, t *testing.T, n *Node, fsys log.FS, round int, when string) {
	t.Helper()
	topics, err := adminOf(t, n).ListTopics(ctx)
	if err != nil {
		t.Fatalf("%s: list topics: %v", when, err)
	}
	want := map[string]bool{plTopic: true}
	if round > 0 {
		want[plMetaTopic(round-1)] = true
	}
	for _, name := range topics.Names() {
		if !want[name] {
			t.Errorf("%s: topic %s exists", when, name)
		}
		delete(want, name)
	}
	for name := range want {
		t.Errorf("%s: topic %s missing", when, name)
	}
	names, err := fsys.ReadDir("/data")
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	for _, name := range names {
		if strings.HasPrefix(name, "meta-") && !strings.HasPrefix(name, plMetaTopic(round-1)+"-") && !strings.HasSuffix(name, "-stray") {
			t.Errorf("%s: directory /data/%s left behind", when, name)
		}
	}
}

// plStartNode starts a node on fsys with its data in /data, every topic
// fsyncing and groups rebalancing at once.
func plStartNode(t *testing.T, fsys log.FS) (*Node, *actor.ActorSystem) {
	t.Helper()
	return startTestNode(t, map[string]string{"log.dirs": "/data", "listeners": "PLAINTEXT://127.0.0.1:0",
		"log.flush.interval.messages": "1", "group.initial.rebalance.delay.ms": "0"}, fsys)
}

// plPosition is where an acknowledged record was written.
type plPosition struct {
	partition int32
	offset    int64
}

// plProducer produces records numbered from a start, key = number, to
// partition number % plPartitions, and keeps each acknowledged one's
// position.
type plProducer struct {
	cl   *kgo.Client
	quit chan struct{}
	done chan int64

	mu    sync.Mutex
	acked map[int64]plPosition
	fails []error
}

func plStartProducer(ctx context.Context, t *testing.T, n *Node, from int64) *plProducer {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr().String()), kgo.DefaultProduceTopic(plTopic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	p := &plProducer{cl: cl, quit: make(chan struct{}), done: make(chan int64, 1), acked: map[int64]plPosition{}}
	go func() {
		s := from
		defer func() { p.done <- s }()
		for {
			select {
			case <-p.quit:
				return
			case <-ctx.Done():
				return
			default:
			}
			seq := s
			s++
			r := &kgo.Record{Partition: int32(seq % plPartitions), Key: []byte(strconv.FormatInt(seq, 10))}
			cl.Produce(ctx, r, func(r *kgo.Record, err error) {
				p.mu.Lock()
				defer p.mu.Unlock()
				if err != nil {
					p.fails = append(p.fails, err)
					return
				}
				p.acked[seq] = plPosition{r.Partition, r.Offset}
			})
		}
	}()
	return p
}

// waitAcked waits until n records are acknowledged; a produce error fails
// the test (the node is healthy until the cut, and the client retries).
func (p *plProducer) waitAcked(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		p.mu.Lock()
		got, fails := len(p.acked), p.fails
		p.mu.Unlock()
		if len(fails) > 0 {
			t.Fatalf("produce failed: %v", fails[0])
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d records acknowledged", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// snapshot returns the records acknowledged so far. Taken before the cut's
// copy of the file system, it holds only records whose acknowledgement
// came before that copy.
func (p *plProducer) snapshot() map[int64]plPosition {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[int64]plPosition, len(p.acked))
	for s, pos := range p.acked {
		out[s] = pos
	}
	return out
}

// stop ends producing, abandons what is in flight and returns the next
// record number.
func (p *plProducer) stop() int64 {
	close(p.quit)
	next := <-p.done
	p.cl.Close()
	return next
}

// plCheck reads the whole topic back and checks it against durable.
func plCheck(ctx context.Context, t *testing.T, n *Node, durable map[int64]plPosition, when string) {
	t.Helper()
	adm := adminOf(t, n)
	ends, err := adm.ListEndOffsets(ctx, plTopic)
	if err != nil {
		t.Fatalf("%s: end offsets: %v", when, err)
	}
	offsets := map[int32]kgo.Offset{}
	want := map[int32]int64{}
	for p := range int32(plPartitions) {
		o, ok := ends.Lookup(plTopic, p)
		if !ok || o.Err != nil {
			t.Fatalf("%s: topic %s partition %d: %v (ok %v)", when, plTopic, p, o.Err, ok)
		}
		want[p] = o.Offset
		offsets[p] = kgo.NewOffset().At(0)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr().String()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{plTopic: offsets}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	seen := map[int64]plPosition{}
	got := map[int32]int64{}
	for p := range want {
		got[p] = 0
	}
	for {
		done := true
		for p, end := range want {
			if got[p] < end {
				done = false
			}
		}
		if done {
			break
		}
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("%s: reading back: %v (have %v of %v)", when, err, got, want)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("%s: fetch %s/%d: %v", when, topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset != got[r.Partition] {
				t.Fatalf("%s: partition %d: offset %d where %d was next", when, r.Partition, r.Offset, got[r.Partition])
			}
			got[r.Partition]++
			s, err := strconv.ParseInt(string(r.Key), 10, 64)
			if err != nil || int32(s%plPartitions) != r.Partition {
				t.Fatalf("%s: partition %d offset %d: key %q", when, r.Partition, r.Offset, r.Key)
			}
			if prev, dup := seen[s]; dup {
				t.Fatalf("%s: record %d twice: partition %d offsets %d and %d", when, s, r.Partition, prev.offset, r.Offset)
			}
			seen[s] = plPosition{r.Partition, r.Offset}
		})
	}
	lost := 0
	for s, pos := range durable {
		got, ok := seen[s]
		switch {
		case !ok:
			lost++
			if lost <= 10 {
				t.Errorf("%s: record %d, acknowledged at partition %d offset %d, lost", when, s, pos.partition, pos.offset)
			}
		case got != pos:
			t.Errorf("%s: record %d acknowledged at %+v, read at %+v", when, s, pos, got)
		}
	}
	if lost > 0 {
		t.Fatalf("%s: %d of %d acknowledged records lost", when, lost, len(durable))
	}
}
