package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fuzzTable serves every request kmsg knows at every version it knows, so
// the fuzzer reaches every decoder; ApiVersions and Produce keep their real
// rows (wire's own ApiVersions, Produce's advertised-but-unserved v0-2).
func fuzzTable() apiTable {
	var t apiTable
	for key := int16(0); key < 200; key++ {
		req := kmsg.RequestForKey(key)
		switch {
		case req == nil:
			continue
		case key == 0:
			t = append(t, API{Key: 0, Advertised: VersionRange{0, req.MaxVersion()}, Served: VersionRange{3, req.MaxVersion()}})
		case key == apiVersionsKey:
			t = append(t, API{Key: key, Advertised: VersionRange{0, 4}, Served: VersionRange{0, 4}})
		default:
			t = append(t, API{Key: key, Advertised: VersionRange{0, req.MaxVersion()}, Served: VersionRange{0, req.MaxVersion()}})
		}
	}
	return t
}

// fuzzHandler answers each request with its kind's default response, every
// third one deferred, and acks=0 produces with nothing.
func fuzzHandler() Handler {
	return HandlerFunc(func(ctx context.Context, req *Request) Response {
		if !expectsReply(req.Body) {
			return NoResponse()
		}
		resp := req.Body.ResponseKind()
		if req.CorrelationID%3 == 0 {
			return Defer(func(context.Context) Response { return Reply(resp) })
		}
		return Reply(resp)
	})
}

// FuzzServeFrame feeds a byte stream through everything a connection does
// to it, without the socket: framing, header parsing, the key and version
// checks, kmsg decoding, dispatch to a trivial Handler, settling and
// response encoding. It must never panic; every reply must encode to a
// frame that echoes the correlation id and decodes again with kmsg; a
// close ends the stream as it ends a connection.
func FuzzServeFrame(f *testing.F) {
	for _, a := range fuzzTable() {
		for v := a.Advertised.Min; v <= a.Advertised.Max; v++ {
			req := kmsg.RequestForKey(a.Key)
			req.SetVersion(v)
			f.Add(requestFrame(req, int32(v)))
		}
	}
	pipelined := append(requestFrame(metadataReq(1), 1), requestFrame(produceReq(7, 0), 2)...)
	pipelined = append(pipelined, requestFrame(metadataReq(12), 3)...)
	f.Add(pipelined)
	f.Add(rawFrame(append(rawHeader(18, 9, 4, true), 1, 2, 3)))
	f.Add(rawFrame(rawHeader(999, 0, 5, false)))
	f.Add(binary.BigEndian.AppendUint32(nil, 0xffffffff))
	f.Add([]byte{})

	s, err := newServer(DefaultConfig(), fuzzHandler(), fuzzTable())
	if err != nil {
		f.Fatal(err)
	}
	s.log = slog.New(slog.DiscardHandler)
	f.Cleanup(func() { s.Close() })
	ci := &ConnInfo{ID: 1}

	f.Fuzz(func(t *testing.T, stream []byte) {
		serveStream(t, s, context.Background(), ci, stream, false)
	})
}

// serveStream feeds stream through s frame by frame as a connection would
// and checks every answer: a reply must encode and decode again, nothing
// only for an acks=0 Produce, a close must not come from a recovered
// panic or a broken Handler contract. deadline gives each frame's
// context a short deadline (long polls of a real handler).
func serveStream(t *testing.T, s *Server, parent context.Context, ci *ConnInfo, stream []byte, deadline bool) {
	t.Helper()
	ctx := parent
	if deadline {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(parent, 200*time.Millisecond)
		defer cancel()
	}
	r := bytes.NewReader(stream)
	for {
		frame, err := readFrame(r, 1<<20)
		if err != nil {
			return
		}
		p := s.serveFrame(ctx, ci, &frameRef{buf: frame}, time.Now())
		if p.resp.kind == kindDefer {
			s.complete(ctx, p, ci)
		}
		switch p.resp.kind {
		case kindReply:
			checkEncoded(t, p)
		case kindNone:
			if p.key != 0 || !p.noReply {
				t.Fatalf("no response for %s", apiKeyName(p.key))
			}
		case kindClose:
			if p.resp.reason != nil && strings.Contains(p.resp.reason.Error(), "panic") {
				t.Fatalf("recovered panic: %v", p.resp.reason)
			}
			if errors.Is(p.resp.reason, errHandler) {
				t.Fatalf("the handler broke its contract: %v", p.resp.reason)
			}
			return
		default:
			t.Fatalf("unsettled response kind %d", p.resp.kind)
		}
	}
}

// checkEncoded encodes a settled reply and decodes it back.
func checkEncoded(t *testing.T, p *pending) {
	t.Helper()
	b, err := appendResponse(nil, p.corr, p.resp.body)
	if err != nil {
		t.Fatal(err)
	}
	if int(binary.BigEndian.Uint32(b)) != len(b)-4 || int32(binary.BigEndian.Uint32(b[4:])) != p.corr {
		t.Fatalf("frame size or correlation id wrong: % x", b[:8])
	}
	resp := kmsg.ResponseForKey(p.key)
	resp.SetVersion(p.version)
	body := b[8:]
	if resp.IsFlexible() && p.key != apiVersionsKey {
		if body[0] != 0 {
			t.Fatalf("response header tag byte %d", body[0])
		}
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		t.Fatalf("%s v%d response does not decode: %v", apiKeyName(p.key), p.version, err)
	}
}
