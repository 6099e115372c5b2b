package wire

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Frames pipelined in one write, and a frame dribbled a byte at a time,
// are read and answered in order.
func TestFraming(t *testing.T) {
	s, _ := startServer(t, DefaultConfig(), metadataHandler(), testTable())
	c := dial(t, s)

	var batch []byte
	for i := range 5 {
		batch = append(batch, requestFrame(metadataReq(int16(i)), int32(i))...)
	}
	c.write(batch)
	for i := range 5 {
		resp := kmsg.NewPtrMetadataResponse()
		resp.Version = int16(i)
		c.expectCorr(resp, int32(i))
	}

	frame := requestFrame(metadataReq(12), 42) // flexible: header v2, response header v1
	for _, b := range frame {
		c.write([]byte{b})
	}
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 12
	c.expectCorr(resp, 42)
}

// gatedHandler answers Metadata later, when the test opens the request's
// gate; it records when each Handle call happened.
type gatedHandler struct {
	mu     sync.Mutex
	gates  map[int32]chan struct{}
	called []int32
}

func newGatedHandler() *gatedHandler { return &gatedHandler{gates: map[int32]chan struct{}{}} }

func (g *gatedHandler) gate(corr int32) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gates[corr] == nil {
		g.gates[corr] = make(chan struct{})
	}
	return g.gates[corr]
}

func (g *gatedHandler) Handle(ctx context.Context, req *Request) Response {
	g.mu.Lock()
	g.called = append(g.called, req.CorrelationID)
	g.mu.Unlock()
	gate := g.gate(req.CorrelationID)
	return Defer(func(ctx context.Context) Response {
		select {
		case <-gate:
			return Reply(req.Body.ResponseKind())
		case <-ctx.Done():
			return CloseConnection(ctx.Err())
		}
	})
}

// Later requests that complete first still get their responses after the
// earlier ones; Handle is called in request order; other connections are
// not held up.
func TestResponsesInRequestOrderUnderConcurrency(t *testing.T) {
	const n = 8
	g := newGatedHandler()
	s, _ := startServer(t, DefaultConfig(), g, testTable())
	c := dial(t, s)
	for i := range n {
		c.send(metadataReq(9), int32(i))
	}
	// Complete them in reverse order, the first one last.
	for i := n - 1; i >= 1; i-- {
		close(g.gate(int32(i)))
	}
	c.expectSilence() // request 0 still holds the line

	// Another connection is served meanwhile.
	other := dial(t, s)
	close(g.gate(100))
	other.send(metadataReq(9), 100)
	other.expectCorr(func() kmsg.Response { r := kmsg.NewPtrMetadataResponse(); r.Version = 9; return r }(), 100)

	close(g.gate(0))
	for i := range n {
		resp := kmsg.NewPtrMetadataResponse()
		resp.Version = 9
		c.expectCorr(resp, int32(i))
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range n {
		if g.called[i] != int32(i) {
			t.Fatalf("Handle calls in order %v, want 0..%d", g.called[:n], n-1)
		}
	}
}

// At MaxInFlightRequestsPerConnection the server stops reading the
// connection until the oldest answer is written.
func TestInFlightBoundStopsReading(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxInFlightRequestsPerConnection = 2
	g := newGatedHandler()
	s, _ := startServer(t, cfg, g, testTable())
	c := dial(t, s)
	for i := range 3 {
		c.send(metadataReq(9), int32(i))
	}
	waitFor(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.called) == 2 })
	c.expectSilence()
	g.mu.Lock()
	if len(g.called) != 2 {
		t.Fatalf("%d requests dispatched with 2 in flight allowed", len(g.called))
	}
	g.mu.Unlock()
	close(g.gate(0))
	close(g.gate(1))
	close(g.gate(2))
	for i := range 3 {
		resp := kmsg.NewPtrMetadataResponse()
		resp.Version = 9
		c.expectCorr(resp, int32(i))
	}
}

