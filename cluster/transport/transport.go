package transport

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// ErrDown is returned by Send for a PID on a node marked down with SetDown,
// and for every remote PID once the Transport is stopped.
var ErrDown = errors.New("node is down")

// ErrUnknownType is returned for a message whose type is not registered (a
// Go type to send, or an envelope's type name to decode).
var ErrUnknownType = errors.New("message type not registered")

// localAddress is the address protoactor gives an actor system before a
// remote starts on it.
const localAddress = "nonhost"

// Endpoint sizing for a remote this package starts. protoactor's default
// writer queue preallocates a million slots (16 MiB) per peer; the queue
// grows when needed, and control traffic is small. One connect attempt per
// endpoint: a failed attempt still sleeps 2 s in the writer, then the
// endpoint is dropped and the next Send dials afresh, while the default
// (5 attempts) would hold messages for about 10 s. weir's protocols retry,
// and membership says when a node is back.
const (
	writerQueueSize = 1024
	connectAttempts = 1
)

// Config configures Start.
type Config struct {
	// ListenAddr is host:port for the remote's gRPC server ("127.0.0.1:0"
	// picks a port).
	ListenAddr string
	// AdvertisedAddr, if set, is the address other nodes dial (else the
	// bound address).
	AdvertisedAddr string
	// Types are the message types that may cross nodes.
	Types []Type
	// Logger receives the package's own log lines; nil: slog.Default().
	Logger *slog.Logger
}

// Transport sends weir's messages to actors on other nodes and decodes the
// ones that arrive. It is safe for concurrent use.
type Transport struct {
	system *actor.ActorSystem
	remote *remote.Remote
	owned  bool // Start started remote; Stop shuts it down
	addr   string
	codec  *codec
	log    *slog.Logger
	logged sync.Map // log keys already logged once

	mu      sync.RWMutex
	down    map[string]bool
	stopped bool

	// lifecycle keeps SetDown's endpoint event and Stop's shutdown apart:
	// protoactor's endpoint manager clears its connection map on shutdown
	// and would dereference it in an event handler still running.
	lifecycle sync.Mutex
}

// Start makes system reachable from other nodes. If the embedding program
// already started protoactor remote on system (system.ProcessRegistry.Address
// is no longer the local placeholder), Start uses that remote and does not
// start a second one (ListenAddr is then ignored); otherwise it starts one
// and Stop shuts it down.
func Start(system *actor.ActorSystem, cfg Config) (*Transport, error) {
	t, err := newTransport(system, cfg)
	if err != nil {
		return nil, err
	}
	if system.Address() != localAddress {
		r, ok := system.Extensions.Get((*remote.Remote)(nil).ExtensionID()).(*remote.Remote)
		if !ok || r == nil {
			return nil, fmt.Errorf("transport: actor system has address %q but no protoactor remote", system.Address())
		}
		t.remote, t.addr = r, system.Address()
		return t, nil
	}
	if t.remote, err = startRemote(system, cfg); err != nil {
		return nil, err
	}
	t.owned, t.addr = true, system.Address()
	return t, nil
}

// newTransport returns a Transport for system's current address, with no
// remote attached yet.
func newTransport(system *actor.ActorSystem, cfg Config) (*Transport, error) {
	c, err := newCodec(cfg.Types)
	if err != nil {
		return nil, err
	}
	t := &Transport{system: system, addr: system.Address(), codec: c, log: cfg.Logger, down: make(map[string]bool)}
	if t.log == nil {
		t.log = slog.Default()
	}
	return t, nil
}

// startRemote starts a protoactor remote on system, turning its panic on a
// listen failure into an error.
func startRemote(system *actor.ActorSystem, cfg Config) (r *remote.Remote, err error) {
	host, portText, err := net.SplitHostPort(cfg.ListenAddr)
	if err != nil {
		return nil, fmt.Errorf("transport: listen address %q: %w", cfg.ListenAddr, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("transport: listen address %q: bad port", cfg.ListenAddr)
	}
	opts := []remote.ConfigOption{remote.WithEndpointWriterQueueSize(writerQueueSize)}
	if cfg.AdvertisedAddr != "" {
		opts = append(opts, remote.WithAdvertisedHost(cfg.AdvertisedAddr))
	}
	rc := remote.Configure(host, port, opts...)
	rc.MaxRetryCount = connectAttempts
	r = remote.NewRemote(system, rc)
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("transport: start remote on %s: %v", cfg.ListenAddr, p)
		}
	}()
	r.Start()
	return r, nil
}

// Address returns this node's remote address, the one other nodes dial.
func (t *Transport) Address() string { return t.addr }

