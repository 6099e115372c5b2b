package transport

import (
	"errors"
	"log/slog"
	"net"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/protobuf/types/known/anypb"
)

func TestRoundTripBetweenSystems(t *testing.T) {
	a := startNode(t, "127.0.0.1:0", nil)
	b := startNode(t, "127.0.0.1:0", nil)
	if a.tr.Address() == b.tr.Address() || a.sink.Address != a.tr.Address() {
		t.Fatalf("addresses: a %s (sink %s), b %s", a.tr.Address(), a.sink.Address, b.tr.Address())
	}
	bSink := a.tr.PID(b.tr.Address(), "sink")

	// A request with a sender: b's sink sees a typed *ping from a's sink
	// and answers with Send to that sender.
	if err := a.tr.Send(bSink, &ping{Seq: 7, From: "a"}, a.sink); err != nil {
		t.Fatal(err)
	}
	req := b.next(t, is[*ping])
	if p := req.msg.(*ping); p.Seq != 7 || p.From != "a" {
		t.Fatalf("request %+v", p)
	}
	if req.sender == nil || req.sender.Address != a.sink.Address || req.sender.Id != a.sink.Id {
		t.Fatalf("request sender %v, want %v", req.sender, a.sink)
	}
	reply := a.next(t, is[*pong])
	if reply.msg.(*pong).Seq != 7 || reply.sender == nil || reply.sender.Address != b.tr.Address() || reply.sender.Id != "sink" {
		t.Fatalf("reply %+v from %v", reply.msg, reply.sender)
	}

	// Nested slices, maps, bytes and sized integers survive msgpack.
	want := &rich{
		I32: -1 << 31, I64: -1 << 62, U64: 1<<64 - 1, S: "héllo",
		B: []byte{0, 1, 255}, Ints: []int64{1, -2, 3 << 40}, Names: []string{"x", ""},
		M:      map[string]int32{"a": 1, "b": -2},
		ByKey:  map[string][]byte{"k": {9, 8}},
		Nested: []inner{{ID: 1, Tags: []string{"t"}, Blob: []byte("blob")}, {ID: 2, Tags: []string{"u", "v"}, Blob: []byte{0}}},
		Ptr:    &inner{ID: 3, Tags: []string{"p"}, Blob: []byte{7}},
	}
	if err := a.tr.Send(bSink, want, nil); err != nil {
		t.Fatal(err)
	}
	g := b.next(t, is[*rich])
	if !reflect.DeepEqual(g.msg, want) || g.sender != nil {
		t.Fatalf("got %+v from %v, want %+v", g.msg, g.sender, want)
	}

	// A protobuf message that is not a registered Type crosses as is.
	if err := a.tr.Send(bSink, &actor.PID{Address: "x", Id: "y"}, nil); err != nil {
		t.Fatal(err)
	}
	if p := b.next(t, is[*actor.PID]).msg.(*actor.PID); p.Address != "x" || p.Id != "y" {
		t.Fatalf("proto message %v", p)
	}
}

func TestLocalPIDGetsMessageUnchanged(t *testing.T) {
	nodes := []*node{localNode(t, discard())}
	if !raceEnabled {
		nodes = append(nodes, startNode(t, "127.0.0.1:0", nil))
	}
	for _, n := range nodes {
		for _, msg := range []any{&ping{Seq: 1}, &unregistered{N: 2}, &unencodable{}} {
			for _, to := range []*actor.PID{n.sink, actor.NewPID("nonhost", "sink")} {
				if err := n.tr.Send(to, msg, nil); err != nil {
					t.Fatalf("send %T to %v: %v", msg, to, err)
				}
				if g := n.next(t, func(got) bool { return true }); g.msg != msg {
					t.Fatalf("got %T %p, want the same pointer %p", g.msg, g.msg, msg)
				}
			}
		}
	}
}

