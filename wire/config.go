package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"time"
)

// ErrInvalidConfig is a Config field out of its range; Validate wraps it
// with the field's Kafka name and value.
var ErrInvalidConfig = errors.New("wire: invalid config")

// Config holds one Server's settings. Fields named after a Kafka broker
// config carry that config's name, unit and default (DefaultConfig).
type Config struct {
	// ListenAddr is the TCP address ("host:port") that Server.Listen binds:
	// the host and port of Kafka's listeners. Default "127.0.0.1:9092".
	// Unused when the caller hands Server.Serve its own listener.
	ListenAddr string

	// SocketRequestMaxBytes is socket.request.max.bytes: the largest request
	// frame (the 4-byte size prefix excluded) the server reads. A frame
	// whose size is negative or larger closes its connection, as Kafka does.
	// Default 104857600 (100 MiB); at least 1.
	SocketRequestMaxBytes int32

	// SocketReceiveBufferBytes is socket.receive.buffer.bytes: the SO_RCVBUF
	// of each accepted connection, in bytes. -1 keeps the OS default.
	// Default 102400.
	SocketReceiveBufferBytes int

	// SocketSendBufferBytes is socket.send.buffer.bytes: the SO_SNDBUF of each
	// accepted connection, in bytes. -1 keeps the OS default. Default 102400.
	SocketSendBufferBytes int

	// ConnectionsMaxIdleMs is connections.max.idle.ms: a connection with no
	// request arriving and none in flight for this long is closed
	// (milliseconds). It also bounds how long one frame may take to arrive
	// and one response to be written. -1 never closes idle connections.
	// Default 600000 (10 minutes).
	ConnectionsMaxIdleMs int64

	// MaxInFlightRequestsPerConnection bounds the requests of one connection
	// that have been read but whose responses are not yet written. At the
	// bound the server stops reading that connection (TCP pushes back on the
	// client) until the oldest response is written. Kafka itself reads one
	// request at a time per connection; clients pipeline up to 5 (Java, kgo)
	// or more (librdkafka). Default 16; at least 1.
	MaxInFlightRequestsPerConnection int

	// MaxConnections is max.connections: the most client connections open
	// at once. One more is closed at once and counted
	// (Stats.ConnectionsRefused); Kafka instead stops accepting until one
	// closes. Kafka's default is 2147483647; the node derives weir's from
	// the process's file limit. At least 0.
	MaxConnections int

	// MaxConnectionsPerIP is max.connections.per.ip: the most connections
	// open at once from one client address; one more is closed at once.
	// 0 is allowed only with overrides. Default 2147483647.
	MaxConnectionsPerIP int

	// MaxConnectionsPerIPOverrides is max.connections.per.ip.overrides,
	// resolved: a limit per client address replacing MaxConnectionsPerIP.
	MaxConnectionsPerIPOverrides map[netip.Addr]int

	// QueuedMaxRequestBytes is queued.max.request.bytes: the most bytes of
	// request frames held at once, from a frame's size prefix until its
	// request is done. A connection whose next frame does not fit stops
	// reading until it does (see mempool.go); 0 or -1 is unbounded (Kafka's
	// default, -1). When positive it must be at least
	// SocketRequestMaxBytes, as Kafka requires. Default 268435456 (256 MiB).
	QueuedMaxRequestBytes int64

	// Logger receives the server's log lines: one line per connection closed
	// for bad input, at Warn; handler contract violations at Error; routine
	// events (idle closes, clients hanging up) at Debug. Nil uses
	// slog.Default().
	Logger *slog.Logger

	// Intercept, when set, sees every decoded request before the server's
	// own ApiVersions code and before the Handler (an ApiVersions request
	// of an unserved version is never decoded, so it is not seen). Returning true replaces
	// the request's answer with the returned Response (fail it, close the
	// connection, delay it with Defer); returning false lets the request go
	// on. It runs in request order on the connection's reading goroutine,
	// so blocking in it holds that connection (and only that one). It is a
	// test seam: production code leaves it nil.
	Intercept func(ctx context.Context, req *Request) (Response, bool)
}

