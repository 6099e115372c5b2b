package log

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeleteLogs deletes some of a manager's logs in one step and checks
// that their directories and checkpoint entries are gone, that the other
// logs keep their data across a reopen, and that a partition created again
// under a deleted one's name starts empty at offset 0.
func TestDeleteLogs(t *testing.T) {
	dir := t.TempDir()
	m, err := OpenManager(ManagerConfig{Dir: dir, NoBackground: true})
	if err != nil {
		t.Fatalf("open manager: %v", err)
	}
	const parts = 6
	tp := func(topic string, p int) TopicPartition { return TopicPartition{Topic: topic, Partition: int32(p)} }
	for _, topic := range []string{"gone", "kept"} {
		for p := range parts {
			l, err := m.OpenLog(tp(topic, p), smallConfig(), [16]byte{})
			if err != nil {
				t.Fatalf("open %s: %v", tp(topic, p), err)
			}
			for i := range 20 {
				if _, err := l.Append(makeBatch(t, i*5, 5, 1000, 100), AppendOptions{AssignOffsets: true}); err != nil {
					t.Fatalf("append to %s: %v", tp(topic, p), err)
				}
			}
		}
	}
	if err := m.Checkpoint(); err != nil {
		t.Fatalf("checkpoint: %v", err)
	}
	var gone []TopicPartition
	for p := range parts {
		gone = append(gone, tp("gone", p))
	}
	// A partition that never had a log is not an error.
	gone = append(gone, tp("never", 0))
	if err := m.DeleteLogs(gone); err != nil {
		t.Fatalf("DeleteLogs: %v", err)
	}
	for _, g := range gone {
		if _, ok := m.Log(g); ok {
			t.Errorf("%s still open after DeleteLogs", g)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "gone-") {
			t.Errorf("directory %s left after DeleteLogs", e.Name())
		}
	}
	for _, name := range []string{recoveryPointFile, logStartOffsetFile, cleanerOffsetFile} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		if strings.Contains(string(data), "gone ") {
			t.Errorf("%s still names a deleted partition:\n%s", name, data)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	m, err = OpenManager(ManagerConfig{Dir: dir, NoBackground: true})
	if err != nil {
		t.Fatalf("reopen manager: %v", err)
	}
	defer func() {
		if err := m.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	for p := range parts {
		l, err := m.OpenLog(tp("kept", p), smallConfig(), [16]byte{})
		if err != nil {
			t.Fatalf("reopen %s: %v", tp("kept", p), err)
		}
		if got := l.LogEndOffset(); got != 100 {
			t.Errorf("%s: log end %d after the reopen, want 100", tp("kept", p), got)
		}
		again, err := m.OpenLog(tp("gone", p), smallConfig(), [16]byte{})
		if err != nil {
			t.Fatalf("create %s again: %v", tp("gone", p), err)
		}
		if start, end := again.LogStartOffset(), again.LogEndOffset(); start != 0 || end != 0 {
			t.Errorf("%s created again: offsets [%d, %d), want an empty log at 0", tp("gone", p), start, end)
		}
	}
}
