package cluster

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/log"
)

// lockedBuffer is a bytes.Buffer safe for concurrent writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), s)
}

// diskFull fails writes and file creations under the metadata log's
// directory with ENOSPC while on.
type diskFull struct {
	mu   sync.Mutex
	on   bool
	hits int
}

func (d *diskFull) set(on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.on = on
}

func (d *diskFull) hook(op, path string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.on || !strings.Contains(path, "__cluster_metadata") || (op != "write" && op != "open") {
		return nil
	}
	d.hits++
	return fmt.Errorf("injected: %w", syscall.ENOSPC)
}

// createTopicCode creates name with a short timeout and returns the
// topic's error code and message.
func createTopicCode(ctx context.Context, t *testing.T, cl *kgo.Client, name string, timeoutMs int32) (int16, string) {
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
	return resp.Topics[0].ErrorCode, deref(resp.Topics[0].ErrorMessage)
}

// clientWithTopic returns a client of n, closed at the test's end, and a
// context of a minute, after creating topic through it.
func clientWithTopic(t *testing.T, n *Node, topic string) (*kgo.Client, context.Context) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	createOneTopic(ctx, t, cl, topic)
	return cl, ctx
}

// waitFor polls cond until it holds or ctx ends.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestMetadataWritesResumeAfterDiskFull fills the disk under the metadata
// log (ENOSPC on every write and file creation there): a CreateTopics
// cannot commit, the node reports the quorum cannot write (one log line,
// MetadataHealth), later metadata changes are refused at once with the
// retriable REQUEST_TIMED_OUT naming the cause, and once space is back the
// quorum resumes by itself: the topic proposed during the stall is created
// and CreateTopics works again, without a restart.
func TestMetadataWritesResumeAfterDiskFull(t *testing.T) {
	mem := log.NewMemFS()
	full := &diskFull{}
	mem.SetFaults(full.hook)
	out := &lockedBuffer{}
	n, sys := startTestNodeLogging(t, map[string]string{"log.dirs": "/data", "listeners": "PLAINTEXT://127.0.0.1:0"}, mem, slog.New(slog.NewTextHandler(out, nil)))
	defer stopNode(t, n, sys)
	cl, ctx := clientWithTopic(t, n, "before")

	full.set(true)
	if code, _ := createTopicCode(ctx, t, cl, "during", 500); code != kerr.RequestTimedOut.Code {
		t.Fatalf("create during a full disk: %v", kerr.ErrorForCode(code))
	}
	waitFor(ctx, t, "the node to report it cannot write", func() bool { return !n.MetadataHealth().Writable })
	if h := n.MetadataHealth(); h.Stopped || h.Cause != "no space left on device" {
		t.Fatalf("health while the disk is full: %+v", h)
	}
	code, msg := createTopicCode(ctx, t, cl, "refused", 30000)
	if code != kerr.RequestTimedOut.Code || !strings.Contains(msg, "no space left on device") {
		t.Fatalf("create while stalled: %v (%s), want REQUEST_TIMED_OUT naming the cause", kerr.ErrorForCode(code), msg)
	}
	// Several retries fail while the disk stays full; one line says so.
	hits := func() int { full.mu.Lock(); defer full.mu.Unlock(); return full.hits }
	h0 := hits()
	waitFor(ctx, t, "retries", func() bool { return hits() >= h0+3 })
	if got := out.count("metadata quorum cannot write"); got != 1 {
		t.Fatalf("%d log lines about the stall, want 1:\n%s", got, out.String())
	}

	full.set(false)
	waitFor(ctx, t, "the quorum to write again", func() bool { return n.MetadataHealth().Writable })
	if _, ok := n.Image().Topic("during"); !ok {
		t.Fatal("the topic proposed during the stall was not created after it")
	}
	createOneTopic(ctx, t, cl, "after")
	if got := out.count("metadata quorum writes again"); got != 1 {
		t.Fatalf("%d log lines about the recovery, want 1", got)
	}
}

// TestMetadataActorAnswersWhileFsyncBlocks blocks every fsync of the
// metadata log: a CreateTopics waits for its entry to be durable, and
// meanwhile the metadata actor still answers (DescribeQuorum goes through
// its mailbox), since the quorum's writes run off it. Once the fsync
// completes the topic is created.
func TestMetadataActorAnswersWhileFsyncBlocks(t *testing.T) {
	mem := log.NewMemFS()
	var mu sync.Mutex
	block := false
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	var waiting atomic.Int32
	mem.SetFaults(func(op, path string) error {
		mu.Lock()
		b := block
		mu.Unlock()
		if b && op == "sync" && strings.Contains(path, "__cluster_metadata") {
			waiting.Add(1)
			<-release
		}
		return nil
	})
	n, sys := startTestNode(t, map[string]string{"log.dirs": "/data", "listeners": "PLAINTEXT://127.0.0.1:0"}, mem)
	defer stopNode(t, n, sys)
	defer unblock()
	cl, ctx := clientWithTopic(t, n, "before")

	mu.Lock()
	block = true
	mu.Unlock()
	created := make(chan int16, 1)
	go func() {
		code, _ := createTopicCode(ctx, t, cl, "slow-disk", 30000)
		created <- code
	}()
	waitFor(ctx, t, "a metadata fsync to block", func() bool { return waiting.Load() > 0 })
	for range 5 {
		qctx, qcancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := n.DescribeQuorum(qctx)
		qcancel()
		if err != nil {
			t.Fatalf("DescribeQuorum while the metadata fsync blocks: %v", err)
		}
	}
	if _, ok := n.Image().Topic("slow-disk"); ok {
		t.Fatal("the topic was applied before its entry was durable")
	}
	unblock()
	if code := <-created; code != 0 {
		t.Fatalf("create after the fsync completed: %v", kerr.ErrorForCode(code))
	}
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
