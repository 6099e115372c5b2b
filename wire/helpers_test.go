package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ioTimeout bounds every blocking read in the tests; it only fires when a
// test is failing.
const ioTimeout = 10 * time.Second

// logBuffer collects a server's log lines for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the logged lines at level (e.g. "WARN") that contain every
// one of subs.
func (b *logBuffer) lines(level string, subs ...string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, l := range strings.Split(b.buf.String(), "\n") {
		if !strings.Contains(l, "level="+level) {
			continue
		}
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(l, s)
		}
		if ok {
			out = append(out, l)
		}
	}
	return out
}

// waitLines polls until exactly want lines match, or fails.
func (b *logBuffer) waitLines(t *testing.T, want int, level string, subs ...string) {
	t.Helper()
	deadline := time.Now().Add(ioTimeout)
	for {
		got := b.lines(level, subs...)
		if len(got) == want {
			return
		}
		if len(got) > want || time.Now().After(deadline) {
			t.Fatalf("want %d %s log lines with %q, got %d:\n%s", want, level, subs, len(got), strings.Join(got, "\n"))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// testTable serves ApiVersions like production plus Metadata (3) and
// Produce (0) for the fake handlers, Produce advertised from v0 but served
// from v3 as the real row will be.
func testTable() apiTable {
	return apiTable{
		{Key: 0, Advertised: VersionRange{0, 11}, Served: VersionRange{3, 11}},
		{Key: 3, Advertised: VersionRange{0, 12}, Served: VersionRange{0, 12}},
		{Key: 18, Advertised: VersionRange{0, 4}, Served: VersionRange{0, 4}},
	}
}

// metadataHandler answers Metadata with an empty response and produce
// with acks=0 with nothing; anything else is a test bug.
func metadataHandler() Handler {
	return HandlerFunc(func(ctx context.Context, req *Request) Response {
		if p, ok := req.Body.(*kmsg.ProduceRequest); ok && p.Acks == 0 {
			return NoResponse()
		}
		return Reply(req.Body.ResponseKind())
	})
}

// startServer serves h over table on 127.0.0.1:0 and closes it at the end
// of the test.
func startServer(t *testing.T, cfg Config, h Handler, table apiTable) (*Server, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := newServer(cfg, h, table)
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
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s, logs
}

// client is a raw Kafka connection for tests.
type client struct {
	t  *testing.T
	nc net.Conn
}

func dial(t *testing.T, s *Server) *client {
	t.Helper()
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc}
}

// requestFrame encodes req at its version with kmsg's client-side
// formatter: size, header (v1, or v2 when flexible), body.
func requestFrame(req kmsg.Request, corr int32) []byte {
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("wire-test"))
	return f.AppendRequest(nil, req, corr)
}

// rawFrame prefixes payload with its size.
func rawFrame(payload []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(payload))), payload...)
}

// rawHeader builds a request header by hand: key, version, correlation id,
// client id, and an empty tag section when flexible.
func rawHeader(key, version int16, corr int32, flexible bool) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, uint16(len("raw")))
	b = append(b, "raw"...)
	if flexible {
		b = append(b, 0)
	}
	return b
}

func (c *client) write(b []byte) {
	c.t.Helper()
	c.nc.SetWriteDeadline(time.Now().Add(ioTimeout))
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// send writes req at its version with correlation id corr.
func (c *client) send(req kmsg.Request, corr int32) { c.write(requestFrame(req, corr)) }

// readFrame reads one response frame, or returns the read error.
func (c *client) readFrame(timeout time.Duration) ([]byte, error) {
	c.nc.SetReadDeadline(time.Now().Add(timeout))
	var size [4]byte
	if _, err := io.ReadFull(c.nc, size[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(size[:]))
	_, err := io.ReadFull(c.nc, b)
	return b, err
}

// recv reads one response into resp (its version set by the caller) and
// returns the correlation id. The response header is v1 iff resp is
// flexible and not ApiVersions.
func (c *client) recv(resp kmsg.Response) int32 {
	c.t.Helper()
	b, err := c.readFrame(ioTimeout)
	if err != nil {
		c.t.Fatalf("reading response: %v", err)
	}
	corr, body := int32(binary.BigEndian.Uint32(b)), b[4:]
	if resp.IsFlexible() && resp.Key() != 18 {
		if len(body) == 0 || body[0] != 0 {
			c.t.Fatalf("response header v1 without an empty tag section: % x", b)
		}
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		c.t.Fatalf("decoding %T v%d: %v", resp, resp.GetVersion(), err)
	}
	return corr
}

// expectCorr reads one response of resp's kind and checks its correlation
// id.
func (c *client) expectCorr(resp kmsg.Response, corr int32) {
	c.t.Helper()
	if got := c.recv(resp); got != corr {
		c.t.Fatalf("correlation id %d, want %d", got, corr)
	}
}

// expectClosed checks that the server closes the connection without
// writing anything more.
func (c *client) expectClosed() {
	c.t.Helper()
	b, err := c.readFrame(ioTimeout)
	switch {
	case err == nil:
		c.t.Fatalf("want the connection closed, read a %d-byte frame", len(b))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), isReset(err):
	default:
		c.t.Fatalf("want the connection closed, got %v", err)
	}
}

// expectSilence checks that nothing arrives for a short while (a negative
// check: it can only fail when something is wrong).
func (c *client) expectSilence() {
	c.t.Helper()
	if b, err := c.readFrame(50 * time.Millisecond); err == nil {
		c.t.Fatalf("want no response yet, read a %d-byte frame", len(b))
	} else if !errorsIsTimeout(err) {
		c.t.Fatalf("want no response yet, got %v", err)
	}
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

// apiVersions sends ApiVersions at version v and returns the response.
func (c *client) apiVersions(v int16, corr int32) *kmsg.ApiVersionsResponse {
	c.t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = v
	req.ClientSoftwareName, req.ClientSoftwareVersion = "weir-test", "1.0.0"
	c.send(req, corr)
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	c.expectCorr(resp, corr)
	return resp
}

// metadata sends Metadata v version and returns its correlation id echoed.
func metadataReq(version int16) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = version
	return req
}

// produceReq builds a Produce request with acks.
func produceReq(version, acks int16) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version = version
	req.Acks = acks
	req.TimeoutMillis = 1000
	topic := kmsg.NewProduceRequestTopic()
	topic.Topic = "t"
	part := kmsg.NewProduceRequestTopicPartition()
	part.Records = []byte{}
	topic.Partitions = append(topic.Partitions, part)
	req.Topics = append(req.Topics, topic)
	return req
}
