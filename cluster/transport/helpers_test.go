package transport

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// Test message types.
type ping struct {
	Seq  int64
	From string
}

type pong struct{ Seq int64 }

type inner struct {
	ID   int32
	Tags []string
	Blob []byte
}

type rich struct {
	I32    int32
	I64    int64
	U64    uint64
	S      string
	B      []byte
	Ints   []int64
	Names  []string
	M      map[string]int32
	ByKey  map[string][]byte
	Nested []inner
	Ptr    *inner
}

// unencodable is registered but msgpack cannot encode its channel.
type unencodable struct{ C chan int }

// unregistered is a plain struct no Transport knows.
type unregistered struct{ N int }

var testTypes = []Type{
	{Name: "test.ping", New: func() any { return new(ping) }},
	{Name: "test.pong", New: func() any { return new(pong) }},
	{Name: "test.rich", New: func() any { return new(rich) }},
	{Name: "test.unencodable", New: func() any { return new(unencodable) }},
}

// waitFor bounds every wait on a condition in these tests.
const waitFor = 15 * time.Second

// got is one message a sink actor received.
type got struct {
	msg    any
	sender *actor.PID
}

// node is one actor system with a Transport and a sink actor named "sink"
// that answers every *ping with a *pong and reports every message.
type node struct {
	sys   *actor.ActorSystem
	tr    *Transport
	sink  *actor.PID
	inbox chan got
}

// discard returns a logger that drops everything.
func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newSystem returns an actor system logging to h (nil: nowhere).
func newSystem(h slog.Handler) *actor.ActorSystem {
	if h == nil {
		h = slog.DiscardHandler
	}
	log := slog.New(h)
	return actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return log }))
}

// needRemote skips tb under the race detector. The pinned protoactor
// remote races with itself there: every Remote.Start sets gRPC's global
// logger (grpclog.SetLoggerV2) while the gRPC goroutines of remotes started
// before read it, and endpointManager.stop clears its connection map
// without synchronizing with endpoint events. The tests on a Transport
// without a remote (localNode) cover this package's own concurrency.
func needRemote(tb testing.TB) {
	tb.Helper()
	if raceEnabled {
		tb.Skip("protoactor remote races with itself under the race detector (grpclog.SetLoggerV2 in every Remote.Start)")
	}
}

// localNode is a node whose Transport has no remote: its messages stay on
// the actor system (a PID elsewhere goes to dead letters), so it runs
// under the race detector.
func localNode(tb testing.TB, log *slog.Logger) *node {
	tb.Helper()
	sys := newSystem(nil)
	tr, err := newTransport(sys, Config{Types: testTypes, Logger: log})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(tr.Stop)
	return spawnSink(tb, sys, tr)
}

// startNode starts a node listening on listen; its system logs to h.
func startNode(tb testing.TB, listen string, h slog.Handler) *node {
	tb.Helper()
	needRemote(tb)
	sys := newSystem(h)
	tr, err := Start(sys, Config{ListenAddr: listen, Types: testTypes, Logger: discard()})
	if err != nil {
		tb.Fatalf("start transport: %v", err)
	}
	tb.Cleanup(tr.Stop)
	return spawnSink(tb, sys, tr)
}

// spawnSink spawns the sink actor on sys with tr's props.
func spawnSink(tb testing.TB, sys *actor.ActorSystem, tr *Transport) *node {
	tb.Helper()
	n := &node{sys: sys, tr: tr, inbox: make(chan got, 1024)}
	pid, err := sys.Root.SpawnNamed(tr.Props(func() actor.Actor { return &sinkActor{n: n} }), "sink")
	if err != nil {
		tb.Fatalf("spawn sink: %v", err)
	}
	n.sink = pid
	return n
}

type sinkActor struct{ n *node }

func (s *sinkActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case actor.SystemMessage, actor.AutoReceiveMessage:
		return
	case *ping:
		if ctx.Sender() != nil {
			_ = s.n.tr.Send(ctx.Sender(), &pong{Seq: m.Seq}, ctx.Self())
		}
	}
	select {
	case s.n.inbox <- got{ctx.Message(), ctx.Sender()}:
	default: // never block the actor; tests read what they wait for
	}
}

// next returns the next message in n's inbox that keep accepts, failing
// the test after waitFor.
func (n *node) next(tb testing.TB, keep func(got) bool) got {
	tb.Helper()
	deadline := time.After(waitFor)
	for {
		select {
		case g := <-n.inbox:
			if keep(g) {
				return g
			}
		case <-deadline:
			tb.Fatalf("no expected message within %v", waitFor)
		}
	}
}

// is accepts messages of type T.
func is[T any](g got) bool { _, ok := g.msg.(T); return ok }

// logWatch is a slog.Handler that reports records with one message and
// one "address" attribute on a channel.
type logWatch struct {
	msg, address string
	seen         chan struct{}
}

func newLogWatch(msg, address string) *logWatch {
	return &logWatch{msg: msg, address: address, seen: make(chan struct{}, 16)}
}

func (w *logWatch) Enabled(context.Context, slog.Level) bool { return true }

func (w *logWatch) Handle(_ context.Context, r slog.Record) error {
	if r.Message != w.msg {
		return nil
	}
	match := w.address == ""
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "address" && a.Value.String() == w.address {
			match = true
		}
		return true
	})
	if match {
		select {
		case w.seen <- struct{}{}:
		default:
		}
	}
	return nil
}

func (w *logWatch) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *logWatch) WithGroup(string) slog.Handler      { return w }