// An acks=0 Produce takes its slot in the order but writes nothing, even
// when the handler replies.
func TestAcksZeroProduceWritesNothing(t *testing.T) {
	replyAnyway := HandlerFunc(func(ctx context.Context, req *Request) Response {
		return Reply(req.Body.ResponseKind())
	})
	for name, h := range map[string]Handler{"NoResponse": metadataHandler(), "Reply": replyAnyway} {
		t.Run(name, func(t *testing.T) {
			s, _ := startServer(t, DefaultConfig(), h, testTable())
			c := dial(t, s)
			c.send(metadataReq(1), 1)
			c.send(produceReq(7, 0), 2)
			c.send(produceReq(9, 0), 3) // flexible
			c.send(metadataReq(1), 4)
			for _, corr := range []int32{1, 4} {
				resp := kmsg.NewPtrMetadataResponse()
				resp.Version = 1
				c.expectCorr(resp, corr)
			}
			// The counters move just after the write the client saw.
			waitFor(t, func() bool { st := s.Stats(); return st.NoResponses == 2 && st.Responses == 2 })
			// acks=1 does get its response.
			c.send(produceReq(7, 1), 5)
			resp := kmsg.NewPtrProduceResponse()
			resp.Version = 7
			c.expectCorr(resp, 5)
		})
	}
}

// CloseConnection (an acks=0 Produce that failed) closes the connection
// after the earlier responses, with one Info line; other connections carry
// on.
func TestCloseConnectionReply(t *testing.T) {
	failed := errors.New("not the leader")
	h := HandlerFunc(func(ctx context.Context, req *Request) Response {
		if _, ok := req.Body.(*kmsg.ProduceRequest); ok {
			return CloseConnection(failed)
		}
		return Reply(req.Body.ResponseKind())
	})
	s, logs := startServer(t, DefaultConfig(), h, testTable())
	c, other := dial(t, s), dial(t, s)
	c.send(metadataReq(1), 1)
	c.send(produceReq(8, 0), 2)
	c.send(metadataReq(1), 3)
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 1
	c.expectCorr(resp, 1)
	c.expectClosed()
	logs.waitLines(t, 1, "INFO", "closing connection as the handler asked", "not the leader")
	if got := other.apiVersions(3, 9); got.ErrorCode != 0 {
		t.Fatalf("other connection: error %d", got.ErrorCode)
	}
	if st := s.Stats(); st.HandlerCloses != 1 {
		t.Fatalf("Stats.HandlerCloses %d, want 1", st.HandlerCloses)
	}
}

// A Handler that breaks its contract closes its connection with one Error
// line; the server and other connections carry on.
func TestHandlerContractViolations(t *testing.T) {
	cases := map[string]func(ctx context.Context, req *Request) Response{
		"zero Response":    func(context.Context, *Request) Response { return Response{} },
		"nil body":         func(context.Context, *Request) Response { return Reply(nil) },
		"wrong key":        func(context.Context, *Request) Response { return Reply(kmsg.NewPtrFetchResponse()) },
		"missing response": func(context.Context, *Request) Response { return NoResponse() },
		"panic":            func(context.Context, *Request) Response { panic("boom") },
		"panic in Defer": func(context.Context, *Request) Response {
			return Defer(func(context.Context) Response { panic("boom") })
		},
		"Defer in Defer": func(context.Context, *Request) Response {
			return Defer(func(context.Context) Response { return Defer(nil) })
		},
		"zero in Defer": func(context.Context, *Request) Response {
			return Defer(func(context.Context) Response { return Response{} })
		},
		"wrong key (Defer)": func(context.Context, *Request) Response {
			return Defer(func(context.Context) Response { return Reply(kmsg.NewPtrFetchResponse()) })
		},
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			s, logs := startServer(t, DefaultConfig(), HandlerFunc(h), testTable())
			c, other := dial(t, s), dial(t, s)
			c.send(metadataReq(1), 1)
			c.expectClosed()
			logs.waitLines(t, 1, "ERROR", "closing connection on handler error")
			if got := other.apiVersions(0, 2); got.ErrorCode != 0 {
				t.Fatalf("other connection: error %d", got.ErrorCode)
			}
			if st := s.Stats(); st.HandlerErrors != 1 {
				t.Fatalf("Stats.HandlerErrors %d, want 1", st.HandlerErrors)
			}
		})
	}
}