func TestSendErrors(t *testing.T) {
	a := localNode(t, discard())
	far := a.tr.PID("127.0.0.1:1", "x")
	if err := a.tr.Send(far, &unregistered{}, nil); !errors.Is(err, ErrUnknownType) {
		t.Fatalf("unregistered type: %v", err)
	}
	if err := a.tr.Send(far, &unencodable{C: make(chan int)}, nil); err == nil || errors.Is(err, ErrUnknownType) {
		t.Fatalf("unencodable: %v", err)
	}
	if err := a.tr.Send(nil, &ping{}, nil); err == nil {
		t.Fatal("nil PID: no error")
	}
	a.tr.SetDown(far.Address, true)
	if err := a.tr.Send(far, &ping{}, nil); !errors.Is(err, ErrDown) {
		t.Fatalf("down: %v", err)
	}
	a.tr.SetDown(far.Address, false)
	if err := a.tr.Send(far, &ping{}, nil); err != nil {
		t.Fatalf("up again: %v", err)
	}
	a.tr.Stop()
	if err := a.tr.Send(far, &ping{}, nil); !errors.Is(err, ErrDown) {
		t.Fatalf("after Stop: %v", err)
	}
	if err := a.tr.Send(a.sink, &ping{}, nil); err != nil {
		t.Fatalf("local after Stop: %v", err)
	}
}

// TestConcurrentSendAndSetDown is for the race detector: senders, local
// and remote, race with SetDown and Stop.
func TestConcurrentSendAndSetDown(t *testing.T) {
	a := localNode(t, discard())
	far := a.tr.PID("127.0.0.1:1", "x")
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				to := far
				if j%2 == 0 {
					to = a.sink
				}
				if err := a.tr.Send(to, &ping{Seq: int64(i*1000 + j)}, nil); err != nil && !errors.Is(err, ErrDown) {
					t.Errorf("send: %v", err)
					return
				}
			}
		}()
	}
	for j := range 100 {
		a.tr.SetDown(far.Address, j%2 == 0)
	}
	a.tr.Stop()
	wg.Wait()
}

func TestStartErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	newT := func() any { return new(ping) }
	cases := map[string]Config{
		"no name":         {ListenAddr: "127.0.0.1:0", Types: []Type{{New: newT}}},
		"no New":          {ListenAddr: "127.0.0.1:0", Types: []Type{{Name: "x"}}},
		"not a pointer":   {ListenAddr: "127.0.0.1:0", Types: []Type{{Name: "x", New: func() any { return ping{} }}}},
		"nil pointer":     {ListenAddr: "127.0.0.1:0", Types: []Type{{Name: "x", New: func() any { return (*ping)(nil) }}}},
		"duplicate name":  {ListenAddr: "127.0.0.1:0", Types: []Type{{Name: "x", New: newT}, {Name: "x", New: func() any { return new(pong) }}}},
		"duplicate type":  {ListenAddr: "127.0.0.1:0", Types: []Type{{Name: "x", New: newT}, {Name: "y", New: newT}}},
		"bad address":     {ListenAddr: "nowhere"},
		"bad port":        {ListenAddr: "127.0.0.1:port"},
		"empty addresses": {},
	}
	if !raceEnabled { // this one gets as far as Remote.Start: see needRemote
		cases["address in use"] = Config{ListenAddr: busy.Addr().String()}
	}
	for name, cfg := range cases {
		if tr, err := Start(newSystem(nil), cfg); err == nil {
			tr.Stop()
			t.Errorf("%s: no error", name)
		}
	}
}

func TestMissingActorGetsDeadLetterResponse(t *testing.T) {
	a := startNode(t, "127.0.0.1:0", nil)
	b := startNode(t, "127.0.0.1:0", nil)
	if err := a.tr.Send(a.tr.PID(b.tr.Address(), "nosuch"), &ping{Seq: 1}, a.sink); err != nil {
		t.Fatal(err)
	}
	a.next(t, is[*actor.DeadLetterResponse])
}

