package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirmq/weir/internal/harness"
)

// TestServeRefusesLockedDataDir checks the data directory's lock with real
// processes: a second `weir serve` on a directory a running one owns exits
// at once with a message naming the directory; the first keeps serving,
// its records intact, and restarts cleanly (the second wrote no
// clean-shutdown marker over it); and a lock left by a SIGKILLed process
// does not block a restart.
func TestServeRefusesLockedDataDir(t *testing.T) {
	dir := t.TempDir()
	addr := harness.FreeAddr(t)
	first := startServe(t, "--data", dir, "--listen", addr)
	produceLockRecords(t, addr, 0, 20)

	second := harness.Start(t, harness.Options{
		Args: []string{"serve", "--data", dir, "--listen", harness.FreeAddr(t)},
		Name: "weir-serve-second",
	})
	select {
	case <-second.Done():
	case <-time.After(30 * time.Second):
		_, _ = second.Stop(10 * time.Second)
		t.Fatalf("a second weir serve on %s is still running:\n%s", dir, second.Stdout())
	}
	if code, _ := second.Wait(); code == 0 || !strings.Contains(second.Stderr(), "log directory "+dir+" is in use") {
		t.Fatalf("second weir serve on %s: exit %d, stderr:\n%s", dir, code, second.Stderr())
	}
	if _, err := os.Stat(filepath.Join(dir, ".kafka_cleanshutdown")); err == nil {
		t.Fatal("the refused process wrote the clean-shutdown marker while the first runs")
	}

	produceLockRecords(t, addr, 20, 30)
	consumeLockRecords(t, addr, 30)
	if code, err := first.Stop(20 * time.Second); err != nil || code != 0 {
		t.Fatalf("stop first: exit %d, %v\n%s", code, err, first.Stderr())
	}

	again := startServe(t, "--data", dir, "--listen", addr)
	if strings.Contains(again.Stderr(), "truncat") {
		t.Errorf("restart truncated a log:\n%s", again.Stderr())
	}
	consumeLockRecords(t, addr, 30)
	if err := again.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := again.Wait(); err != nil {
		t.Fatal(err)
	}
	afterKill := startServe(t, "--data", dir, "--listen", addr)
	consumeLockRecords(t, addr, 30)
	if _, err := afterKill.Stop(20 * time.Second); err != nil {
		t.Fatal(err)
	}
}

const lockTopic = "locked-dir"

// produceLockRecords produces records from..to-1 (acks=all) to lockTopic.
func produceLockRecords(t *testing.T, addr string, from, to int) {
	t.Helper()
	cl := newTestClient(t, addr, kgo.DefaultProduceTopic(lockTopic), kgo.AllowAutoTopicCreation())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		recs = append(recs, kgo.StringRecord(fmt.Sprintf("record-%d", i)))
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// consumeLockRecords reads lockTopic from the start and checks it holds
// exactly records 0..n-1 in order.
func consumeLockRecords(t *testing.T, addr string, n int) {
	t.Helper()
	cl := newTestClient(t, addr, kgo.ConsumeTopics(lockTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []string
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(got), n, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s-%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	for i, v := range got {
		if want := fmt.Sprintf("record-%d", i); v != want {
			t.Fatalf("record %d is %q, want %q (all: %v)", i, v, want, got)
		}
	}
	if len(got) != n {
		t.Fatalf("consumed %d records, want %d", len(got), n)
	}
}
