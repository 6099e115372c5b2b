package wire

import (
	"math"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// startBrokerPool is startBroker with a server whose request and response
// memory pools (queued.max.request.bytes) hold pool bytes.
func startBrokerPool(t *testing.T, props map[string]string, pool int64) (*Server, *fakeBroker) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := newFakeBrokerFS(t, ln.Addr().String(), props, nil)
	h, err := NewBrokerHandler(BrokerHandlerConfig{Broker: b, System: b.system})
	if err != nil {
		t.Fatal(err)
	}
	cfg := TestConfig()
	cfg.SocketRequestMaxBytes, cfg.QueuedMaxRequestBytes = int32(pool), pool
	s, err := NewServer(cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(ln); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.Close()
		_ = h.Close()
	})
	return s, b
}

// Fetch responses read from the log and not yet written are bounded: a
// huge fetch whose client does not read holds its response's memory, a
// second huge fetch waits for it before reading, an ordinary consumer's
// fetch (small partition max bytes) is served meanwhile from the reserve,
// and once everything is written or closed the pool is back to full.
func TestFetchResponseMemoryBounded(t *testing.T) {
	// main 14 MiB; a reserve of 2 MiB for reads of up to 256 KiB (taking
	// twice that). Responses of 8 MiB cannot fit in the socket buffers of
	// a client that does not read.
	const pool = 16 << 20
	s, b := startBrokerPool(t, map[string]string{"fetch.max.bytes": "8388608"}, pool)
	createTopic(t, b, "m", 1)
	c := dial(t, s)
	rec := makeBatch(t, batchOpts(), 1, 1000<<10)
	for range 12 {
		wantCode(t, "produce", c.produce(9, 1, "m", 0, rec).ErrorCode, nil)
	}
	huge := func() *kmsg.FetchRequest {
		return fetchReq(11, 0, 1, math.MaxInt32, fetchPart("m", 0, 0, math.MaxInt32))
	}

	// A reads 8 MiB and does not read its socket: its response cannot be
	// written, so it holds its memory.
	a := dial(t, s)
	a.send(huge(), 1)
	waitFor(t, func() bool { return s.Stats().ResponseBytesInUse >= pool-pool/8 })

	// B's huge fetch waits for room before reading.
	bc := dial(t, s)
	bc.send(huge(), 2)
	waitFor(t, func() bool { return s.Stats().ResponseMemoryWaits == 1 })

	// A consumer's small fetch is served meanwhile.
	resp := roundTrip[*kmsg.FetchResponse](c, fetchReq(11, 0, 1, math.MaxInt32, fetchPart("m", 0, 0, 256<<10)))
	if p := onlyPartition(t, resp); p.ErrorCode != 0 || len(p.RecordBatches) == 0 {
		t.Fatalf("small fetch: code %d, %d bytes", p.ErrorCode, len(p.RecordBatches))
	}

	// A reads its response; then B is served.
	ar := kmsg.NewPtrFetchResponse()
	ar.Version = 11
	a.nc.SetReadDeadline(time.Now().Add(ioTimeout))
	a.expectCorr(ar, 1)
	br := kmsg.NewPtrFetchResponse()
	br.Version = 11
	bc.expectCorr(br, 2)
	if len(br.Topics[0].Partitions[0].RecordBatches) < 1<<20 {
		t.Fatalf("the waiting fetch got %d bytes", len(br.Topics[0].Partitions[0].RecordBatches))
	}
	waitFor(t, func() bool { return s.Stats().ResponseBytesInUse == 0 })

	// A huge fetch left unwritten when its connection closes gives its
	// memory back too.
	d := dial(t, s)
	d.send(huge(), 3)
	waitFor(t, func() bool { return s.Stats().ResponseBytesInUse > 0 })
	d.nc.Close()
	waitFor(t, func() bool { st := s.Stats(); return st.ResponseBytesInUse == 0 && st.RequestBytesInUse == 0 })
}
