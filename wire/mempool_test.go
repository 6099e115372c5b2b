package wire

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// acquireAsync acquires n bytes in the background.
func acquireAsync(p *memPool, ctx context.Context, n int64) chan memGrant {
	ch := make(chan memGrant, 1)
	go func() {
		if g, err := p.acquire(ctx, n); err == nil {
			ch <- g
		} else {
			close(ch)
		}
	}()
	return ch
}

func waitersOf(p *memPool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waiters)
}

func mustGrant(t *testing.T, ch chan memGrant) memGrant {
	t.Helper()
	select {
	case g, ok := <-ch:
		if !ok {
			t.Fatal("acquire failed")
		}
		return g
	case <-time.After(ioTimeout):
		t.Fatal("acquire still waiting")
	}
	return memGrant{}
}

func TestMemPool(t *testing.T) {
	ctx := context.Background()
	p := newMemPool(800) // reserve 100, small frames up to 25
	if p.reserve != 100 || p.smallMax != 25 {
		t.Fatalf("reserve %d small %d", p.reserve, p.smallMax)
	}
	// Non-strict, as Kafka: a frame larger than what is left (even than
	// the pool) is granted while the pool is not exhausted.
	big1, _ := p.acquire(ctx, 600)
	big2, _ := p.acquire(ctx, 900)
	if used, _ := p.inUse(); used != 1500 {
		t.Fatalf("in use %d, want 1500", used)
	}
	// Exhausted: large frames wait, in order.
	l1 := acquireAsync(p, ctx, 50)
	waitFor(t, func() bool { return waitersOf(p) == 1 })
	l2 := acquireAsync(p, ctx, 40)
	waitFor(t, func() bool { return waitersOf(p) == 2 })
	// A small frame still gets the reserve, without waiting.
	s1, err := p.acquire(ctx, 25)
	if err != nil || s1.reserve != 25 {
		t.Fatalf("small frame: %+v %v, want the reserve", s1, err)
	}
	// A canceled wait grants nothing and leaves the queue.
	cctx, cancel := context.WithCancel(ctx)
	l3 := acquireAsync(p, cctx, 30)
	waitFor(t, func() bool { return waitersOf(p) == 3 })
	cancel()
	if _, ok := <-l3; ok {
		t.Fatal("canceled acquire granted")
	}
	p.release(big2)
	g1, g2 := mustGrant(t, l1), mustGrant(t, l2)
	p.release(big1)
	p.release(g1)
	p.release(g2)
	p.release(s1)
	if used, waits := p.inUse(); used != 0 || waits != 3 || waitersOf(p) != 0 {
		t.Fatalf("after releasing everything: in use %d, waits %d, waiters %d", used, waits, waitersOf(p))
	}
}

// Large frames are granted in arrival order: a later small-enough large
// frame does not overtake an earlier one.
func TestMemPoolLargeFIFO(t *testing.T) {
	ctx := context.Background()
	p := newMemPool(800)
	hold, _ := p.acquire(ctx, 700) // main left: 0
	first := acquireAsync(p, ctx, 500)
	waitFor(t, func() bool { return waitersOf(p) == 1 })
	second := acquireAsync(p, ctx, 30)
	waitFor(t, func() bool { return waitersOf(p) == 2 })
	p.release(memGrant{main: 1}) // someone returns 1 byte: main free 1
	hold.main--
	g := mustGrant(t, first)
	select {
	case <-second:
		t.Fatal("the later frame was granted although the pool is exhausted")
	case <-time.After(20 * time.Millisecond):
	}
	p.release(hold)
	p.release(g)
	p.release(mustGrant(t, second))
	if used, _ := p.inUse(); used != 0 {
		t.Fatalf("in use %d after releasing everything", used)
	}
}

func TestMemPoolUnbounded(t *testing.T) {
	p := newMemPool(0)
	g, err := p.acquire(context.Background(), 1<<40)
	if err != nil || g != (memGrant{}) {
		t.Fatalf("%+v %v", g, err)
	}
	p.release(g)
}

// Through a server: a frame larger than what the pool has left waits
// before being read (its sender's bytes stay in the socket), small
// requests of other clients are served meanwhile from the reserve, and
// once every connection has closed the pool is back to full.
func TestRequestMemoryPool(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SocketRequestMaxBytes = 4 << 20
	cfg.QueuedMaxRequestBytes = 4 << 20 // main 3.5 MiB, reserve 512 KiB for frames up to 128 KiB
	s, _ := startServer(t, cfg, metadataHandler(), testTable())

	// Slow huge frame: size and a little of its payload. Granted whole,
	// it exhausts the pool.
	slow := dial(t, s)
	slow.write(binary.BigEndian.AppendUint32(nil, 4<<20))
	slow.write(make([]byte, 1000))
	waitFor(t, func() bool { return s.Stats().RequestBytesInUse == 4<<20 })

	// Another large frame waits.
	big := dial(t, s)
	meta := requestFrame(metadataReq(9), 7)
	padded := append(binary.BigEndian.AppendUint32(nil, uint32(len(meta)-4+(1<<20))), meta[4:]...)
	padded = append(padded, make([]byte, 1<<20)...)
	go big.nc.Write(padded) // blocks in the socket until the frame is read
	waitFor(t, func() bool { return s.Stats().RequestMemoryWaits == 1 })

	// Small requests are served throughout.
	c := dial(t, s)
	for i := range 20 {
		c.send(metadataReq(9), int32(i))
		resp := kmsg.NewPtrMetadataResponse()
		resp.Version = 9
		c.expectCorr(resp, int32(i))
	}
	// (a response is written just before its frame's bytes return)
	waitFor(t, func() bool { return s.Stats().RequestBytesInUse == 4<<20 })

	// The slow sender gives up: its bytes return and the waiting frame is
	// read and answered (the body decodes; the padding after it is
	// ignored, as Kafka ignores bytes after a body).
	slow.nc.Close()
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 9
	big.expectCorr(resp, 7)
	waitFor(t, func() bool { return s.Stats().RequestBytesInUse == 0 })
	big.nc.Close()
	c.nc.Close()
	waitFor(t, func() bool { st := s.Stats(); return st.ConnectionsOpen == 0 && st.RequestBytesInUse == 0 })
}
