package cluster

import (
	"path/filepath"
	"testing"

	"github.com/weirmq/weir/log"
)

// A process that stops cleanly leaves its broker epoch for the next one to
// name as PreviousBrokerEpoch; a crash (a copy of the file system taken
// while the node runs, as a power cut sees it) leaves none, and neither
// does a directory whose clean-shutdown marker is missing.
func TestPreviousBrokerEpoch(t *testing.T) {
	fsys := log.NewMemFS()
	props := map[string]string{"log.dirs": "/data"}
	n, sys := startTestNode(t, props, fsys)
	if n.previousEpoch != -1 {
		t.Errorf("first start: previous epoch %d, want -1", n.previousEpoch)
	}
	first := n.BrokerEpoch()
	stopNode(t, n, sys)

	n, sys = startTestNode(t, props, fsys)
	if n.previousEpoch != first {
		t.Errorf("after a clean stop: previous epoch %d, want %d", n.previousEpoch, first)
	}
	crashed := fsys.Clone()
	stopNode(t, n, sys)

	n, sys = startTestNode(t, props, crashed)
	if n.previousEpoch != -1 {
		t.Errorf("after a crash: previous epoch %d, want -1", n.previousEpoch)
	}
	stopNode(t, n, sys)
}

// takePreviousEpoch trusts the file only with the clean-shutdown marker,
// and removes it either way.
func TestTakePreviousEpoch(t *testing.T) {
	fsys := log.NewMemFS()
	if err := fsys.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		clean bool
		data  string
		want  int64
	}{{true, "42", 42}, {false, "42", -1}, {true, "x", -1}, {true, "0", -1}, {true, "", -1}} {
		if tc.data != "" {
			if err := log.WriteFileAtomic(fsys, filepath.Join("/d", brokerEpochFile), []byte(tc.data)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := takePreviousEpoch(fsys, "/d", tc.clean)
		if err != nil || got != tc.want {
			t.Errorf("clean %v, file %q: %d, %v; want %d", tc.clean, tc.data, got, err, tc.want)
		}
		if _, err := fsys.Stat(filepath.Join("/d", brokerEpochFile)); err == nil {
			t.Errorf("clean %v, file %q: the file stays", tc.clean, tc.data)
		}
	}
	if err := recordEpoch(fsys, "/d", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Stat(filepath.Join("/d", brokerEpochFile)); err == nil {
		t.Error("an unregistered process wrote an epoch")
	}
}