func TestReusesEmbeddersRemote(t *testing.T) {
	a := startNode(t, "127.0.0.1:0", nil)

	sys := newSystem(nil)
	r := remote.NewRemote(sys, remote.Configure("127.0.0.1", 0))
	r.Start()
	t.Cleanup(func() { r.Shutdown(true) })
	tr, err := Start(sys, Config{ListenAddr: "ignored", Types: testTypes, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Address() != sys.Address() || tr.remote != r || tr.owned {
		t.Fatalf("address %s (system %s), reused %v", tr.Address(), sys.Address(), tr.remote == r)
	}
	c := spawnSink(t, sys, tr)

	to := a.tr.PID(tr.Address(), "sink")
	if err := a.tr.Send(to, &ping{Seq: 1}, a.sink); err != nil {
		t.Fatal(err)
	}
	if a.next(t, is[*pong]).msg.(*pong).Seq != 1 {
		t.Fatal("wrong reply")
	}

	// Stop leaves the embedder's remote running.
	tr.Stop()
	tr.Stop()
	if err := a.tr.Send(to, &ping{Seq: 2}, nil); err != nil {
		t.Fatal(err)
	}
	c.next(t, func(g got) bool { p, ok := g.msg.(*ping); return ok && p.Seq == 2 })
}

func TestSetDownClosesEndpointAndUpReconnects(t *testing.T) {
	b := startNode(t, "127.0.0.1:0", nil)
	// a's actor system logs the endpoint writer closing its connection to b.
	closed := newLogWatch("EndpointWriter closing client connection", b.tr.Address())
	a := startNode(t, "127.0.0.1:0", closed)
	bSink := a.tr.PID(b.tr.Address(), "sink")

	if err := a.tr.Send(bSink, &ping{Seq: 1}, a.sink); err != nil {
		t.Fatal(err)
	}
	a.next(t, is[*pong])

	a.tr.SetDown(b.tr.Address(), true)
	select {
	case <-closed.seen:
	case <-time.After(waitFor):
		t.Fatal("the endpoint writer to the down node did not close its connection")
	}
	if err := a.tr.Send(bSink, &ping{Seq: 2}, a.sink); !errors.Is(err, ErrDown) {
		t.Fatalf("send to a down node: %v", err)
	}

	// b's process goes away and comes back on the same address.
	addr := b.tr.Address()
	b.tr.Stop()
	b2 := startNode(t, addr, nil)
	a.tr.SetDown(addr, false)

	// Delivery is at most once: resend until a reply comes back.
	resend := time.NewTicker(100 * time.Millisecond)
	defer resend.Stop()
	deadline := time.After(waitFor)
	for seq := int64(3); ; seq++ {
		if err := a.tr.Send(bSink, &ping{Seq: seq}, a.sink); err != nil {
			t.Fatal(err)
		}
		select {
		case g := <-a.inbox:
			if _, ok := g.msg.(*pong); ok {
				b2.next(t, is[*ping])
				return
			}
		case <-resend.C:
		case <-deadline:
			t.Fatal("no reply from the node after it came back")
		}
	}
}

func TestSendToGonePeerDoesNotBlock(t *testing.T) {
	a := startNode(t, "127.0.0.1:0", nil)
	b := startNode(t, "127.0.0.1:0", nil)
	bSink := a.tr.PID(b.tr.Address(), "sink")
	if err := a.tr.Send(bSink, &ping{Seq: 1}, a.sink); err != nil {
		t.Fatal(err)
	}
	a.next(t, is[*pong])
	b.tr.Stop()

	start := time.Now()
	for i := range 100 {
		if err := a.tr.Send(bSink, &ping{Seq: int64(i)}, a.sink); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("100 sends to a gone node took %v", d)
	}
	// The failed connect comes back to the sender as dead letters.
	a.next(t, is[*actor.DeadLetterResponse])
}

func TestMiddleware(t *testing.T) {
	warn := newLogWatch("transport: dropped an envelope that does not decode", "")
	n := localNode(t, slog.New(warn))
	tr := n.tr

	env, err := tr.Encode(&ping{Seq: 5, From: "x"})
	if err != nil {
		t.Fatal(err)
	}
	foreign := &anypb.Any{TypeUrl: "type.googleapis.com/other", Value: []byte{1}}
	for _, msg := range []any{
		&anypb.Any{TypeUrl: "weir/nosuch"}, &anypb.Any{TypeUrl: "weir/nosuch"},
		&anypb.Any{TypeUrl: "weir/test.ping", Value: []byte{0xc1}}, // never valid msgpack
		env, foreign,
	} {
		tr.Send(n.sink, msg, n.sink)
	}
	// Mailboxes are FIFO: the dropped ones never show up before these.
	g := n.next(t, func(got) bool { return true })
	if p, ok := g.msg.(*ping); !ok || p.Seq != 5 || g.sender == nil || g.sender.Id != "sink" {
		t.Fatalf("first delivered %T %+v from %v, want the decoded ping", g.msg, g.msg, g.sender)
	}
	if g := n.next(t, func(got) bool { return true }); g.msg != foreign {
		t.Fatalf("foreign Any: got %T %+v", g.msg, g.msg)
	}
	// n's sink answered the ping to itself.
	n.next(t, is[*pong])
	if len(warn.seen) != 2 {
		t.Fatalf("%d warnings, want one per type (2)", len(warn.seen))
	}
}
