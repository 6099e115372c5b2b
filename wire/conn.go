package wire

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// readBufferSize is the buffered reader in front of each socket.
	readBufferSize = 32 << 10
	// keepWriteBuffer is the largest encode buffer a connection keeps for
	// its next response; larger ones (big Fetch responses) are dropped.
	keepWriteBuffer = 1 << 20
)

// conn is one client connection: a reading goroutine that frames, decodes
// and dispatches requests in order, and a writing goroutine that writes
// their answers in the same order.
type conn struct {
	s    *Server
	nc   net.Conn
	info ConnInfo

	// ctx is canceled when the connection closes.
	ctx    context.Context
	cancel context.CancelFunc
	// slots bounds the requests read but not yet answered: the reader takes
	// a slot before reading a frame, the writer frees it after answering.
	slots chan struct{}
	// queue carries the answers in request order from reader to writer;
	// the reader closes it when it stops.
	queue chan *pending
	// inflight counts requests queued but not yet answered; a connection
	// waiting for its own answers is not idle.
	inflight atomic.Int64
	// fetchSlot holds the one Fetch a connection may have in flight: the
	// reader takes it before dispatching a Fetch, the writer frees it once
	// that response is written. Fetch responses are the large ones (up to
	// fetch.max.bytes each); Kafka mutes a connection until each response
	// is sent, weir pipelines the rest but never two fetches, so a client
	// that pipelines fetches and never reads holds one response, not 16.
	fetchSlot chan struct{}
	// ip is the client address counted by the connection limits.
	ip   netip.Addr
	once sync.Once
}

// newConn wraps an accepted connection.
func newConn(s *Server, nc net.Conn, id uint64) *conn {
	ctx, cancel := context.WithCancel(s.ctx)
	n := s.cfg.MaxInFlightRequestsPerConnection
	return &conn{
		s:      s,
		nc:     nc,
		info:   ConnInfo{ID: id, Remote: nc.RemoteAddr(), Local: nc.LocalAddr()},
		ctx:    ctx,
		cancel: cancel,
		slots:  make(chan struct{}, n),
		queue:  make(chan *pending, n),

		fetchSlot: make(chan struct{}, 1),
		ip:        remoteIP(nc.RemoteAddr()),
	}
}

// setSocketBuffers applies socket.receive.buffer.bytes and
// socket.send.buffer.bytes.
func (c *conn) setSocketBuffers() {
	sock, ok := c.nc.(interface {
		SetReadBuffer(int) error
		SetWriteBuffer(int) error
	})
	if !ok {
		return
	}
	if n := c.s.cfg.SocketReceiveBufferBytes; n > 0 {
		if err := sock.SetReadBuffer(n); err != nil {
			c.debug("wire: cannot set socket.receive.buffer.bytes", slog.Any("err", err))
		}
	}
	if n := c.s.cfg.SocketSendBufferBytes; n > 0 {
		if err := sock.SetWriteBuffer(n); err != nil {
			c.debug("wire: cannot set socket.send.buffer.bytes", slog.Any("err", err))
		}
	}
}

// shutdown closes the connection at once: pending answers are dropped and
// the Handler's context is canceled.
func (c *conn) shutdown() {
	c.once.Do(func() {
		c.cancel()
		c.nc.Close()
		c.s.forget(c)
	})
}

// readLoop reads, decodes and dispatches requests in order until the
// connection ends or a request is answered with a close.
func (c *conn) readLoop() {
	defer close(c.queue)
	br := bufio.NewReaderSize(c.nc, readBufferSize)
	for {
		select {
		case c.slots <- struct{}{}:
		case <-c.ctx.Done():
			return
		}
		frame, err := c.readFrame(br)
		if err != nil {
			c.readFailed(err)
			return
		}
		fetch := isFetch(frame.buf)
		if fetch {
			select {
			case c.fetchSlot <- struct{}{}:
			case <-c.ctx.Done():
				frame.done()
				return
			}
		}
		p := c.s.serveFrame(c.ctx, &c.info, frame, time.Now())
		p.fetch = fetch
		if p.resp.kind == kindDefer {
			p.done = make(chan struct{})
			c.s.wg.Go(func() {
				defer close(p.done)
				c.s.complete(c.ctx, p, &c.info)
			})
		}
		c.enqueue(p)
		if p.done == nil && p.resp.kind == kindClose {
			return
		}
	}
}

// enqueue hands an answer to the writer; the slot the reader holds
// guarantees room in the queue.
func (c *conn) enqueue(p *pending) {
	c.inflight.Add(1)
	c.queue <- p
}

