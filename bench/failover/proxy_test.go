package failover

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// echoServer accepts connections on loopback and echoes every byte.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func startProxy(t *testing.T, ups map[int32]string, base impairment) *proxy {
	t.Helper()
	p, err := newProxy(ups, base, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// frameOf is a size-prefixed frame whose body is a request header of an
// API the proxy does not rewrite (Produce), correlation id corr, and pad.
func frameOf(corr int32, pad []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(8+len(pad)))
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint16(b, 9)
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	return append(b, pad...)
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestProxyForwardsInOrder: every byte written through the proxy to an
// echo server comes back, in order, with and without latency and loss.
func TestProxyForwardsInOrder(t *testing.T) {
	for _, imp := range []impairment{{}, {Latency: 2 * time.Millisecond, Loss: 0.005}} {
		p := startProxy(t, map[int32]string{1: echoServer(t)}, imp)
		c := dial(t, p.Seeds()[0])
		rnd := rand.New(rand.NewPCG(7, 7))
		var want bytes.Buffer
		for i := range 200 {
			pad := make([]byte, rnd.IntN(5000))
			for j := range pad {
				pad[j] = byte(rnd.IntN(256))
			}
			want.Write(frameOf(int32(i), pad))
		}
		go func() { _, _ = c.Write(want.Bytes()) }()
		got := make([]byte, want.Len())
		if _, err := io.ReadFull(c, got); err != nil {
			t.Fatalf("%+v: read back: %v", imp, err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%+v: the bytes came back changed or out of order", imp)
		}
	}
}

// roundTrip writes one frame and reads it back, returning how long it
// took.
func roundTrip(t *testing.T, c net.Conn, corr int32) time.Duration {
	t.Helper()
	f := frameOf(corr, []byte("x"))
	start := time.Now()
	if _, err := c.Write(f); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(f))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, f) {
		t.Fatalf("frame %d came back as %x", corr, got)
	}
	return time.Since(start)
}

// TestProxyLatency: a frame's round trip takes at least the latency each
// way, the run's and a fault's added; clearing the fault leaves the
// run's. Only lower bounds are asserted.
func TestProxyLatency(t *testing.T) {
	p := startProxy(t, map[int32]string{1: echoServer(t), 2: echoServer(t)}, impairment{Latency: 10 * time.Millisecond})
	c := dial(t, p.Seeds()[0])
	if d := roundTrip(t, c, 1); d < 20*time.Millisecond {
		t.Errorf("round trip %v with 10 ms each way", d)
	}
	p.SetFault(1, impairment{Latency: 40 * time.Millisecond})
	if d := roundTrip(t, c, 2); d < 100*time.Millisecond {
		t.Errorf("round trip %v with 10+40 ms each way", d)
	}
	p.ClearFault(1)
	if d := roundTrip(t, c, 3); d < 20*time.Millisecond {
		t.Errorf("round trip %v with 10 ms each way after the fault", d)
	}
}

// TestProxyLossIsDelay: with every frame lost, each still arrives, whole
// and in order, after the retransmission delay each way.
func TestProxyLossIsDelay(t *testing.T) {
	p := startProxy(t, map[int32]string{1: echoServer(t)}, impairment{})
	p.SetFault(1, impairment{Loss: 1})
	c := dial(t, p.Seeds()[0])
	for i := range 2 {
		if d := roundTrip(t, c, int32(i)); d < 2*retransmitDelay {
			t.Errorf("round trip %d took %v with every frame lost; want at least %v", i, d, 2*retransmitDelay)
		}
	}
}

// TestProxyCloseClients: closing a broker's client connections ends them
// (the client reads EOF or an error), leaves the other broker's alone,
// and new connections work.
func TestProxyCloseClients(t *testing.T) {
	p := startProxy(t, map[int32]string{1: echoServer(t), 2: echoServer(t)}, impairment{})
	seeds := p.Seeds()
	c1, c2 := dial(t, seeds[0]), dial(t, seeds[1])
	roundTrip(t, c1, 1) // both connections are through
	roundTrip(t, c2, 1)
	if n := p.CloseClients(1); n != 1 {
		t.Fatalf("closed %d connections of broker 1, want 1", n)
	}
	_ = c1.SetReadDeadline(time.Now().Add(10 * time.Second)) // a bound, not a wait
	if _, err := c1.Read(make([]byte, 1)); err == nil {
		t.Fatal("read on a closed connection succeeded")
	}
	roundTrip(t, c2, 2)
	roundTrip(t, dial(t, seeds[0]), 3)
	if n := p.CloseClients(-1); n != 2 {
		t.Errorf("closed %d connections of every broker, want 2", n)
	}
}

