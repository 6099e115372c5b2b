package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/weirmq/weir/internal/harness"
)

// quorumStatusRE matches `weir metadata-quorum describe --status` of a
// healthy single-node weir: node 1 leads, is the one voter, and the log is
// writable.
var quorumStatusRE = regexp.MustCompile(`^ClusterId:              [A-Za-z0-9_-]{22}
LeaderId:               1
LeaderEpoch:            [1-9]\d*
HighWatermark:          ([1-9]\d*)
MaxFollowerLag:         0
MaxFollowerLagTimeMs:   0
CurrentVoters:          \[\{"id": 1, "directoryId": null, "endpoints": \["PLAINTEXT://(\S+)"\]\}\]
CurrentObservers:       \[\]
MetadataLogWritable:    true
$`)

// The command against a running `weir serve`: --status mirrors
// kafka-metadata-quorum.sh's fields, --replication its table, with the
// leader's log end offset equal to the high watermark.
func TestMetadataQuorumDescribe(t *testing.T) {
	addr := harness.FreeAddr(t)
	startServe(t, "--data", t.TempDir(), "--listen", addr)

	out := mustRun(t, "metadata-quorum", "describe", "--status", "--brokers", addr)
	m := quorumStatusRE.FindStringSubmatch(out)
	if m == nil || m[2] != addr {
		t.Fatalf("--status printed:\n%s", out)
	}
	hw := m[1]
	out = mustRun(t, "metadata-quorum", "describe", "--replication", "--human-readable", "--brokers", addr)
	rows := tableRows(out)
	want := [][]string{
		{"NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp", "LastCaughtUpTimestamp", "Status"},
		{"1", "AAAAAAAAAAAAAAAAAAAAAA", hw, "0", "*", "ms", "ago", "*", "ms", "ago", "Leader"},
		{"MetadataLogWritable:", "true"},
	}
	if len(rows) != len(want) {
		t.Fatalf("--replication printed:\n%s", out)
	}
	for i := range want {
		if len(rows[i]) != len(want[i]) {
			t.Fatalf("--replication row %d %q, want %q", i, rows[i], want[i])
		}
		for j := range want[i] {
			if want[i][j] != "*" && rows[i][j] != want[i][j] {
				t.Fatalf("--replication row %d %q, want %q", i, rows[i], want[i])
			}
		}
	}

	code, _, stderr := runCmd(t, "metadata-quorum", "describe", "--brokers", addr)
	if code != 2 || !strings.Contains(stderr, "give one of --status and --replication") {
		t.Fatalf("describe without a mode: exit %d, stderr %q", code, stderr)
	}
}