// readFrame reads the next frame: its size under connections.max.idle.ms
// (a timeout while answers are still in flight is not idleness: the wait
// goes on), then room for it in the request memory pool (meanwhile the
// socket is not read), then its payload, which must arrive within
// connections.max.idle.ms.
func (c *conn) readFrame(br *bufio.Reader) (*frameRef, error) {
	idle := c.s.cfg.idleTimeout()
	var size int32
	for {
		if idle > 0 {
			c.nc.SetReadDeadline(time.Now().Add(idle))
		}
		var err error
		size, err = readFrameSize(br, c.s.cfg.SocketRequestMaxBytes)
		if err != nil && errorsIsTimeout(err) && !errors.Is(err, errFrameTruncated) && c.inflight.Load() > 0 {
			continue
		}
		if err != nil {
			return nil, err
		}
		break
	}
	grant, err := c.s.pool.acquire(c.ctx, frameCost(size))
	if err != nil {
		return nil, err
	}
	if idle > 0 {
		c.nc.SetReadDeadline(time.Now().Add(idle))
	}
	buf, err := readPayload(br, size)
	if err != nil {
		c.s.pool.release(grant)
		return nil, err
	}
	return &frameRef{buf: buf, pool: c.s.pool, grant: grant}, nil
}

// fetchKey is Fetch's API key.
const fetchKey = 1

// isFetch reports whether a frame is a Fetch request (key 1).
func isFetch(frame []byte) bool {
	return len(frame) >= 2 && binary.BigEndian.Uint16(frame) == fetchKey
}

// readFailed ends reading after err. A frame size out of range is bad input
// answered, like Kafka, by closing once the earlier responses are written;
// a truncated frame closes at once (its client stalled or hung up); an idle
// timeout, a hang-up or the server's own shutdown close quietly.
func (c *conn) readFailed(err error) {
	switch {
	case c.ctx.Err() != nil:
		return
	case errors.Is(err, errFrameSize):
		c.enqueue(c.s.reject(&pending{}, &c.info, nil, err))
		return
	case errors.Is(err, errFrameTruncated):
		c.s.reject(&pending{}, &c.info, nil, err)
	case errorsIsTimeout(err):
		c.s.stats.idleCloses.Add(1)
		c.debug("wire: closing idle connection", slog.Int64("connections.max.idle.ms", c.s.cfg.ConnectionsMaxIdleMs))
	case errors.Is(err, io.EOF):
		c.debug("wire: client closed the connection")
	default:
		c.debug("wire: read failed", slog.Any("err", err))
	}
	c.shutdown()
}

// writeLoop writes the answers in request order, waiting for each deferred
// one, until the queue ends or an answer closes the connection.
func (c *conn) writeLoop() {
	defer c.drain()
	defer c.shutdown()
	var buf []byte
	for p := range c.queue {
		if p.done != nil {
			select {
			case <-p.done:
			case <-c.ctx.Done():
				p.frame.done()
				return
			}
		}
		ok := c.write(p, &buf)
		p.frame.done()
		if !ok {
			return
		}
		if p.fetch {
			<-c.fetchSlot
		}
		c.inflight.Add(-1)
		<-c.slots
	}
}

// drain returns the request memory of the answers left unwritten when the
// connection closed. The reader closes the queue once it sees the
// connection's context canceled, which shutdown has done.
func (c *conn) drain() {
	for p := range c.queue {
		p.frame.done()
	}
}

// write performs one settled answer and reports whether the connection
// stays open.
func (c *conn) write(p *pending, buf *[]byte) bool {
	switch p.resp.kind {
	case kindNone:
		c.s.stats.noResponses.Add(1)
		return true
	case kindReply:
		return c.writeReply(p, buf)
	}
	if !p.resp.logged {
		c.s.stats.handlerCloses.Add(1)
		c.s.log.LogAttrs(c.ctx, slog.LevelInfo, "wire: closing connection as the handler asked",
			append(connAttrs(&c.info, &header{key: p.key, version: p.version, corr: p.corr}), slog.Any("reason", p.resp.reason))...)
	}
	return false
}

// writeReply encodes and writes one response frame.
func (c *conn) writeReply(p *pending, buf *[]byte) bool {
	b, err := appendResponse(encodeBuffer(*buf, p.resp.body), p.corr, p.resp.body)
	p.resp.body = nil // encoded: what it held (a Fetch's records) may go during the write
	if p.resp.after != nil {
		defer p.resp.after() // once written, or once the write failed
	}
	if err != nil {
		c.s.handlerError(&c.info, p.key, p.version, p.corr, err, nil)
		return false
	}
	if cap(b) <= keepWriteBuffer {
		*buf = b
	} else {
		*buf = nil
	}
	if idle := c.s.cfg.idleTimeout(); idle > 0 {
		c.nc.SetWriteDeadline(time.Now().Add(idle))
	}
	if _, err := c.nc.Write(b); err != nil {
		if c.ctx.Err() == nil {
			c.debug("wire: write failed", slog.Any("err", err))
		}
		return false
	}
	c.s.stats.responses.Add(1)
	return true
}

// debug logs a routine connection event.
func (c *conn) debug(msg string, attrs ...slog.Attr) {
	c.s.log.LogAttrs(c.ctx, slog.LevelDebug, msg, append(connAttrs(&c.info, nil), attrs...)...)
}

// errorsIsTimeout reports whether err is a deadline expiry.
func errorsIsTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
