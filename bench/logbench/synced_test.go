package logbench_test

import (
	"testing"

	"github.com/weirmq/weir/bench/logbench"
)

func TestSyncedRoundTrip(t *testing.T) {
	s := logbench.Synced{Partition: 3, FirstOffset: 100, LastOffset: 115, Writer: 11, Seq: 6}
	line := s.String()
	if line != "synced 3 100 115 11 6" {
		t.Errorf("line %q", line)
	}
	for _, l := range []string{line, line + "\n", line + "\r\n"} {
		if got, err := logbench.ParseSynced(l); err != nil || got != s {
			t.Errorf("ParseSynced(%q) = %+v, %v; want %+v", l, got, err, s)
		}
	}
}

func TestParseSyncedRejects(t *testing.T) {
	for _, line := range []string{
		"", "ready dir=x", "synced 1 2 3 4", "synced 1 2 3 4 5 6", "synced 1 5 3 4 5", "synced -1 2 3 4 5",
		"synced 1 2 3 x 5", "synced 4294967296 2 3 4 5", "summary batches=1",
	} {
		if s, err := logbench.ParseSynced(line); err == nil {
			t.Errorf("ParseSynced(%q) = %+v, want an error", line, s)
		}
	}
}
