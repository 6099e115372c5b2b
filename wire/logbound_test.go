package wire

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// TestLogThrottle steps the throttle with an injected clock: the first
// occurrence is logged, the rest of an interval counted, and the next line
// after the interval carries the count.
func TestLogThrottle(t *testing.T) {
	th := NewLogThrottle(time.Second)
	t0 := time.Unix(1000, 0)
	steps := []struct {
		at         time.Duration
		log        bool
		suppressed int64
	}{
		{0, true, 0},
		{10 * time.Millisecond, false, 0},
		{500 * time.Millisecond, false, 0},
		{999 * time.Millisecond, false, 0},
		{time.Second, true, 3},
		{1500 * time.Millisecond, false, 0},
		{5 * time.Second, true, 1},
		{7 * time.Second, true, 0},
	}
	for i, s := range steps {
		log, n := th.Note(t0.Add(s.at))
		if log != s.log || n != s.suppressed {
			t.Errorf("step %d at %v: log %v suppressed %d, want %v %d", i, s.at, log, n, s.log, s.suppressed)
		}
	}
}

// TestBoundedListLogLine checks that a log line of a huge list of names
// holds only the first logListMax and a count of the rest.
func TestBoundedListLogLine(t *testing.T) {
	names := make([]string, 100_000)
	for i := range names {
		names[i] = fmt.Sprintf("topic-with-a-rather-long-name-%06d", i)
	}
	var out bytes.Buffer
	slog.New(slog.NewTextHandler(&out, nil)).Info("create topics refused", "topics", boundedList(names))
	line := out.String()
	if len(line) > 1000 || !strings.Contains(line, "topic-with-a-rather-long-name-000009") ||
		strings.Contains(line, "topic-with-a-rather-long-name-000010") || !strings.Contains(line, "... and 99990 more") {
		t.Fatalf("%d bytes: %.400s", len(line), line)
	}
	var small bytes.Buffer
	slog.New(slog.NewTextHandler(&small, nil)).Info("x", "topics", boundedList(names[:3]))
	if strings.Contains(small.String(), "more") || !strings.Contains(small.String(), "000002") {
		t.Fatalf("a short list changed: %s", small.String())
	}
}

// TestBadInputWarningsThrottled loops a client that connects, sends two
// bytes and closes: every connection is closed and counted, but the log
// gets one warning for the interval, not one per connection.
func TestBadInputWarningsThrottled(t *testing.T) {
	s, logs := startServer(t, DefaultConfig(), metadataHandler(), testTable())
	s.rejects = LogThrottle{interval: time.Hour} // the whole test is one interval
	const n = 50
	for range n {
		bad := dial(t, s)
		bad.write([]byte{0, 0})
		bad.nc.(*net.TCPConn).CloseWrite()
		bad.expectClosed()
	}
	deadline := time.Now().Add(ioTimeout)
	for s.Stats().BadInput != n {
		if time.Now().After(deadline) {
			t.Fatalf("Stats.BadInput %d, want %d", s.Stats().BadInput, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := logs.lines("WARN", "closing connection on bad request"); len(got) != 1 {
		t.Fatalf("%d warning lines for %d bad connections, want 1:\n%s", len(got), n, strings.Join(got, "\n"))
	}
	// The next line after the interval carries the count.
	s.rejects.mu.Lock()
	s.rejects.lastLogged = s.rejects.lastLogged.Add(-time.Hour)
	s.rejects.mu.Unlock()
	bad := dial(t, s)
	bad.write([]byte{0, 0})
	bad.nc.(*net.TCPConn).CloseWrite()
	bad.expectClosed()
	logs.waitLines(t, 1, "WARN", "closing connection on bad request", fmt.Sprintf("suppressed_since_last=%d", n-1))
}
