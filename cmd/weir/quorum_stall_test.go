package main

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/internal/harness"
)

// stallLine is what a node logs when its metadata quorum meets a write it
// cannot make: today's line, or the one of a quorum that stops for good.
const stallLine = `metadata quorum (cannot write|stopped)`

// createTopicErr creates topic name through cl's existing connection and
// returns its error code and message.
func createTopicErr(ctx context.Context, t *testing.T, cl *kgo.Client, name string, timeoutMs int32) (int16, string) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = timeoutMs
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	msg := ""
	if m := resp.Topics[0].ErrorMessage; m != nil {
		msg = *m
	}
	return resp.Topics[0].ErrorCode, msg
}

// mustCreateTopic fails the test unless name is created.
func mustCreateTopic(ctx context.Context, t *testing.T, cl *kgo.Client, name string) {
	t.Helper()
	if code, msg := createTopicErr(ctx, t, cl, name, 30000); code != 0 {
		t.Fatalf("create %s: %v (%s)", name, kerr.ErrorForCode(code), msg)
	}
}

// stallClient returns a client of addr whose connection to the broker is
// open (a first topic created), so it can still talk once the broker can
// accept no more connections.
func stallClient(ctx context.Context, t *testing.T, addr string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestTimeoutOverhead(time.Minute), kgo.ConnIdleTimeout(10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	mustCreateTopic(ctx, t, cl, "before")
	return cl
}

// TestQuorumResumesAfterFileLimit runs `weir serve` at a file limit of
// 200, opens idle connections until the broker has no descriptor left,
// and creates a topic through a connection opened before: the quorum's
// metadata write fails with EMFILE. Once the idle connections close, the
// quorum resumes by itself and CreateTopics works again, without a
// restart. (The node used to stop its quorum for good on the first
// failed write.)
func TestQuorumResumesAfterFileLimit(t *testing.T) {
	addr := harness.FreeAddr(t)
	// max.connections far above the file limit: by default it is derived
	// from the limit and would refuse the idle connections before they
	// take every descriptor; this test needs the descriptors gone.
	props := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(props, []byte("max.connections=100000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := harness.Start(t, harness.Options{
		Args: []string{"serve", "--config", props, "--data", t.TempDir(), "--listen", addr}, Name: "weir-serve",
		ReadyLine: `weir serving node \d+ on`, NoFileLimit: 200,
	})
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cl := stallClient(ctx, t, addr)

	mark := p.Mark()
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range 400 { // far more than the child's limit: accepts fail with EMFILE
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			break // the backlog is full: no descriptor for more, either
		}
		idle = append(idle, c)
	}
	if _, err := p.WaitForLineAfter(ctx, mark, `accept failed`); err != nil {
		t.Fatalf("the broker never ran out of descriptors: %v", err)
	}
	// The topic's entry may still be applied: when its log append was
	// durable and only the hard state (the commit index) could not be
	// written, raft may apply it. The write that failed stalls the quorum.
	_, _ = createTopicErr(ctx, t, cl, "during", 1000)
	if _, err := p.WaitForLineAfter(ctx, mark, stallLine); err != nil {
		t.Fatal(err)
	}
	for _, c := range idle {
		c.Close()
	}
	idle = nil
	// The recovery is looked for after the same mark as the stall: it may
	// come before the descriptors above are closed (one a failed open
	// gave back is enough), and it is logged only after a stall.
	if _, err := p.WaitForLineAfter(ctx, mark, `metadata quorum writes again`); err != nil {
		t.Fatal(err)
	}
	mustCreateTopic(ctx, t, cl, "after")
}

// TestQuorumResumesAfterDiskFull runs `weir serve` on a small tmpfs,
// fills it, and creates a topic: a metadata write fails with ENOSPC, the
// quorum refuses changes with the retriable REQUEST_TIMED_OUT, and once
// the filler is removed it resumes by itself and CreateTopics works
// again, without a restart. It needs root (mount); it is skipped
// otherwise.
func TestQuorumResumesAfterDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	addr := harness.FreeAddr(t)
	p := harness.Start(t, harness.Options{
		Args: []string{"serve", "--data", filepath.Join(mnt, "data"), "--listen", addr}, Name: "weir-serve",
		ReadyLine: `weir serving node \d+ on`,
	})
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cl := stallClient(ctx, t, addr)

	filler := filepath.Join(mnt, "filler")
	fill(t, filler)
	mark := p.Mark()
	// As above: the entry may apply if only the hard-state write failed.
	_, _ = createTopicErr(ctx, t, cl, "during", 1000)
	if _, err := p.WaitForLineAfter(ctx, mark, stallLine); err != nil {
		t.Fatal(err)
	}
	code, msg := createTopicErr(ctx, t, cl, "refused", 30000)
	if code != kerr.RequestTimedOut.Code || !strings.Contains(msg, "no space left on device") {
		t.Fatalf("create on a full disk: %v (%s), want REQUEST_TIMED_OUT naming the cause", kerr.ErrorForCode(code), msg)
	}
	// weir metadata-quorum shows it: the status, then not writable, why
	// and since when, and fails.
	exit, stdout, stderr := runCmd(t, "metadata-quorum", "describe", "--status", "--brokers", addr)
	if exit != 1 || !strings.Contains(stdout, "LeaderId:               1\n") ||
		!regexp.MustCompile(`MetadataLogWritable:    false: The metadata log cannot be written since \S+ \(no space left on device\)`).MatchString(stdout) ||
		!strings.Contains(stderr, "the metadata log cannot be written") {
		t.Fatalf("metadata-quorum on a full disk: exit %d\nstdout:\n%s\nstderr:\n%s", exit, stdout, stderr)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	mark = p.Mark()
	if _, err := p.WaitForLineAfter(ctx, mark, `metadata quorum writes again`); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, "metadata-quorum", "describe", "--status", "--brokers", addr); !strings.Contains(out, "MetadataLogWritable:    true\n") {
		t.Fatalf("metadata-quorum after space is back:\n%s", out)
	}
	mustCreateTopic(ctx, t, cl, "after")
}

// fill writes path until the file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", path, err)
			}
			break
		}
	}
	// The last pages: small writes until not a byte fits.
	for _, err := f.Write(buf[:4096]); err == nil; _, err = f.Write(buf[:4096]) {
	}
	for _, err := f.Write(buf[:1]); err == nil; _, err = f.Write(buf[:1]) {
	}
}
