package cluster

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// watchOne runs one peer watch on addr and returns a channel that gets
// the node id when the watch reports it.
func watchOne(t *testing.T, addr string) (*peerWatch, chan int32) {
	t.Helper()
	got := make(chan int32, 1)
	w := &peerWatch{addr: addr, stop: make(chan struct{})}
	go w.run(7, func(n int32) { got <- n })
	return w, got
}

// TestPeerWatchReportsAProcessThatIsGone holds a connection to a listener;
// when the "process" goes (listener and connections closed), the watch
// dials again, is refused and reports the node, once.
func TestPeerWatchReportsAProcessThatIsGone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			accepted <- struct{}{}
		}
	}()
	w, got := watchOne(t, ln.Addr().String())
	defer close(w.stop)
	select {
	case <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("the watch never connected")
	}
	select {
	case n := <-got:
		t.Fatalf("reported node %d while its listener lives", n)
	case <-time.After(200 * time.Millisecond):
	}
	_ = ln.Close()
	mu.Lock()
	for _, c := range conns {
		_ = c.Close()
	}
	mu.Unlock()
	select {
	case n := <-got:
		if n != 7 {
			t.Fatalf("reported node %d, want 7", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch never reported the node whose listener went away")
	}
}

// TestPeerWatchDoesNotSpin: a listener that closes every connection it
// accepts is neither reported (it listens) nor dialed in a tight loop.
func TestPeerWatchDoesNotSpin(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var dials atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			dials.Add(1)
			_ = c.Close()
		}
	}()
	w, got := watchOne(t, ln.Addr().String())
	for dials.Load() < 2 {
		select {
		case n := <-got:
			t.Fatalf("reported node %d while its listener lives", n)
		case <-time.After(10 * time.Millisecond):
		}
	}
	start, before := time.Now(), dials.Load()
	select {
	case n := <-got:
		t.Fatalf("reported node %d while its listener lives", n)
	case <-time.After(time.Second):
	}
	if d := dials.Load() - before; float64(d) > 2*time.Since(start).Seconds()/watchRetry.Seconds()+2 {
		t.Fatalf("%d dials in %v: the watch spins", d, time.Since(start))
	}
	close(w.stop)
}