// fakeBroker answers one request on each connection with resp, after
// reading the request's header.
func fakeBroker(t *testing.T, resp kmsg.Response) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for {
					f, err := readFrame(c)
					if err != nil {
						return
					}
					msg := binary.BigEndian.AppendUint32(nil, binary.BigEndian.Uint32(f[8:]))
					if resp.IsFlexible() {
						msg = append(msg, 0) // no header tags
					}
					msg = resp.AppendTo(msg)
					if _, err := c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(msg))), msg...)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// requestVia sends req (version v) through addr and decodes the response.
func requestVia(t *testing.T, addr string, req kmsg.Request, v int16) kmsg.Response {
	t.Helper()
	req.SetVersion(v)
	c := dial(t, addr)
	body := binary.BigEndian.AppendUint16(nil, uint16(req.Key()))
	body = binary.BigEndian.AppendUint16(body, uint16(v))
	body = binary.BigEndian.AppendUint32(body, 42)
	body = append(body, 0, 0) // empty client id
	if req.IsFlexible() {
		body = append(body, 0)
	}
	body = req.AppendTo(body)
	if _, err := c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)); err != nil {
		t.Fatal(err)
	}
	f, err := readFrame(c)
	if err != nil {
		t.Fatal(err)
	}
	resp := req.ResponseKind()
	resp.SetVersion(v)
	b := f[8:]
	if resp.IsFlexible() {
		k := kbin{src: b}
		k.skipTags()
		b = k.src
	}
	if err := resp.ReadFrom(b); err != nil {
		t.Fatalf("response: %v", err)
	}
	return resp
}

func splitAddr(t *testing.T, a string) (string, int32) {
	t.Helper()
	h, p, err := net.SplitHostPort(a)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return h, int32(n)
}

// TestProxyRewritesAddresses: Metadata and FindCoordinator answers name
// the proxy's listeners instead of the brokers', at flexible and older
// versions; an address the proxy does not know is left alone.
func TestProxyRewritesAddresses(t *testing.T) {
	// The brokers' advertised addresses are made up: the proxy maps them
	// by name, and only broker 1's is real (the fake broker).
	for _, v := range []int16{1, 12} {
		md := kmsg.NewPtrMetadataResponse()
		md.SetVersion(v)
		for id, a := range []string{"", "127.0.0.1:1111", "127.0.0.1:2222", "10.9.9.9:3333"} {
			if a == "" {
				continue
			}
			b := kmsg.NewMetadataResponseBroker()
			b.NodeID = int32(id)
			b.Host, b.Port = splitAddr(t, a)
			md.Brokers = append(md.Brokers, b)
		}
		up := fakeBroker(t, md)
		p := startProxy(t, map[int32]string{1: up, 2: "127.0.0.1:2222"}, impairment{})
		// The proxy maps broker 1 by its real address; re-map the
		// made-up one as well, as its Metadata would advertise it.
		p.addrs["127.0.0.1:1111"] = p.addrs[up]
		got := requestVia(t, p.Seeds()[0], kmsg.NewPtrMetadataRequest(), v).(*kmsg.MetadataResponse)
		seeds := p.Seeds()
		for _, b := range got.Brokers {
			a := net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
			want := map[int32]string{1: seeds[0], 2: seeds[1], 3: "10.9.9.9:3333"}[b.NodeID]
			if a != want {
				t.Errorf("v%d: broker %d at %s, want %s", v, b.NodeID, a, want)
			}
		}
	}
	for _, v := range []int16{2, 4} {
		fc := kmsg.NewPtrFindCoordinatorResponse()
		fc.SetVersion(v)
		fc.NodeID, fc.Host, fc.Port = 2, "127.0.0.1", 2222
		co := kmsg.NewFindCoordinatorResponseCoordinator()
		co.Key, co.NodeID, co.Host, co.Port = "g", 2, "127.0.0.1", 2222
		fc.Coordinators = append(fc.Coordinators, co)
		up := fakeBroker(t, fc)
		p := startProxy(t, map[int32]string{1: up, 2: "127.0.0.1:2222"}, impairment{})
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey, req.CoordinatorKeys = "g", []string{"g"}
		got := requestVia(t, p.Seeds()[0], req, v).(*kmsg.FindCoordinatorResponse)
		h, port := splitAddr(t, p.Seeds()[1])
		if v < 4 && (got.Host != h || got.Port != port) {
			t.Errorf("v%d: coordinator at %s:%d, want %s:%d", v, got.Host, got.Port, h, port)
		}
		if v >= 4 && (len(got.Coordinators) != 1 || got.Coordinators[0].Host != h || got.Coordinators[0].Port != port) {
			t.Errorf("v%d: coordinators %+v, want %s:%d", v, got.Coordinators, h, port)
		}
	}
}

