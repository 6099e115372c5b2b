package quorum

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirmq/weir/cluster/metadata"
)

// TestAsyncWritesLeaveTheCallerFree blocks the metadata log's fsync: with
// Async, Propose, Tick and HandleReady still return at once, the proposal
// is neither applied nor reported while its entry is not durable, and once
// the fsync completes the wake comes and the next HandleReady applies it.
func TestAsyncWritesLeaveTheCallerFree(t *testing.T) {
	tn := newTestNode(t, 1, []int32{1})
	tn.settle()
	tn.populate()

	var (
		mu      sync.Mutex
		block   bool
		release = make(chan struct{})
		inSync  = make(chan struct{}, 1)
	)
	tn.mem.SetFaults(func(op, path string) error {
		mu.Lock()
		b := block
		mu.Unlock()
		if b && op == "sync" && strings.HasSuffix(path, ".log") {
			select {
			case inSync <- struct{}{}:
			default:
			}
			<-release
		}
		return nil
	})
	wake := make(chan struct{}, 1)
	tn.n.Async(func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(func() { unblock(); tn.n.Close() }) // before the manager is abandoned

	mu.Lock()
	block = true
	mu.Unlock()
	before := tn.n.Image()
	rec := metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, ResourceName: "orders", Name: "retention.ms", Value: "5000"}
	var applied bool
	if err := tn.n.Propose([]metadata.Record{rec}, func(_ uint64, err error) {
		if err != nil {
			t.Errorf("proposal: %v", err)
		}
		applied = true
	}); err != nil {
		t.Fatal(err)
	}
	returned := make(chan error, 1)
	go func() { _, err := tn.n.HandleReady(); returned <- err }()
	select {
	case err := <-returned:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		unblock()
		t.Fatal("HandleReady waited for the fsync")
	}
	select {
	case <-inSync:
	case <-time.After(30 * time.Second):
		t.Fatal("the entry's fsync never started")
	}
	// The fsync is blocked now; the caller is not.
	for range 50 {
		tn.n.Tick()
		if _, err := tn.n.HandleReady(); err != nil {
			t.Fatal(err)
		}
	}
	if applied || tn.n.Image() != before {
		t.Fatalf("applied %v, image moved %v before the entry was durable", applied, tn.n.Image() != before)
	}

	unblock()
	deadline := time.After(30 * time.Second)
	for !applied {
		select {
		case <-wake:
		case <-deadline:
			t.Fatal("the proposal was never applied after the fsync completed")
		}
		if _, err := tn.n.HandleReady(); err != nil {
			t.Fatal(err)
		}
	}
	if got := tn.n.Image().Config(metadata.TopicResource("orders"))["retention.ms"]; got != "5000" {
		t.Fatalf("retention.ms %q after the write", got)
	}
	if !tn.n.IsLeader() {
		t.Fatal("the single voter lost its leadership while its disk was slow")
	}
}
