package wire

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrBrokerConnClosed is a request on a BrokerConn that is closed, by
// Close or because an earlier exchange failed (the cause is wrapped too).
var ErrBrokerConnClosed = errors.New("wire: broker connection closed")

// brokerConnMaxResponse bounds the size of one response frame a
// BrokerConn reads: far above any Fetch response a replica asks for
// (replica.fetch.response.max.bytes, plus one oversized first batch), a
// guard against a corrupt size prefix only.
const brokerConnMaxResponse = 1 << 30

// BrokerConn is a Kafka client connection from this broker to another
// one (the replica fetcher's way to its leader): requests encoded with
// kmsg at the version the caller sets, request header v1 or, for flexible
// versions, v2, one exchange at a time. It is safe for concurrent use:
// concurrent requests wait for each other. Any failed exchange (an I/O
// error, a malformed response, a canceled context) closes it, since the
// stream's position is then unknown; dial a new one.
type BrokerConn struct {
	addr string
	nc   net.Conn
	br   *bufio.Reader
	f    *kmsg.RequestFormatter

	// turn is held (a token in it) by the exchange in progress; waiting
	// for it honours the waiter's ctx, which a mutex could not.
	turn chan struct{}
	// corr and buf are owned by the exchange holding turn.
	corr int32
	buf  []byte

	mu     sync.Mutex
	closed error // why the connection is closed, nil while open
}

// DialBroker connects to the Kafka listener at addr (host:port), sending
// clientID in every request header. ctx bounds the dial only.
func DialBroker(ctx context.Context, addr, clientID string) (*BrokerConn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("wire: dialing broker %s: %w", addr, err)
	}
	return &BrokerConn{
		addr: addr,
		nc:   nc,
		br:   bufio.NewReaderSize(nc, readBufferSize),
		f:    kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID)),
		turn: make(chan struct{}, 1),
	}, nil
}

// Addr is the address the connection was dialed to.
func (c *BrokerConn) Addr() string { return c.addr }

// Request sends req at req.GetVersion() and returns its response, decoded
// at that version. Until ctx ends it waits for the exchange before it and
// then for the answer; when ctx ends first, the connection is closed and
// the error wraps ctx's. Byte slices in the response (a Fetch's records)
// are the response's own: nothing reuses them.
func (c *BrokerConn) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	name := apiKeyName(req.Key())
	select {
	case c.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("wire: broker %s: %s v%d: waiting for the connection: %w", c.addr, name, req.GetVersion(), ctx.Err())
	}
	defer func() { <-c.turn }()
	if err := c.closedErr(); err != nil {
		return nil, fmt.Errorf("wire: broker %s: %s v%d: %w", c.addr, name, req.GetVersion(), err)
	}
	// A ctx that ends mid-exchange closes the socket, which unblocks the
	// read or write in progress.
	stop := context.AfterFunc(ctx, func() { c.fail(ctx.Err()) })
	resp, err := c.exchange(req)
	if !stop() && ctx.Err() != nil {
		err = ctx.Err() // the exchange failed because the socket was closed under it
	}
	if err != nil {
		c.fail(err)
		return nil, fmt.Errorf("wire: broker %s: %s v%d: %w", c.addr, name, req.GetVersion(), err)
	}
	return resp, nil
}

// exchange writes one request and reads its response; turn is held. It
// sets no socket deadline: the caller's ctx bounds it by closing the
// socket, so a BrokerConn never times out on its own.
func (c *BrokerConn) exchange(req kmsg.Request) (kmsg.Response, error) {
	c.corr++
	corr := c.corr
	c.buf = c.f.AppendRequest(c.buf[:0], req, corr)
	if cap(c.buf) > keepWriteBuffer {
		defer func() { c.buf = nil }()
	}
	if _, err := c.nc.Write(c.buf); err != nil {
		return nil, fmt.Errorf("writing the request: %w", err)
	}
	size, err := readFrameSize(c.br, brokerConnMaxResponse)
	if err != nil {
		return nil, fmt.Errorf("reading the response size: %w", err)
	}
	if size < 4 {
		return nil, fmt.Errorf("%w: response frame of %d bytes", errFrameSize, size)
	}
	frame, err := readPayload(c.br, size)
	if err != nil {
		return nil, fmt.Errorf("reading the response: %w", err)
	}
	if got := int32(binary.BigEndian.Uint32(frame)); got != corr {
		return nil, fmt.Errorf("response correlation id %d, want %d", got, corr)
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	body := frame[4:]
	// Response header v1 (flexible versions, never ApiVersions) ends in
	// tagged fields; none is defined, so they are skipped.
	if resp.IsFlexible() && resp.Key() != apiVersionsKey {
		if body, err = skipHeaderTags(body); err != nil {
			return nil, fmt.Errorf("response header: %w", err)
		}
	}
	if err := resp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("decoding the response: %w", err)
	}
	return resp, nil
}

// closedErr returns why the connection is closed, nil while open.
func (c *BrokerConn) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// fail closes the connection for cause (the first cause is kept).
func (c *BrokerConn) fail(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed != nil {
		return
	}
	c.closed = fmt.Errorf("%w: %w", ErrBrokerConnClosed, cause)
	_ = c.nc.Close()
}

// Close closes the connection; an exchange in progress fails. Closing
// twice is harmless.
func (c *BrokerConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed != nil {
		return nil
	}
	c.closed = ErrBrokerConnClosed
	if err := c.nc.Close(); err != nil {
		return fmt.Errorf("wire: closing broker connection to %s: %w", c.addr, err)
	}
	return nil
}