// TestShaperKeepsOrder: a chunk is never due before the one ahead of it,
// latency shifts every chunk, and a loss delays that chunk and the ones
// after it.
func TestShaperKeepsOrder(t *testing.T) {
	t0 := time.Unix(100, 0)
	ms := time.Millisecond
	var s shaper
	imp := impairment{Latency: 20 * ms}
	if d := s.due(t0, imp, false); !d.Equal(t0.Add(20 * ms)) {
		t.Errorf("first chunk due %v", d.Sub(t0))
	}
	// Arriving 1 ms later, due 1 ms later: latency does not serialise.
	if d := s.due(t0.Add(ms), imp, false); !d.Equal(t0.Add(21 * ms)) {
		t.Errorf("second chunk due %v", d.Sub(t0))
	}
	lost := s.due(t0.Add(2*ms), imp, true)
	if !lost.Equal(t0.Add(22*ms + retransmitDelay)) {
		t.Errorf("lost chunk due %v", lost.Sub(t0))
	}
	// The chunk behind the lost one waits for it.
	if d := s.due(t0.Add(3*ms), imp, false); !d.Equal(lost) {
		t.Errorf("chunk after the lost one due %v, want %v", d.Sub(t0), lost.Sub(t0))
	}
	// Much later, only the latency again.
	late := t0.Add(time.Second)
	if d := s.due(late, imp, false); !d.Equal(late.Add(20 * ms)) {
		t.Errorf("late chunk due %v after its arrival", d.Sub(late))
	}
	if got := (impairment{Latency: ms, Loss: 0.5}).plus(impairment{Latency: 2 * ms, Loss: 0.5}); got.Latency != 3*ms || got.Loss != 0.75 {
		t.Errorf("plus: %+v", got)
	}
}

// TestAssignmentsRebalance: a rebalance runs from the first revoke until
// every partition is owned again, across members.
func TestAssignmentsRebalance(t *testing.T) {
	a := newAssignments(4)
	a.assigned(0, map[string][]int32{"t": {0, 1, 2, 3}}, 10)
	if !a.complete() {
		t.Fatal("not complete after the first assignment")
	}
	a.removed(0, map[string][]int32{"t": {2, 3}}, 100)
	a.removed(0, map[string][]int32{}, 110) // nothing revoked: no change
	if a.complete() {
		t.Fatal("complete with two partitions revoked")
	}
	a.assigned(1, map[string][]int32{"t": {2}}, 150)
	if d, ok := a.rebalanceIn(0, 1000); !ok || d != 900 {
		t.Errorf("rebalance under way: %v %v, want 900 to the window's end", d, ok)
	}
	a.assigned(1, map[string][]int32{"t": {3}}, 200)
	if d, ok := a.rebalanceIn(0, 1000); !ok || d != 100 {
		t.Errorf("rebalance %v %v, want 100", d, ok)
	}
	if _, ok := a.rebalanceIn(101, 1000); ok {
		t.Error("a rebalance that started before the window counted")
	}
	a.removed(1, map[string][]int32{"t": {2, 3}}, 300) // member 1 lost
	a.assigned(0, map[string][]int32{"t": {2, 3}}, 350)
	if d, ok := a.rebalanceIn(250, 1000); !ok || d != 50 || !a.complete() {
		t.Errorf("second rebalance %v %v complete %v, want 50", d, ok, a.complete())
	}
}

// TestAckedAfter: only a successful acknowledgement after the fault on a
// partition the victim led counts as producing again.
func TestAckedAfter(t *testing.T) {
	led := map[[2]int32]bool{{1, 2}: true}
	acks := []Ack{{Topic: 1, Partition: 2, DoneNs: 5}, {Topic: 0, Partition: 2, DoneNs: 20}, {Topic: 1, Partition: 2, DoneNs: 30, Err: true}}
	if ackedAfter(acks, 10, led) {
		t.Error("counted an acknowledgement before the fault, another topic's, or a failed send")
	}
	acks = append(acks, Ack{Topic: 1, Partition: 2, DoneNs: 40})
	if !ackedAfter(acks, 10, led) {
		t.Error("missed the acknowledgement after the fault")
	}
}

// TestNeedsProxy: the proxy runs only when latency, loss or a proxy fault
// asks for it.
func TestNeedsProxy(t *testing.T) {
	c := DefaultConfig()
	if c.needsProxy() {
		t.Error("the default run needs the proxy")
	}
	for _, f := range []func(*Config){
		func(c *Config) { c.Latency = time.Millisecond },
		func(c *Config) { c.Loss = 0.01 },
		func(c *Config) { c.Faults = []Fault{FaultLeader, FaultLoss} },
	} {
		c := DefaultConfig()
		f(&c)
		if !c.needsProxy() {
			t.Errorf("%+v does not need the proxy", c)
		}
	}
}
