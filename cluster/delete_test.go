package cluster

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirmq/weir/log"
)

// TestDeleteAndRecreateTopic produces to every partition of a topic,
// deletes it, creates a topic of the same name again and checks, before
// and after a restart, that the new topic starts empty at offset 0 and
// that no directory of the deleted one is left; then the new topic takes
// records as usual.
func TestDeleteAndRecreateTopic(t *testing.T) {
	dir := t.TempDir()
	props := map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0"}
	n, sys := testNode(t, dir, props)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic, parts = "orders", 40
	adm := adminOf(t, n)
	if _, err := adm.CreateTopic(ctx, parts, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	produce := func(n *Node, per int) {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr().String()), kgo.DefaultProduceTopic(topic),
			kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		var rs []*kgo.Record
		for p := range parts {
			for i := range per {
				rs = append(rs, &kgo.Record{Partition: int32(p), Value: []byte{byte(i)}})
			}
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	ends := func(n *Node, want int64, when string) {
		t.Helper()
		offs, err := adminOf(t, n).ListEndOffsets(ctx, topic)
		if err != nil {
			t.Fatalf("%s: list end offsets: %v", when, err)
		}
		got := 0
		offs.Each(func(o kadm.ListedOffset) {
			got++
			if o.Err != nil || o.Offset != want {
				t.Errorf("%s: partition %d ends at %d (%v), want %d", when, o.Partition, o.Offset, o.Err, want)
			}
		})
		if got != parts {
			t.Errorf("%s: %d partitions listed, want %d", when, got, parts)
		}
	}
	produce(n, 3)
	ends(n, 3, "before the delete")
	if _, err := adm.DeleteTopic(ctx, topic); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := adm.CreateTopic(ctx, parts, 1, nil, topic); err != nil {
		t.Fatalf("create again: %v", err)
	}
	ends(n, 0, "created again")
	leftovers := func(when string) {
		t.Helper()
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), "-delete") {
				t.Errorf("%s: %s left in %s", when, e.Name(), filepath.Base(dir))
			}
		}
	}
	leftovers("after the delete")
	stopNode(t, n, sys)

	n, sys = testNode(t, dir, props)
	defer stopNode(t, n, sys)
	ends(n, 0, "after the restart")
	leftovers("after the restart")
	produce(n, 2)
	ends(n, 2, "after producing again")
}

// TestStrayLogRemovedAtStart puts back, while the node is down, the
// directory of a partition whose topic was deleted: what a crash between
// the deletion's commit and the directory's removal leaves. The node must
// set it aside (renamed "-stray", not deleted) when it starts, so that a
// topic created again under the name starts empty instead of serving the
// deleted topic's records.
func TestStrayLogRemovedAtStart(t *testing.T) {
	dir := t.TempDir()
	props := map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0"}
	n, sys := testNode(t, dir, props)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic = "orders"
	adm := adminOf(t, n)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr().String()), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("a")}, &kgo.Record{Value: []byte("b")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	partDir := filepath.Join(dir, topic+"-0")
	saved := filepath.Join(t.TempDir(), "saved")
	if err := os.CopyFS(saved, os.DirFS(partDir)); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.DeleteTopic(ctx, topic); err != nil {
		t.Fatalf("delete: %v", err)
	}
	stopNode(t, n, sys)
	if err := os.CopyFS(partDir, os.DirFS(saved)); err != nil {
		t.Fatal(err)
	}

	n, sys = testNode(t, dir, props)
	defer stopNode(t, n, sys)
	if _, err := os.Stat(partDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the deleted topic's directory is still there after the start: %v", err)
	}
	if strays, _ := filepath.Glob(partDir + ".*-stray"); len(strays) != 1 {
		t.Errorf("set-aside directories %v, want one", strays)
	}
	adm = adminOf(t, n)
	createdAgainEmpty(ctx, t, adm, topic)
}

// TestRecreateAfterFailedDelete fails the removal of a deleted topic's
// directory (an I/O error on rename): the deletion still stands, and a
// topic created again under the name must start empty rather than open
// the directory the deleted topic left.
func TestRecreateAfterFailedDelete(t *testing.T) {
	mem := log.NewMemFS()
	n, sys := plStartNode(t, mem)
	defer stopNode(t, n, sys)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic = "orders"
	adm := adminOf(t, n)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr().String()), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("a")}, &kgo.Record{Value: []byte("b")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	mem.SetFaults(func(op, path string) error {
		if op == "rename" && path == "/data/"+topic+"-0" {
			return syscall.EIO
		}
		return nil
	})
	if _, err := adm.DeleteTopic(ctx, topic); err != nil {
		t.Fatalf("delete: %v", err)
	}
	mem.SetFaults(nil)
	if _, err := mem.Stat("/data/" + topic + "-0"); err != nil {
		t.Fatalf("the failed removal should have left the directory: %v", err)
	}
	createdAgainEmpty(ctx, t, adm, topic)
}

// TestFreshNodeKeepsForeignDirs starts a node on a data directory with no
// metadata of weir's but a directory named like a partition: with no
// history to judge it by, the node leaves it alone.
func TestFreshNodeKeepsForeignDirs(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign-0")
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "00000000000000000000.log"), []byte("not weir's"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, sys := testNode(t, dir, nil)
	stopNode(t, n, sys)
	if data, err := os.ReadFile(filepath.Join(foreign, "00000000000000000000.log")); err != nil || string(data) != "not weir's" {
		t.Fatalf("the foreign directory was touched: %q, %v", data, err)
	}
}

// createdAgainEmpty creates topic (one partition) again and checks that it
// starts empty, not with the deleted topic's records.
func createdAgainEmpty(ctx context.Context, t *testing.T, adm *kadm.Client, topic string) {
	t.Helper()
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatalf("create again: %v", err)
	}
	offs, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup(topic, 0); o.Err != nil || o.Offset != 0 {
		t.Fatalf("topic created again ends at %d (%v), want 0: it serves the deleted topic's records", o.Offset, o.Err)
	}
}
