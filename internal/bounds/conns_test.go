package bounds

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/internal/harness"
)

// TestConnectionsCannotStarveFiles starts `weir serve` at an open-file
// limit of 1024 with max.connections at its default, derived from that
// limit (384), and opens 1100 connections: the connections past the limit
// are closed at once, the broker keeps the descriptors its own files
// need, and once a few clients leave, CreateTopics of 100 partitions and
// a produce-and-consume round trip work. Before max.connections existed
// the accepts and then the metadata log ran out of descriptors (EMFILE).
func TestConnectionsCannotStarveFiles(t *testing.T) {
	const limit, conns, want = 1024, 1100, 384
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Max < conns+64 {
		t.Skipf("the open-file limit (%d, %v) leaves no room for %d connections", rl.Max, err, conns)
	}
	addr := harness.FreeAddr(t)
	weir := harness.MustBuildWeir(t)
	p := harness.Start(t, harness.Options{
		Path: "/bin/sh",
		Args: []string{"-c", fmt.Sprintf(`ulimit -n %d && exec "$@"`, limit), "sh", weir, "serve", "--data", t.TempDir(), "--listen", addr},
		Name: "weir-serve", ReadyLine: `weir serving node \d+ on`,
	})
	if !strings.Contains(p.Stderr(), fmt.Sprintf("max.connections=%d", want)) {
		t.Fatalf("start-up does not log max.connections=%d:\n%s", want, p.Stderr())
	}

	// Every connection sends ApiVersions; those past the limit read EOF.
	open := make([]net.Conn, 0, conns)
	refused := 0
	for range conns {
		nc := dialRaw(t, addr)
		req := kmsg.NewPtrApiVersionsRequest()
		writeRaw(t, nc, req, 1)
		if _, err := readRawFrameWithin(nc, 20*time.Second); err != nil {
			if !errors.Is(err, io.EOF) && !isReset(err) {
				t.Fatalf("connection %d: %v", len(open)+refused, err)
			}
			refused++
			nc.Close()
			continue
		}
		open = append(open, nc)
	}
	if len(open) != want || refused != conns-want {
		t.Fatalf("%d connections served and %d refused, want %d and %d", len(open), refused, want, conns-want)
	}
	if _, err := p.WaitForLine(t.Context(), "refusing connection"); err != nil {
		t.Fatal(err)
	}

	// Room for an ordinary client again.
	for _, nc := range open[:8] {
		nc.Close()
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var cl *kgo.Client
	for {
		cl = newClient(t, addr)
		if err := cl.Ping(ctx); err == nil {
			break
		} else if ctx.Err() != nil {
			t.Fatalf("no connection slot freed: %v", err)
		}
		cl.Close()
	}
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, 100, 1, nil, "many")
	if err != nil || resp.Err != nil {
		t.Fatalf("CreateTopics with the connections full: %v %v", err, resp.Err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "many", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	for _, nc := range open[8:] {
		nc.Close()
	}
	roundTrips(ctx, t, addr, 1)
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}
