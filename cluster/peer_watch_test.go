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

// TestConnEnded: the peek that lets Down see a closed watch connection
// before the watch's goroutine does. An idle connection, and one with
// data waiting, have not ended; one the peer closed or reset has, and the
// peek takes nothing from it.
func TestConnEnded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pair := func() (*net.TCPConn, *net.TCPConn) {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close(); _ = s.Close() })
		return c.(*net.TCPConn), s.(*net.TCPConn)
	}
	ends := func(c *net.TCPConn) bool {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if connEnded(c) {
				return true
			}
			time.Sleep(time.Millisecond) // polling the kernel's state, not synchronizing
		}
		return false
	}

	c, s := pair()
	if connEnded(c) {
		t.Fatal("an idle open connection counts as ended")
	}
	if _, err := s.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	// The byte arrives; the connection has still not ended, and the peek
	// leaves the byte to be read.
	var buf [1]byte
	if connEnded(c) {
		t.Fatal("a connection with data waiting counts as ended")
	}
	if _, err := c.Read(buf[:]); err != nil || buf[0] != 'x' {
		t.Fatalf("read after the peek: %q, %v", buf[:], err)
	}

	c, s = pair()
	_ = s.Close()
	if !ends(c) {
		t.Fatal("a connection the peer closed never counts as ended")
	}

	c, s = pair()
	_ = s.SetLinger(0)
	_ = s.Close() // a reset
	if !ends(c) {
		t.Fatal("a connection the peer reset never counts as ended")
	}
}
