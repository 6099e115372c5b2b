package bounds

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/internal/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

const (
	memoryCap = 1 << 30
	// bigTopic holds bigBytes, written by a fast producer: enough that
	// one unbounded fetch of it is a quarter of the cap and 16 are four
	// times the cap, small enough to write in seconds.
	bigTopic  = "big"
	bigBytes  = 300 << 20
	bigRecord = 100 << 10
)

// TestMemoryBounds attacks `weir serve` under a 1 GiB memory cap three
// ways, one subtest (and one broker) each: 200 connections slowly sending
// 100 MiB frames, one connection with 16 pipelined huge fetches it never
// reads, and 16 connections each fetching with max bytes 2^31-1 from a
// partition of 300 MB. Through each the broker stays alive, its peak RSS
// stays under the cap, and an ordinary client's produce-and-consume round
// trip keeps completing, during the attack and after it.
func TestMemoryBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 300 MB")
	}
	t.Run("SlowHugeFrames", func(t *testing.T) {
		b := startCapped(t, false)
		stop := slowHugeFrames(t, b.addr, 200, 100<<20, 15<<20)
		b.roundTrips(t, attackRoundTrips)
		stop()
		b.check(t)
		b.roundTrips(t, 1)
	})
	t.Run("UnreadPipelinedFetches", func(t *testing.T) {
		b := startCapped(t, true)
		nc := dialRaw(t, b.addr)
		for i := range 16 {
			writeRaw(t, nc, hugeFetch(), int32(i))
		}
		b.roundTrips(t, attackRoundTrips)
		b.check(t)
		nc.Close()
		b.roundTrips(t, 1)
	})
	t.Run("ConcurrentHugeFetches", func(t *testing.T) {
		b := startCapped(t, true)
		// Sixteen slow consumers: each asks for everything, and reads
		// its response only after the round trips, so the sixteen are
		// in flight together.
		ncs := make([]net.Conn, 16)
		for i := range ncs {
			ncs[i] = dialRaw(t, b.addr)
			writeRaw(t, ncs[i], hugeFetch(), 1)
		}
		b.roundTrips(t, attackRoundTrips)
		var wg sync.WaitGroup
		var got atomic.Int64
		for _, nc := range ncs {
			wg.Go(func() {
				defer nc.Close()
				n, err := readRawFrame(nc)
				if err != nil {
					t.Errorf("huge fetch: %v", err)
				}
				got.Add(n)
			})
		}
		wg.Wait()
		if got.Load() < 16<<20 {
			t.Fatalf("the huge fetches returned %d bytes in all", got.Load())
		}
		b.check(t)
		b.roundTrips(t, 1)
	})
}

// attackRoundTrips is how many round trips an ordinary client makes while
// an attack is in place: each must complete, and together they give the
// attack time to take whatever memory the broker lets it.
const attackRoundTrips = 10

// capped is a `weir serve` under the memory cap.
type capped struct {
	p    *harness.Process
	addr string
	// ctx ends when the test's time is up or the broker dies, so a client
	// retrying against a dead broker fails at once.
	ctx context.Context
}

// startCapped starts a broker under memoryCap, with bigTopic filled when
// data is set.
func startCapped(t *testing.T, data bool) *capped {
	t.Helper()
	addr := harness.FreeAddr(t)
	p := harness.Start(t, cappedServe(t, memoryCap, "--data", t.TempDir(), "--listen", addr))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	go func() {
		select {
		case <-p.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	b := &capped{p: p, addr: addr, ctx: ctx}
	if data {
		fillBigTopic(ctx, t, addr)
	}
	b.check(t)
	return b
}

// check fails the test when the broker died or its peak RSS reached the
// cap.
func (b *capped) check(t *testing.T) {
	t.Helper()
	select {
	case <-b.p.Done():
		t.Fatalf("the broker died")
	default:
	}
	rss, err := peakRSS(b.p.Pid())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("peak RSS %d MiB", rss>>20)
	if rss >= memoryCap {
		t.Fatalf("peak RSS %d bytes reached the %d-byte cap", rss, memoryCap)
	}
}

func (b *capped) roundTrips(t *testing.T, n int) {
	t.Helper()
	roundTrips(b.ctx, t, b.addr, n)
}

// fillBigTopic writes bigBytes to partition 0 of bigTopic.
func fillBigTopic(ctx context.Context, t *testing.T, addr string) {
	t.Helper()
	cl := newClient(t, addr, kgo.ProducerBatchMaxBytes(1<<20), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.ProducerLinger(0), kgo.MaxBufferedBytes(64<<20), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, bigTopic); err != nil {
		t.Fatal(err)
	}
	value := make([]byte, bigRecord)
	rand.Read(value) // incompressible
	var failed atomic.Value
	var wg sync.WaitGroup
	for range bigBytes / bigRecord {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Topic: bigTopic, Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Store(err)
			}
			wg.Done()
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatalf("filling %s: %v", bigTopic, err)
	}
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, bigTopic)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ends.Lookup(bigTopic, 0); o.Offset != bigBytes/bigRecord {
		t.Fatalf("%s ends at %d, want %d", bigTopic, o.Offset, bigBytes/bigRecord)
	}
}

func newClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

var roundTripSeq atomic.Int64

// roundTrips runs n produce-and-consume round trips of an ordinary client
// (franz-go at its defaults, a fresh connection each) and fails unless
// each completes: the record produced comes back from a fetch.
func roundTrips(ctx context.Context, t *testing.T, addr string, n int) {
	t.Helper()
	for range n {
		topic := fmt.Sprintf("rt-%d", roundTripSeq.Add(1))
		cl := newClient(t, addr, kgo.ConsumeTopics(topic), kgo.AllowAutoTopicCreation())
		want := fmt.Sprintf("round trip %s", topic)
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(want)}).FirstErr(); err != nil {
			t.Fatalf("round trip produce: %v (the broker died or stalled)", err)
		}
		for got := false; !got; {
			fs := cl.PollFetches(ctx)
			if err := ctx.Err(); err != nil {
				t.Fatalf("round trip consume: %v (the broker died or stalled)", err)
			}
			fs.EachError(func(_ string, _ int32, err error) { t.Logf("round trip fetch: %v", err) })
			fs.EachRecord(func(r *kgo.Record) { got = got || string(r.Value) == want })
		}
		cl.Close()
	}
}

// slowHugeFrames opens conns connections that each declare a frame of
// size bytes and send the first sent bytes of it, slowly, then stall. It
// returns once every connection has sent its size prefix; stop closes
// them all.
func slowHugeFrames(t *testing.T, addr string, conns int, size, sent int) (stop func()) {
	t.Helper()
	var wg sync.WaitGroup
	done := make(chan struct{})
	ncs := make([]net.Conn, conns)
	for i := range ncs {
		ncs[i] = dialRaw(t, addr)
		if _, err := ncs[i].Write(binary.BigEndian.AppendUint32(nil, uint32(size))); err != nil {
			t.Fatal(err)
		}
	}
	chunk := make([]byte, 64<<10)
	for _, nc := range ncs {
		wg.Go(func() {
			for left := sent; left > 0; left -= len(chunk) {
				select {
				case <-done:
					return
				default:
				}
				// A connection the broker does not read blocks here (TCP
				// pushes back); stop's close ends the write.
				if _, err := nc.Write(chunk[:min(len(chunk), left)]); err != nil {
					return
				}
			}
		})
	}
	return func() {
		close(done)
		for _, nc := range ncs {
			nc.Close()
		}
		wg.Wait()
	}
}

// hugeFetch asks for everything in bigTopic: max bytes 2^31-1 for the
// response and the partition, no waiting.
func hugeFetch() kmsg.Request {
	r := kmsg.NewPtrFetchRequest()
	r.Version = 11
	r.ReplicaID = -1
	r.MaxBytes = math.MaxInt32
	r.MinBytes = 1
	r.SessionEpoch = -1
	tp := kmsg.NewFetchRequestTopic()
	tp.Topic = bigTopic
	pp := kmsg.NewFetchRequestTopicPartition()
	pp.Partition, pp.FetchOffset, pp.PartitionMaxBytes = 0, 0, math.MaxInt32
	pp.CurrentLeaderEpoch, pp.LogStartOffset, pp.LastFetchedEpoch = -1, -1, -1
	tp.Partitions = append(tp.Partitions, pp)
	r.Topics = append(r.Topics, tp)
	return r
}

func dialRaw(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// writeRaw writes req as one request frame.
func writeRaw(t *testing.T, nc net.Conn, req kmsg.Request, corr int32) {
	t.Helper()
	b := kmsg.NewRequestFormatter(kmsg.FormatterClientID("bounds-test")).AppendRequest(nil, req, corr)
	if _, err := nc.Write(b); err != nil {
		t.Fatal(err)
	}
}

// readRawFrame reads and discards one response frame, returning its size.
func readRawFrame(nc net.Conn) (int64, error) { return readRawFrameWithin(nc, 2*time.Minute) }

// readRawFrameWithin is readRawFrame failing after d.
func readRawFrameWithin(nc net.Conn, d time.Duration) (int64, error) {
	nc.SetReadDeadline(time.Now().Add(d))
	var size [4]byte
	if _, err := io.ReadFull(nc, size[:]); err != nil {
		return 0, err
	}
	return io.CopyN(io.Discard, nc, int64(binary.BigEndian.Uint32(size[:])))
}