// DefaultConfig returns Kafka's defaults for the socket server.
func DefaultConfig() Config {
	return Config{
		ListenAddr:                       "127.0.0.1:9092",
		SocketRequestMaxBytes:            104857600,
		SocketReceiveBufferBytes:         102400,
		SocketSendBufferBytes:            102400,
		ConnectionsMaxIdleMs:             600000,
		MaxInFlightRequestsPerConnection: 16,
		MaxConnections:                   math.MaxInt32,
		MaxConnectionsPerIP:              math.MaxInt32,
		QueuedMaxRequestBytes:            DefaultQueuedMaxRequestBytes,
	}
}

// DefaultQueuedMaxRequestBytes is weir's default queued.max.request.bytes
// (256 MiB; Kafka's is -1, unbounded): room for a few maximal 100 MiB
// frames, far more than the bandwidth-delay product of any one node's
// producers, and a bound that fits a small machine.
const DefaultQueuedMaxRequestBytes = 256 << 20

// TestConfig returns DefaultConfig listening on a free loopback port, for
// tests that call Server.Listen.
func TestConfig() Config {
	c := DefaultConfig()
	c.ListenAddr = "127.0.0.1:0"
	return c
}

// Validate checks every field against its bounds.
func (c Config) Validate() error {
	switch {
	case c.SocketRequestMaxBytes < 1:
		return fmt.Errorf("%w: socket.request.max.bytes %d below 1", ErrInvalidConfig, c.SocketRequestMaxBytes)
	case c.SocketReceiveBufferBytes < 1 && c.SocketReceiveBufferBytes != -1:
		return fmt.Errorf("%w: socket.receive.buffer.bytes %d is neither -1 nor positive", ErrInvalidConfig, c.SocketReceiveBufferBytes)
	case c.SocketSendBufferBytes < 1 && c.SocketSendBufferBytes != -1:
		return fmt.Errorf("%w: socket.send.buffer.bytes %d is neither -1 nor positive", ErrInvalidConfig, c.SocketSendBufferBytes)
	case c.ConnectionsMaxIdleMs < 1 && c.ConnectionsMaxIdleMs != -1:
		return fmt.Errorf("%w: connections.max.idle.ms %d is neither -1 nor positive", ErrInvalidConfig, c.ConnectionsMaxIdleMs)
	case c.ConnectionsMaxIdleMs > math.MaxInt64/int64(time.Millisecond):
		return fmt.Errorf("%w: connections.max.idle.ms %d overflows a duration", ErrInvalidConfig, c.ConnectionsMaxIdleMs)
	case c.MaxInFlightRequestsPerConnection < 1:
		return fmt.Errorf("%w: max in-flight requests per connection %d below 1", ErrInvalidConfig, c.MaxInFlightRequestsPerConnection)
	case c.MaxConnections < 0:
		return fmt.Errorf("%w: max.connections %d below 0", ErrInvalidConfig, c.MaxConnections)
	case c.MaxConnectionsPerIP < 0:
		return fmt.Errorf("%w: max.connections.per.ip %d below 0", ErrInvalidConfig, c.MaxConnectionsPerIP)
	case c.MaxConnectionsPerIP == 0 && len(c.MaxConnectionsPerIPOverrides) == 0:
		return fmt.Errorf("%w: max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set", ErrInvalidConfig)
	case c.QueuedMaxRequestBytes > 0 && c.QueuedMaxRequestBytes < int64(c.SocketRequestMaxBytes):
		return fmt.Errorf("%w: queued.max.request.bytes %d must be larger or equal to socket.request.max.bytes %d",
			ErrInvalidConfig, c.QueuedMaxRequestBytes, c.SocketRequestMaxBytes)
	}
	for ip, n := range c.MaxConnectionsPerIPOverrides {
		if n < 0 {
			return fmt.Errorf("%w: max.connections.per.ip.overrides: %d for %s below 0", ErrInvalidConfig, n, ip)
		}
	}
	if c.ListenAddr != "" {
		if _, _, err := net.SplitHostPort(c.ListenAddr); err != nil {
			return fmt.Errorf("%w: listen address %q: %w", ErrInvalidConfig, c.ListenAddr, err)
		}
	}
	return nil
}

// idleTimeout is connections.max.idle.ms as a duration; zero means never.
func (c Config) idleTimeout() time.Duration {
	if c.ConnectionsMaxIdleMs < 0 {
		return 0
	}
	return time.Duration(c.ConnectionsMaxIdleMs) * time.Millisecond
}
