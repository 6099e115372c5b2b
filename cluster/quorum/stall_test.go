package quorum

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/weirmq/weir/cluster/metadata"
)

// stallFault fails the MemFS operations its match selects with err.
type stallFault struct {
	mu    sync.Mutex
	match func(op, path string) bool
	err   error
	hits  int
}

func (f *stallFault) set(err error, match func(op, path string) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err, f.match, f.hits = err, match, 0
}

func (f *stallFault) hook(op, path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.match == nil || !f.match(op, path) {
		return nil
	}
	f.hits++
	return fmt.Errorf("injected: %w", f.err)
}

// TestStallAndResume fails each kind of write the quorum makes with the
// I/O error a full disk, a file limit or a failing disk gives: the
// proposal is neither applied nor reported (unless only the commit index
// failed to be written), HandleReady says ErrStorageUnavailable, Propose
// and Step refuse, and once the fault clears the next HandleReady writes
// what waited, applies it, and a power cut afterwards keeps it.
func TestStallAndResume(t *testing.T) {
	cases := []struct {
		name  string
		err   error
		match func(op, path string) bool
		// applies: the failed write is the hard state of a commit index
		// moved by the durable entry itself, which is applied meanwhile: a
		// committed entry needs no durable commit index to be applied.
		applies bool
	}{
		// ENOSPC on the segment write: the log takes the write back.
		{"enospc-write", syscall.ENOSPC, func(op, p string) bool { return op == "write" && strings.HasSuffix(p, ".log") }, false},
		// EIO on fsync: the log is failed for good and must be reopened.
		{"eio-fsync", syscall.EIO, func(op, p string) bool { return op == "sync" && strings.HasSuffix(p, ".log") }, false},
		// EMFILE creating the quorum-state file.
		{"emfile-quorum-state", syscall.EMFILE, func(op, p string) bool { return op == "open" && strings.Contains(p, quorumStateFile) }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tn := newTestNode(t, 1, []int32{1})
			fault := &stallFault{}
			tn.mem.SetFaults(fault.hook)
			tn.settle()
			tn.populate()
			before := tn.n.Image()

			fault.set(c.err, c.match)
			rec := metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, ResourceName: "orders", Name: "retention.ms", Value: "2000"}
			var doneErr error
			called := false
			if err := tn.n.Propose([]metadata.Record{rec}, func(_ uint64, err error) { doneErr, called = err, true }); err != nil {
				t.Fatal(err)
			}
			for attempt := range 3 {
				_, err := tn.n.HandleReady()
				if !errors.Is(err, ErrStorageUnavailable) || !errors.Is(err, c.err) {
					t.Fatalf("attempt %d: HandleReady: %v, want ErrStorageUnavailable wrapping %v", attempt, err, c.err)
				}
			}
			if fault.hits == 0 || called != c.applies || (tn.n.Image() != before) != c.applies {
				t.Fatalf("while failing: hits %d, proposal reported %v, image moved %v", fault.hits, called, tn.n.Image() != before)
			}
			if tn.n.StorageErr() == nil || !tn.n.HasReady() {
				t.Fatalf("StorageErr %v, HasReady %v while failing", tn.n.StorageErr(), tn.n.HasReady())
			}
			if err := tn.n.Propose([]metadata.Record{rec}, nil); !errors.Is(err, ErrStorageUnavailable) {
				t.Fatalf("Propose while failing: %v", err)
			}

			fault.set(nil, nil)
			tn.settle()
			if !called || doneErr != nil || tn.n.StorageErr() != nil || tn.n.Err() != nil {
				t.Fatalf("after the fault: reported %v (%v), StorageErr %v, Err %v", called, doneErr, tn.n.StorageErr(), tn.n.Err())
			}
			if got := tn.n.Image().Config(metadata.TopicResource("orders"))["retention.ms"]; got != "2000" {
				t.Fatalf("retention.ms %q after the fault cleared", got)
			}
			tn.propose(metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, ResourceName: "orders", Name: "retention.ms", Value: "3000"})
			want := tn.n.Image()
			tn.powerCut()
			tn.settle()
			if got := tn.n.Image(); got.Config(metadata.TopicResource("orders"))["retention.ms"] != "3000" || got.Offset() < want.Offset() {
				t.Fatalf("after a power cut: offset %d (want %d), retention.ms %q", got.Offset(), want.Offset(),
					got.Config(metadata.TopicResource("orders"))["retention.ms"])
			}
		})
	}
}
