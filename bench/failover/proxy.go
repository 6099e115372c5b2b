package failover

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// proxy is the in-process TCP proxy between the clients and the brokers:
// one loopback listener per broker, forwarding every connection to that
// broker. It forwards whole Kafka frames (a request or a response, the
// "chunk" that latency and loss apply to), and rewrites the broker
// addresses in Metadata, FindCoordinator and DescribeCluster responses to
// its own listeners, so that clients seeded with the proxy's addresses
// never reach a broker directly. Traffic between brokers (replication,
// gossip, raft) does not pass through it: the brokers keep advertising
// their own listeners.
type proxy struct {
	brokers map[int32]*brokerProxy
	ids     []int32
	// addrs maps a broker's advertised host:port to its listener's.
	addrs map[string]hostPort

	base atomic.Pointer[impairment] // every broker's, the whole run

	rmu sync.Mutex
	rnd *rand.Rand
}

type hostPort struct {
	host string
	port int32
}

// brokerProxy is one broker's listener and the connections through it.
type brokerProxy struct {
	p        *proxy
	id       int32
	upstream string
	ln       net.Listener
	fault    atomic.Pointer[impairment]
	wg       sync.WaitGroup

	mu     sync.Mutex
	conns  map[*proxyConn]struct{}
	closed bool
}

// proxyConn is one client connection and its connection to the broker.
type proxyConn struct {
	client, broker net.Conn
	done           chan struct{}
	once           sync.Once

	mu      sync.Mutex
	pending map[int32]request // requests whose responses are rewritten, by correlation id
}

// maxFrame bounds a forwarded frame's size.
const maxFrame = 1 << 30

// newProxy listens on a loopback port for each broker of upstreams (node
// id to the broker's advertised host:port) and applies base to every
// chunk. seed seeds the loss draws.
func newProxy(upstreams map[int32]string, base impairment, seed uint64) (*proxy, error) {
	p := &proxy{brokers: map[int32]*brokerProxy{}, addrs: map[string]hostPort{}, rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	p.base.Store(&base)
	for id, up := range upstreams {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("proxy of broker %d: %w", id, err)
		}
		a := ln.Addr().(*net.TCPAddr)
		p.addrs[up] = hostPort{a.IP.String(), int32(a.Port)}
		bp := &brokerProxy{p: p, id: id, upstream: up, ln: ln, conns: map[*proxyConn]struct{}{}}
		p.brokers[id] = bp
		p.ids = append(p.ids, id)
		bp.wg.Add(1)
		go bp.accept()
	}
	slices.Sort(p.ids)
	return p, nil
}

// Seeds returns the listeners' addresses, in node id order.
func (p *proxy) Seeds() []string {
	var out []string
	for _, id := range p.ids {
		out = append(out, p.brokers[id].ln.Addr().String())
	}
	return out
}

// SetFault adds imp to broker id's client connections (on top of the
// run's base impairment) until ClearFault.
func (p *proxy) SetFault(id int32, imp impairment) {
	if bp := p.brokers[id]; bp != nil {
		bp.fault.Store(&imp)
	}
}

// ClearFault removes broker id's fault impairment.
func (p *proxy) ClearFault(id int32) {
	if bp := p.brokers[id]; bp != nil {
		bp.fault.Store(nil)
	}
}

// CloseClients closes every connection through broker id's listener
// (both ends) and returns how many; the listener keeps accepting new
// ones. A negative id closes those of every broker.
func (p *proxy) CloseClients(id int32) int {
	n := 0
	for bid, bp := range p.brokers {
		if id < 0 || bid == id {
			n += bp.closeConns()
		}
	}
	return n
}

// Close stops every listener and closes every connection.
func (p *proxy) Close() {
	for _, bp := range p.brokers {
		bp.mu.Lock()
		bp.closed = true
		bp.mu.Unlock()
		bp.ln.Close()
		bp.closeConns()
		bp.wg.Wait()
	}
}

// chance draws a number in [0, 1).
func (p *proxy) chance() float64 {
	p.rmu.Lock()
	defer p.rmu.Unlock()
	return p.rnd.Float64()
}

// impairment is what applies to broker bp's chunks now.
func (bp *brokerProxy) impairment() impairment {
	imp := *bp.p.base.Load()
	if f := bp.fault.Load(); f != nil {
		imp = imp.plus(*f)
	}
	return imp
}

func (bp *brokerProxy) closeConns() int {
	bp.mu.Lock()
	conns := make([]*proxyConn, 0, len(bp.conns))
	for c := range bp.conns {
		conns = append(conns, c)
	}
	bp.mu.Unlock()
	n := 0
	for _, c := range conns {
		if c.close() {
			n++
		}
	}
	return n
}

// accept serves the listener until it is closed.
func (bp *brokerProxy) accept() {
	defer bp.wg.Done()
	for {
		cc, err := bp.ln.Accept()
		if err != nil {
			return
		}
		bp.wg.Add(1)
		go func() {
			defer bp.wg.Done()
			bp.serve(cc)
		}()
	}
}

// serve connects cc to the broker and forwards both ways until either
// end closes or fails.
func (bp *brokerProxy) serve(cc net.Conn) {
	bc, err := net.DialTimeout("tcp", bp.upstream, 5*time.Second)
	if err != nil {
		cc.Close() // the broker is down: the client sees its connection closed
		return
	}
	pc := &proxyConn{client: cc, broker: bc, done: make(chan struct{}), pending: map[int32]request{}}
	bp.mu.Lock()
	if bp.closed {
		bp.mu.Unlock()
		pc.close()
		return
	}
	bp.conns[pc] = struct{}{}
	bp.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); bp.pipe(pc, cc, bc, true) }()
	go func() { defer wg.Done(); bp.pipe(pc, bc, cc, false) }()
	wg.Wait()
	bp.mu.Lock()
	delete(bp.conns, pc)
	bp.mu.Unlock()
}

