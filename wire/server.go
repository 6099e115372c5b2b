package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ErrServerClosed is returned by Serve and Listen after Close.
var ErrServerClosed = errors.New("wire: server closed")

// Server is the Kafka socket server: it accepts connections, frames and
// decodes requests, answers ApiVersions, hands every other request to its
// Handler and writes the responses back in request order. It holds no
// broker state. Create it with NewServer.
type Server struct {
	cfg     Config
	handler Handler
	log     *slog.Logger
	apis    apiTable
	index   apiIndex
	stats   counters
	// pool is queued.max.request.bytes (mempool.go).
	pool    *memPool
	rejects LogThrottle // bad-input warnings (dispatch.go)

	// ctx is canceled by Close; every connection's context derives from it.
	ctx    context.Context
	cancel context.CancelFunc
	// wg counts the accept loop, connection goroutines and deferred
	// responses; Close waits for it.
	wg     sync.WaitGroup
	connID atomic.Uint64

	mu     sync.Mutex
	ln     net.Listener
	conns  map[*conn]struct{}
	limits *connLimits
	closed bool
	// refusedLog and acceptLog keep the log lines of refused connections
	// and failed accepts to one per interval (with a count) under a flood.
	refusedLog, acceptLog LogThrottle
}

// NewServer returns a server for cfg that passes requests to h. It does not
// listen yet: call Listen or Serve.
func NewServer(cfg Config, h Handler) (*Server, error) {
	return newServer(cfg, h, apis)
}

// newServer builds a server over an API table (tests pass their own).
func newServer(cfg Config, h Handler, table apiTable) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, fmt.Errorf("%w: nil handler", ErrInvalidConfig)
	}
	index, err := table.index()
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		cfg:     cfg,
		handler: h,
		log:     logger,
		apis:    table,
		index:   index,
		ctx:     ctx,
		cancel:  cancel,
		conns:   map[*conn]struct{}{},
		pool:    newMemPool(max(cfg.QueuedMaxRequestBytes, 0)),
		limits:  newConnLimits(&cfg),

		refusedLog: LogThrottle{interval: logInterval},
		acceptLog:  LogThrottle{interval: logInterval},
	}, nil
}

// Listen binds Config.ListenAddr and serves it in the background.
func (s *Server) Listen() error {
	ln, err := net.Listen("tcp", s.cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("wire: listen on %s: %w", s.cfg.ListenAddr, err)
	}
	if err := s.Serve(ln); err != nil {
		ln.Close()
		return err
	}
	return nil
}

// Serve accepts connections from ln in the background and owns ln from
// then on (Close closes it). A server serves one listener.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return ErrServerClosed
	case s.ln != nil:
		return fmt.Errorf("wire: serve %s: already serving %s", ln.Addr(), s.ln.Addr())
	}
	s.ln = ln
	s.wg.Go(func() { s.acceptLoop(ln) })
	return nil
}

// Addr returns the listener's address, or nil before Listen or Serve.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	st := s.stats.snapshot()
	st.RequestBytesInUse, st.RequestMemoryWaits = s.pool.inUse()
	return st
}

// Close stops accepting, closes every connection (unwritten responses are
// dropped), cancels the contexts given to the Handler and waits until every
// goroutine of the server, deferred responses included, has returned. It is
// safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closed = true
	ln := s.ln
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()

	s.cancel()
	var err error
	if ln != nil {
		if cerr := ln.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) {
			err = fmt.Errorf("wire: close listener %s: %w", ln.Addr(), cerr)
		}
	}
	for _, c := range conns {
		c.shutdown()
	}
	s.wg.Wait()
	return err
}

// logInterval is the least time between two log lines of one kind of
// repeated event (refused connections, failed accepts); the line says how
// many were not logged.
const logInterval = 10 * time.Second

// acceptLoop accepts connections until the listener closes. Accept errors
// (such as running out of file descriptors: EMFILE, ENFILE) are retried
// with a backoff from 5 ms to 1 s, never spinning and never giving up; the
// connections meanwhile wait in the listen backlog.
func (s *Server) acceptLoop(ln net.Listener) {
	const maxBackoff = time.Second
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err == nil {
			backoff = 0
			s.startConn(nc)
			continue
		}
		if s.ctx.Err() != nil {
			return
		}
		if errors.Is(err, net.ErrClosed) {
			s.log.Warn("wire: listener closed; no longer accepting", slog.String("addr", ln.Addr().String()))
			return
		}
		backoff = min(max(2*backoff, 5*time.Millisecond), maxBackoff)
		s.stats.acceptErrors.Add(1)
		if ok, skipped := s.acceptLog.Note(time.Now()); ok {
			s.log.Warn("wire: accept failed; retrying", slog.Any("err", err), slog.Duration("backoff", backoff),
				slog.Int64("suppressed_since_last", skipped))
		}
		select {
		case <-time.After(backoff):
		case <-s.ctx.Done():
			return
		}
	}
}

// startConn registers an accepted connection and starts its goroutines,
// or closes it at once when max.connections or max.connections.per.ip is
// reached.
func (s *Server) startConn(nc net.Conn) {
	c := newConn(s, nc, s.connID.Add(1))
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		nc.Close()
		return
	}
	if err := s.limits.admit(c.ip); err != nil {
		s.mu.Unlock()
		// Counted before the close, so a client that sees its connection
		// closed also sees it in Stats.
		s.stats.refused.Add(1)
		nc.Close()
		if ok, skipped := s.refusedLog.Note(time.Now()); ok {
			s.log.Warn("wire: refusing connection", slog.String("remote", nc.RemoteAddr().String()), slog.Any("err", err),
				slog.Int64("suppressed_since_last", skipped))
		}
		return
	}
	s.stats.accepted.Add(1)
	s.conns[c] = struct{}{}
	s.stats.open.Add(1)
	s.mu.Unlock()
	c.setSocketBuffers()
	s.wg.Go(c.readLoop)
	s.wg.Go(c.writeLoop)
}

// forget unregisters a closed connection.
func (s *Server) forget(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.conns[c]; ok {
		delete(s.conns, c)
		s.limits.release(c.ip)
		s.stats.open.Add(-1)
	}
}
