package wire

import (
	"encoding/binary"
	"net"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Each bad input closes its own connection with exactly one Warn line and
// leaves other connections working (docs/DESIGN.md "Bad input", wire part).
func TestBadInputClosesOnlyThatConnection(t *testing.T) {
	sizeOnly := func(n int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }
	// A Metadata v1 frame whose header is fine but whose body announces 9
	// topics and holds none: kmsg cannot decode it.
	metaCut := rawFrame(append(rawHeader(3, 1, 5, false), 0, 0, 0, 9))

	cases := []struct {
		name    string
		input   []byte
		halfEnd bool   // close the client's write side after the input
		log     string // what the Warn line says
	}{
		{"frame over socket.request.max.bytes", sizeOnly(4097), false, "frame size out of range"},
		{"frame over the default limit", sizeOnly(104857601), false, "frame size out of range"},
		{"negative frame size", sizeOnly(-1), false, "frame size out of range"},
		{"truncated frame", append(sizeOnly(100), make([]byte, 10)...), true, "truncated frame"},
		{"truncated size", []byte{0, 0}, true, "truncated frame"},
		{"empty frame", sizeOnly(0), false, "malformed request header"},
		{"short header", rawFrame([]byte{0, 3, 0, 1, 0}), false, "malformed request header"},
		{"client id past the frame", rawFrame([]byte{0, 3, 0, 1, 0, 0, 0, 1, 0, 50, 'a'}), false, "malformed request header"},
		{"bad client id length", rawFrame([]byte{0, 3, 0, 1, 0, 0, 0, 1, 0xff, 0xfe}), false, "malformed request header"},
		{"flexible header tags cut", rawFrame(append(rawHeader(3, 12, 1, false), 3, 1)), false, "malformed request header"},
		{"unknown API key (kmsg knows it)", requestFrame(kmsg.NewPtrDeleteGroupsRequest(), 1), false, "unknown API key"},
		{"unknown API key (nobody knows it)", rawFrame(rawHeader(999, 0, 1, false)), false, "unknown API key"},
		{"negative API key", rawFrame(rawHeader(-7, 0, 1, false)), false, "unknown API key"},
		{"version above the advertised range", rawFrame(rawHeader(3, 13, 1, true)), false, "unsupported API version"},
		{"future version kmsg does not know", rawFrame(rawHeader(3, 99, 1, true)), false, "unsupported API version"},
		{"negative version", rawFrame(rawHeader(3, -1, 1, false)), false, "unsupported API version"},
		{"garbage body", metaCut, false, "malformed request body"},
		{"garbage ApiVersions v3 body", rawFrame(append(rawHeader(18, 3, 1, true), 0x7f)), false, "malformed request body"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tc.name == "frame over socket.request.max.bytes" {
				cfg.SocketRequestMaxBytes = 4096
			}
			s, logs := startServer(t, cfg, metadataHandler(), testTable())
			bad, good := dial(t, s), dial(t, s)
			if got := good.apiVersions(3, 1); got.ErrorCode != 0 {
				t.Fatalf("good connection: error %d", got.ErrorCode)
			}
			bad.write(tc.input)
			if tc.halfEnd {
				bad.nc.(*net.TCPConn).CloseWrite()
			}
			bad.expectClosed()
			logs.waitLines(t, 1, "WARN", "closing connection on bad request", tc.log)
			if got := len(logs.lines("WARN")) + len(logs.lines("ERROR")); got != 1 {
				t.Fatalf("%d warning and error lines, want 1:\n%q", got, append(logs.lines("WARN"), logs.lines("ERROR")...))
			}
			if got := good.apiVersions(0, 2); got.ErrorCode != 0 {
				t.Fatalf("good connection after the bad one: error %d", got.ErrorCode)
			}
			if st := s.Stats(); st.BadInput != 1 {
				t.Fatalf("Stats.BadInput %d, want 1", st.BadInput)
			}
		})
	}
}

// Requests pipelined before a bad frame are answered before the close, as
// with Kafka, which reads one request at a time.
func TestBadFrameAfterPipelinedRequests(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SocketRequestMaxBytes = 1024
	s, _ := startServer(t, cfg, metadataHandler(), testTable())
	c := dial(t, s)
	in := requestFrame(metadataReq(4), 1)
	in = append(in, requestFrame(metadataReq(4), 2)...)
	in = append(in, rawFrame(rawHeader(999, 0, 3, false))...)
	in = append(in, requestFrame(metadataReq(4), 4)...)
	c.write(in)
	for _, corr := range []int32{1, 2} {
		resp := kmsg.NewPtrMetadataResponse()
		resp.Version = 4
		c.expectCorr(resp, corr)
	}
	c.expectClosed()
}

// A client that hangs up between frames is routine: no warning.
func TestClientHangUpIsQuiet(t *testing.T) {
	s, logs := startServer(t, DefaultConfig(), metadataHandler(), testTable())
	c := dial(t, s)
	c.apiVersions(3, 1)
	c.nc.Close()
	logs.waitLines(t, 1, "DEBUG", "client closed the connection")
	if got := append(logs.lines("WARN"), logs.lines("ERROR")...); len(got) != 0 {
		t.Fatalf("unexpected lines: %q", got)
	}
}