// close closes both ends and reports whether this call did.
func (c *proxyConn) close() bool {
	did := false
	c.once.Do(func() {
		did = true
		close(c.done)
		c.client.Close()
		c.broker.Close()
	})
	return did
}

// chunk is one frame waiting for its time.
type chunk struct {
	due time.Time
	b   []byte
}

// pipe forwards the frames read from src to dst, each at the time its
// direction's shaper decides; requests are noted (toBroker) and
// responses rewritten. Any error closes the whole connection.
func (bp *brokerProxy) pipe(pc *proxyConn, src, dst net.Conn, toBroker bool) {
	defer pc.close()
	ch := make(chan chunk, 1024)
	wdone := make(chan struct{})
	go func() {
		defer close(wdone)
		writeChunks(pc, dst, ch)
	}()
	defer func() { close(ch); <-wdone }()
	var sh shaper
	for {
		frame, err := readFrame(src)
		if err != nil {
			return
		}
		now := time.Now()
		if toBroker {
			pc.noteRequest(frame)
		} else {
			frame = bp.p.rewriteResponse(pc, frame)
		}
		imp := bp.impairment()
		lost := imp.Loss > 0 && bp.p.chance() < imp.Loss
		select {
		case ch <- chunk{due: sh.due(now, imp, lost), b: frame}:
		case <-pc.done:
			return
		}
	}
}

// writeChunks writes each chunk at its due time, in order.
func writeChunks(pc *proxyConn, dst net.Conn, ch <-chan chunk) {
	t := time.NewTimer(0)
	defer t.Stop()
	<-t.C
	for c := range ch {
		if d := time.Until(c.due); d > 0 {
			t.Reset(d)
			select {
			case <-t.C:
			case <-pc.done:
				return
			}
		}
		if _, err := dst.Write(c.b); err != nil {
			pc.close()
			return
		}
	}
}

// readFrame reads one size-prefixed Kafka frame, prefix included.
func readFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 0 || n > maxFrame {
		return nil, fmt.Errorf("proxy: frame of %d bytes", n)
	}
	b := make([]byte, 4+int(n))
	copy(b, size[:])
	if _, err := io.ReadFull(r, b[4:]); err != nil {
		return nil, err
	}
	return b, nil
}

// rewritten are the APIs whose responses name brokers' addresses.
var rewritten = []int16{kmsg.Metadata.Int16(), kmsg.FindCoordinator.Int16(), kmsg.DescribeCluster.Int16()}

// noteRequest remembers the key and version of a request whose response
// is rewritten.
func (c *proxyConn) noteRequest(frame []byte) {
	if len(frame) < requestHeader {
		return
	}
	key := int16(binary.BigEndian.Uint16(frame[4:]))
	if !slices.Contains(rewritten, key) {
		return
	}
	ver := int16(binary.BigEndian.Uint16(frame[6:]))
	corr := int32(binary.BigEndian.Uint32(frame[8:]))
	c.mu.Lock()
	c.pending[corr] = request{key, ver}
	c.mu.Unlock()
}

// rewriteResponse returns frame with the brokers' addresses replaced by
// the proxy's when it answers a noted request, else frame itself (also
// when it does not decode: the client then sees what the broker sent).
func (p *proxy) rewriteResponse(c *proxyConn, frame []byte) []byte {
	if len(frame) < 8 {
		return frame
	}
	corr := int32(binary.BigEndian.Uint32(frame[4:]))
	c.mu.Lock()
	req, ok := c.pending[corr]
	delete(c.pending, corr)
	c.mu.Unlock()
	if !ok {
		return frame
	}
	out, err := p.rewrite(req, frame[4:])
	if err != nil {
		return frame
	}
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	return out
}

var errUndecodable = errors.New("proxy: response does not decode")

// rewrite decodes one response (header and body, no size), replaces the
// addresses and returns the new frame with room for the size prefix.
func (p *proxy) rewrite(req request, msg []byte) ([]byte, error) {
	resp := kmsg.ResponseForKey(req.key)
	if resp == nil {
		return nil, errUndecodable
	}
	resp.SetVersion(req.version)
	body := msg[4:]
	if resp.IsFlexible() {
		b := kbin{src: body}
		b.skipTags()
		if b.bad {
			return nil, errUndecodable
		}
		body = b.src
	}
	header := msg[:len(msg)-len(body)]
	if err := resp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("%w: %w", errUndecodable, err)
	}
	p.replaceAddrs(resp)
	out := append(make([]byte, 4, 4+len(msg)), header...)
	return resp.AppendTo(out), nil
}

// replaceAddrs replaces every known broker address in resp.
func (p *proxy) replaceAddrs(resp kmsg.Response) {
	swap := func(host *string, port *int32) {
		if hp, ok := p.addrs[net.JoinHostPort(*host, strconv.Itoa(int(*port)))]; ok {
			*host, *port = hp.host, hp.port
		}
	}
	switch r := resp.(type) {
	case *kmsg.MetadataResponse:
		for i := range r.Brokers {
			swap(&r.Brokers[i].Host, &r.Brokers[i].Port)
		}
	case *kmsg.FindCoordinatorResponse:
		swap(&r.Host, &r.Port)
		for i := range r.Coordinators {
			swap(&r.Coordinators[i].Host, &r.Coordinators[i].Port)
		}
	case *kmsg.DescribeClusterResponse:
		for i := range r.Brokers {
			swap(&r.Brokers[i].Host, &r.Brokers[i].Port)
		}
	}
}