// PID returns the PID of the actor named name on the node at addr.
func (t *Transport) PID(addr, name string) *actor.PID { return actor.NewPID(addr, name) }

// Send sends msg (a pointer of a registered Type, or any proto.Message, or
// a message for a local PID) to `to`. A PID on this node gets msg
// unchanged, without encoding. A PID on another node gets it in the
// envelope. sender may be nil; when set it is the protoactor sender, so a
// message to a gone remote actor gets back an *actor.DeadLetterResponse.
// An unregistered type or an encode error is returned, never panics. A PID
// whose address is marked down (SetDown) is dropped at once and returns
// ErrDown. Delivery to another node is best effort and never blocks.
func (t *Transport) Send(to *actor.PID, msg any, sender *actor.PID) error {
	if to == nil {
		return fmt.Errorf("transport: send %T to a nil PID", msg)
	}
	if to.Address != t.addr && to.Address != localAddress {
		wire, err := t.wire(msg)
		if err != nil {
			return err
		}
		if t.isDown(to.Address) {
			return fmt.Errorf("transport: send %T to %s: %w", msg, to.Address, ErrDown)
		}
		msg = wire
	}
	if sender == nil {
		t.system.Root.Send(to, msg)
	} else {
		t.system.Root.RequestWithCustomSender(to, msg, sender)
	}
	return nil
}

// wire returns what crosses nodes for msg: its envelope if its type is
// registered, msg itself if it is another protobuf message.
func (t *Transport) wire(msg any) (any, error) {
	a, err := t.codec.encode(msg)
	if err == nil {
		return a, nil
	}
	if p, ok := msg.(proto.Message); ok && errors.Is(err, ErrUnknownType) {
		return p, nil
	}
	return nil, err
}

// Encode wraps msg, a pointer of a registered Type, in the envelope that
// crosses nodes.
func (t *Transport) Encode(msg any) (*anypb.Any, error) { return t.codec.encode(msg) }

// Decode unwraps an envelope into a new value of its registered Type (a
// pointer to struct). It returns an error, never panics, on any input.
func (t *Transport) Decode(a *anypb.Any) (any, error) { return t.codec.decode(a) }

// isDown reports whether messages to addr are to be dropped.
func (t *Transport) isDown(addr string) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.stopped || t.down[addr]
}

// SetDown marks a node address down (membership declared it dead: stop
// sending to it and close its endpoint, so no writer mailbox keeps
// retrying with 2 s sleeps) or up again; up again, the next Send opens a
// fresh endpoint. Only Send checks the mark: anything else that reaches the
// address through protoactor (a remote Watch, a Respond) reopens an
// endpoint, whose writer makes one connect attempt.
func (t *Transport) SetDown(addr string, down bool) {
	t.mu.Lock()
	changed := t.down[addr] != down
	if down {
		t.down[addr] = true
	} else {
		delete(t.down, addr)
	}
	t.mu.Unlock()
	if !down || !changed {
		return
	}
	t.lifecycle.Lock()
	defer t.lifecycle.Unlock()
	if t.isStopped() {
		return
	}
	// protoactor's endpoint manager answers this event, which its own
	// writer publishes when a connection fails, by removing the endpoint
	// for the address and stopping its writer (closing the gRPC
	// connection) and its watcher.
	t.system.EventStream.Publish(&remote.EndpointTerminatedEvent{Address: addr})
	t.log.Info("transport: node marked down, endpoint closed", slog.String("address", addr))
}

// isStopped reports whether Stop was called.
func (t *Transport) isStopped() bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.stopped
}

// Stop shuts the remote down if Start started it, and makes Send to any
// other node return ErrDown. Safe to call twice.
func (t *Transport) Stop() {
	t.mu.Lock()
	stopped := t.stopped
	t.stopped = true
	t.mu.Unlock()
	if stopped || !t.owned {
		return
	}
	t.lifecycle.Lock()
	defer t.lifecycle.Unlock()
	t.shutdown()
}

// shutdown shuts the remote down gracefully (peers are told to disconnect).
// The pinned protoactor panics there when an inbound connection closes at
// the same moment (endpointManager.stop sends on the connection's closed
// disconnect channel); the panic is in this goroutine, so it is recovered
// and the gRPC server stopped at once instead.
func (t *Transport) shutdown() {
	defer func() {
		if p := recover(); p != nil {
			t.log.Warn("transport: graceful remote shutdown failed, stopping the server", slog.Any("panic", p))
			t.remote.Shutdown(false)
		}
	}()
	t.remote.Shutdown(true)
}
