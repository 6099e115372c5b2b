package cluster

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/weirmq/weir/cluster/metadata"
)

// Timings of a peer watch.
const (
	// watchDialTimeout bounds one dial of a peer's listener.
	watchDialTimeout = time.Second
	// watchRetry is the wait before dialing again after a dial failed
	// without a refusal, or after connections ended soon after they were
	// made (a listener that closes what it accepts is not dialed in a
	// loop).
	watchRetry = 500 * time.Millisecond
)

// peerWatches keeps one idle TCP connection open to the Kafka listener of
// every other unfenced broker, so that a process that dies is noticed as
// soon as its kernel closes that connection, well before gossip's verdict:
// the watch then dials the listener again at once, and a refused
// connection is the evidence that no process listens there any more
// (processGone; see probeGone for why that evidence, and only it, may
// fence before the session timeout). A frozen process's connection stays
// open and a cut-off one's stays silent: neither gives evidence, and
// their sessions run out as designed. The metadata actor owns it (not
// safe for concurrent use); each watch runs on a goroutine of its own.
type peerWatches struct {
	self   int32
	report func(node int32) // called from a watch's goroutine

	mu      sync.Mutex // guards watches: Down is asked from any goroutine
	watches map[int32]*peerWatch
}

// peerWatch is the watch of one registration of a broker.
type peerWatch struct {
	addr  string
	epoch int64
	stop  chan struct{}
	// down is set from the moment the held connection ended until a
	// dial succeeds again.
	down atomic.Bool
	// held is the connection held now (nil between connections), for
	// Down to look at without waiting for the watch's goroutine.
	held atomic.Pointer[net.TCPConn]
}

func newPeerWatches(self int32, report func(node int32)) *peerWatches {
	return &peerWatches{self: self, report: report, watches: map[int32]*peerWatch{}}
}

// sync makes the watches follow img: one per unfenced broker other than
// this node, restarted when its registration (epoch or address) changes,
// stopped when it is fenced or gone.
func (p *peerWatches) sync(img *metadata.Image) {
	p.mu.Lock()
	defer p.mu.Unlock()
	want := map[int32]metadata.Broker{}
	for _, br := range img.Brokers() {
		if br.NodeID != p.self && !br.Fenced && br.Port > 0 {
			want[br.NodeID] = br
		}
	}
	for node, w := range p.watches {
		if br, ok := want[node]; !ok || br.Epoch != w.epoch || br.Addr() != w.addr {
			close(w.stop)
			delete(p.watches, node)
		}
	}
	for node, br := range want {
		if _, ok := p.watches[node]; ok {
			continue
		}
		w := &peerWatch{addr: br.Addr(), epoch: br.Epoch, stop: make(chan struct{})}
		p.watches[node] = w
		go w.run(node, p.report)
	}
}

// Down reports whether the connection held to node's listener ended and
// no new one could be made since: its process may be gone, and the quorum
// has not said so yet (the refused dial that is the evidence comes within
// a round trip if so). A hint only: Metadata answers wait on it for an
// election, never longer than they wait for one anyway.
//
// A connection the peer's kernel has just closed counts at once, before
// the watch's goroutine has read the end: a client whose connection to a
// dead broker was reset asks a survivor for Metadata within a fraction of
// a millisecond, and on a busy machine the watch may not have run yet; an
// answer naming the dead leader would cost franz-go its whole
// MetadataMinAge (5 s) before it asks again.
func (p *peerWatches) Down(node int32) bool {
	p.mu.Lock()
	w := p.watches[node]
	p.mu.Unlock()
	if w == nil {
		return false
	}
	if w.down.Load() {
		return true
	}
	if c := w.held.Load(); c != nil && connEnded(c) {
		w.down.Store(true) // the watch's goroutine finds the same
		return true
	}
	return false
}

// connEnded reports whether the peer closed or reset c, by peeking at its
// socket without blocking and without taking anything from it: a held
// watch connection never carries data, so an end of stream or an error
// other than "nothing to read" is the end. Safe while another goroutine
// blocks in c.Read.
func connEnded(c *net.TCPConn) bool {
	rc, err := c.SyscallConn()
	if err != nil {
		return true
	}
	ended := false
	var buf [1]byte
	cerr := rc.Control(func(fd uintptr) {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil:
			ended = n == 0
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR):
		default:
			ended = true
		}
	})
	return cerr != nil || ended
}

// stopAll stops every watch.
func (p *peerWatches) stopAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for node, w := range p.watches {
		close(w.stop)
		delete(p.watches, node)
	}
}

// run holds a connection to the listener and waits for it to end; then
// it dials again at once. It reports the node once, on the first refused
// dial, and ends there: the broker is fenced then, and its next
// registration gets a new watch.
func (w *peerWatch) run(node int32, report func(int32)) {
	// short counts the connections in a row that ended within watchRetry
	// of being made: the first such end is probed at once (a process
	// killed just after the watch connected), a second waits.
	short := 0
	for {
		if short >= 2 && !w.wait(watchRetry) {
			return
		}
		conn, err := net.DialTimeout("tcp", w.addr, watchDialTimeout)
		if w.stopped() {
			if conn != nil {
				_ = conn.Close()
			}
			return
		}
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) {
				report(node)
				return
			}
			if !w.wait(watchRetry) {
				return
			}
			continue
		}
		w.down.Store(false)
		made := time.Now()
		if tc, ok := conn.(*net.TCPConn); ok {
			w.held.Store(tc)
		}
		w.hold(conn)
		w.held.Store(nil)
		w.down.Store(true)
		if w.stopped() {
			return
		}
		if time.Since(made) < watchRetry {
			short++
		} else {
			short = 0
		}
	}
}

// hold blocks until conn ends (the peer closed or reset it, or the watch
// stops) and closes it. Nothing is ever sent: a broker keeps an idle
// connection until connections.max.idle.ms, after which the watch simply
// dials again.
func (w *peerWatch) hold(conn net.Conn) {
	done := make(chan struct{})
	go func() {
		select {
		case <-w.stop:
			_ = conn.Close()
		case <-done:
		}
	}()
	var buf [64]byte
	for {
		if _, err := conn.Read(buf[:]); err != nil {
			break
		}
	}
	close(done)
	_ = conn.Close()
}

// wait waits d unless the watch stops first; it reports whether the
// watch goes on.
func (w *peerWatch) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.stop:
		return false
	case <-t.C:
		return true
	}
}

func (w *peerWatch) stopped() bool {
	select {
	case <-w.stop:
		return true
	default:
		return false
	}
}
