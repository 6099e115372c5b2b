package wire

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"
)

func TestConnLimitsDecide(t *testing.T) {
	a, b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	l := newConnLimits(&Config{MaxConnections: 3, MaxConnectionsPerIP: 1,
		MaxConnectionsPerIPOverrides: map[netip.Addr]int{b: 2}})
	mustAdmit := func(ip netip.Addr, ok bool) {
		t.Helper()
		err := l.admit(ip)
		if (err == nil) != ok {
			t.Fatalf("admit %s: %v, want ok=%v", ip, err, ok)
		}
		if err != nil && !errors.Is(err, errTooManyConnections) {
			t.Fatalf("admit %s: %v does not wrap errTooManyConnections", ip, err)
		}
	}
	mustAdmit(a, true)
	mustAdmit(a, false) // per ip
	mustAdmit(b, true)
	mustAdmit(b, true) // the override allows two
	mustAdmit(b, false)
	mustAdmit(netip.MustParseAddr("10.0.0.3"), false) // max.connections
	l.release(a)
	mustAdmit(a, true)
	l.release(a)
	l.release(b)
	l.release(b)
	if l.total != 0 || len(l.byIP) != 0 {
		t.Fatalf("after releasing all: total %d, by ip %v", l.total, l.byIP)
	}
}

// A connection over max.connections or max.connections.per.ip is closed at
// once and counted; one refusal line is logged per interval however many
// are refused; closing a connection makes room again.
func TestConnectionLimitsRefuse(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxConnections = 2
	s, logs := startServer(t, cfg, metadataHandler(), testTable())
	c1, c2 := dial(t, s), dial(t, s)
	c1.apiVersions(3, 1)
	c2.apiVersions(3, 1)
	for range 5 {
		dial(t, s).expectClosed()
	}
	if st := s.Stats(); st.ConnectionsRefused != 5 || st.ConnectionsOpen != 2 {
		t.Fatalf("refused %d open %d, want 5 and 2", st.ConnectionsRefused, st.ConnectionsOpen)
	}
	logs.waitLines(t, 1, "WARN", "refusing connection", "max.connections 2")
	c1.nc.Close()
	waitFor(t, func() bool { return s.Stats().ConnectionsOpen == 1 })
	dial(t, s).apiVersions(3, 2)
}

func TestConnectionLimitsPerIP(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxConnectionsPerIP = 0
	cfg.MaxConnectionsPerIPOverrides = map[netip.Addr]int{netip.MustParseAddr("127.0.0.1"): 1}
	s, logs := startServer(t, cfg, metadataHandler(), testTable())
	dial(t, s).apiVersions(3, 1)
	dial(t, s).expectClosed()
	logs.waitLines(t, 1, "WARN", "refusing connection", "max.connections.per.ip 1")
	if st := s.Stats(); st.ConnectionsRefused != 1 {
		t.Fatalf("refused %d, want 1", st.ConnectionsRefused)
	}
}

// failingListener fails its first accepts with EMFILE, as a process out of
// file descriptors does, then accepts from the real listener.
type failingListener struct {
	net.Listener
	fails chan struct{}
}

func (l *failingListener) Accept() (net.Conn, error) {
	select {
	case <-l.fails:
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}
	default:
		return l.Listener.Accept()
	}
}

// EMFILE from accept neither stops the server nor floods the log: the
// accepts are retried with a backoff and one line is logged per interval.
func TestAcceptSurvivesEMFILE(t *testing.T) {
	logs := &logBuffer{}
	cfg := DefaultConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := newServer(cfg, metadataHandler(), testTable())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const fails = 5
	fl := &failingListener{Listener: ln, fails: make(chan struct{}, fails)}
	for range fails {
		fl.fails <- struct{}{}
	}
	if err := s.Serve(fl); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := dial(t, s)
	c.nc.SetDeadline(time.Now().Add(ioTimeout))
	c.apiVersions(3, 1)
	if st := s.Stats(); st.AcceptErrors != fails {
		t.Fatalf("%d accept errors counted, want %d", st.AcceptErrors, fails)
	}
	if got := logs.lines("WARN", "accept failed"); len(got) != 1 {
		t.Fatalf("%d accept-failure lines for %d failures, want 1: %q", len(got), fails, got)
	}
}