// The interceptor sees every decoded request by key and can fail it,
// close the connection, or hold it; the Handler never sees what it takes.
func TestInterceptor(t *testing.T) {
	hold := make(chan struct{})
	var handled atomic.Int32
	cfg := DefaultConfig()
	cfg.Intercept = func(ctx context.Context, req *Request) (Response, bool) {
		switch req.Key {
		case 3: // Metadata: fail it
			resp := req.Body.ResponseKind().(*kmsg.MetadataResponse)
			resp.Topics = append(resp.Topics, kmsg.MetadataResponseTopic{ErrorCode: 5})
			return Reply(resp), true
		case 0: // Produce: hold until released, then let it through
			select {
			case <-hold:
			case <-ctx.Done():
			}
			return Response{}, false
		case 18: // ApiVersions: close the connection
			if req.Version == 2 {
				return CloseConnection(errors.New("injected")), true
			}
		}
		return Response{}, false
	}
	h := HandlerFunc(func(ctx context.Context, req *Request) Response {
		handled.Add(1)
		return Reply(req.Body.ResponseKind())
	})
	s, logs := startServer(t, cfg, h, testTable())
	c := dial(t, s)

	c.send(metadataReq(1), 1)
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 1
	c.expectCorr(resp, 1)
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 5 {
		t.Fatalf("intercepted Metadata: %+v", resp.Topics)
	}

	c.send(produceReq(7, 1), 2)
	c.send(metadataReq(1), 3)
	c.expectSilence() // held, and the connection's later request waits behind it
	close(hold)
	presp := kmsg.NewPtrProduceResponse()
	presp.Version = 7
	c.expectCorr(presp, 2)
	c.expectCorr(resp, 3)
	if handled.Load() != 1 {
		t.Fatalf("Handler saw %d requests, want 1 (the released Produce)", handled.Load())
	}

	if got := c.apiVersions(3, 4); got.ErrorCode != 0 {
		t.Fatalf("ApiVersions v3: error %d", got.ErrorCode)
	}
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 2
	c.send(req, 5)
	c.expectClosed()
	logs.waitLines(t, 1, "INFO", "injected")
}

// An advertised but unserved version goes to the row's Unserved answer, or
// closes the connection when it has none.
func TestUnservedVersion(t *testing.T) {
	table := testTable()
	table[0].Unserved = func(req *Request) Response {
		resp := req.Body.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range req.Body.(*kmsg.ProduceRequest).Topics {
			topic := kmsg.ProduceResponseTopic{Topic: rt.Topic}
			for _, rp := range rt.Partitions {
				topic.Partitions = append(topic.Partitions, kmsg.ProduceResponseTopicPartition{Partition: rp.Partition, ErrorCode: 35})
			}
			resp.Topics = append(resp.Topics, topic)
		}
		return Reply(resp)
	}
	h := HandlerFunc(func(ctx context.Context, req *Request) Response {
		t.Errorf("Handler saw %s v%d", apiKeyName(req.Key), req.Version)
		return Reply(req.Body.ResponseKind())
	})
	s, _ := startServer(t, DefaultConfig(), h, table)
	c := dial(t, s)
	c.send(produceReq(2, 1), 1)
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 2
	c.expectCorr(resp, 1)
	if len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 35 {
		t.Fatalf("Produce v2: %+v, want UNSUPPORTED_VERSION on the partition", resp.Topics)
	}

	s2, logs := startServer(t, DefaultConfig(), h, testTable())
	c2 := dial(t, s2)
	c2.send(produceReq(1, 1), 1)
	c2.expectClosed()
	logs.waitLines(t, 1, "WARN", "unsupported API version", "api=Produce", "version=1")
}

// connections.max.idle.ms closes a quiet connection, but not one waiting
// for its own response.
func TestIdleConnectionsClose(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ConnectionsMaxIdleMs = 200
	g := newGatedHandler()
	s, logs := startServer(t, cfg, g, testTable())

	idle := dial(t, s)
	idle.expectClosed()
	logs.waitLines(t, 1, "DEBUG", "closing idle connection")

	busy := dial(t, s)
	busy.send(metadataReq(9), 1)
	time.Sleep(600 * time.Millisecond) // three idle timeouts with a request in flight
	close(g.gate(1))
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 9
	busy.expectCorr(resp, 1)
	busy.expectClosed() // then idle again
	if got := s.Stats().IdleCloses; got != 2 {
		t.Fatalf("Stats.IdleCloses %d, want 2", got)
	}
}

// Close stops accepting, closes connections with requests held in the
// Handler, and waits for every goroutine (goleak checks at the end).
func TestCloseWaitsForEverything(t *testing.T) {
	g := newGatedHandler()
	s, err := newServer(DefaultConfig(), g, testTable())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(ln); err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(ln); err == nil {
		t.Fatal("a second Serve succeeded")
	}
	var clients []*client
	for i := range 3 {
		c := dial(t, s)
		c.send(metadataReq(9), int32(i))
		clients = append(clients, c)
	}
	waitFor(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.called) == 3 })
	if got := s.Stats().ConnectionsOpen; got != 3 {
		t.Fatalf("Stats.ConnectionsOpen %d, want 3", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range clients {
		c.expectClosed()
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Fatal("still accepting after Close")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(ln); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Serve after Close: %v, want ErrServerClosed", err)
	}
	if got := s.Stats().ConnectionsOpen; got != 0 {
		t.Fatalf("Stats.ConnectionsOpen %d after Close, want 0", got)
	}
}

func TestListen(t *testing.T) {
	s, err := NewServer(TestConfig(), metadataHandler())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Addr() != nil {
		t.Fatal("Addr before Listen")
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	if got := dial(t, s).apiVersions(0, 1); got.ErrorCode != 0 {
		t.Fatalf("error %d", got.ErrorCode)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := map[string]func(*Config){
		"request max 0":    func(c *Config) { c.SocketRequestMaxBytes = 0 },
		"receive buffer 0": func(c *Config) { c.SocketReceiveBufferBytes = 0 },
		"send buffer -2":   func(c *Config) { c.SocketSendBufferBytes = -2 },
		"idle 0":           func(c *Config) { c.ConnectionsMaxIdleMs = 0 },
		"idle overflow":    func(c *Config) { c.ConnectionsMaxIdleMs = 1 << 62 },
		"in flight 0":      func(c *Config) { c.MaxInFlightRequestsPerConnection = 0 },
		"listen addr":      func(c *Config) { c.ListenAddr = "no-port" },
	}
	for name, mutate := range bad {
		c := DefaultConfig()
		mutate(&c)
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: Validate() = %v, want ErrInvalidConfig", name, err)
		}
	}
	ok := DefaultConfig()
	ok.SocketReceiveBufferBytes, ok.SocketSendBufferBytes, ok.ConnectionsMaxIdleMs = -1, -1, -1
	if err := ok.Validate(); err != nil {
		t.Fatalf("-1 (OS default, never idle): %v", err)
	}
	if _, err := NewServer(DefaultConfig(), nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("nil handler: %v", err)
	}
}

// waitFor polls cond until it holds, or fails the test.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(ioTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(time.Millisecond)
	}
}

// A connection has one Fetch in flight at a time: a pipelined second
// Fetch (and anything after it) waits until the first one's response is
// written, so a client that pipelines fetches and never reads holds one
// response, not one per request in flight.
func TestOneFetchInFlightPerConnection(t *testing.T) {
	table := append(testTable(), API{Key: 1, Advertised: VersionRange{4, 12}, Served: VersionRange{4, 12}})
	g := newGatedHandler()
	s, _ := startServer(t, DefaultConfig(), g, table)
	c := dial(t, s)
	fetch := func() *kmsg.FetchRequest {
		r := kmsg.NewPtrFetchRequest()
		r.Version = 11
		return r
	}
	c.send(fetch(), 0)
	c.send(fetch(), 1)
	c.send(metadataReq(9), 2)
	waitFor(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.called) == 1 })
	c.expectSilence()
	g.mu.Lock()
	called := append([]int32(nil), g.called...)
	g.mu.Unlock()
	if len(called) != 1 {
		close(g.gate(0))
		t.Fatalf("dispatched %v with the first fetch unanswered", called)
	}
	close(g.gate(0))
	close(g.gate(1))
	close(g.gate(2))
	for i, resp := range []kmsg.Response{kmsg.NewPtrFetchResponse(), kmsg.NewPtrFetchResponse(), kmsg.NewPtrMetadataResponse()} {
		resp.SetVersion(map[bool]int16{true: 11, false: 9}[i < 2])
		c.expectCorr(resp, int32(i))
	}
}
