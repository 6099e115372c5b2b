package main

import (
	"encoding/json"
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

	t.Run("json", func(t *testing.T) {
		var st struct {
			ClusterID            string `json:"cluster_id"`
			LeaderID             int32  `json:"leader_id"`
			LeaderEpoch          int32  `json:"leader_epoch"`
			HighWatermark        int64  `json:"high_watermark"`
			MaxFollowerLag       int64  `json:"max_follower_lag"`
			MaxFollowerLagTimeMs int64  `json:"max_follower_lag_time_ms"`
			CurrentVoters        []struct {
				ID          int32    `json:"id"`
				DirectoryID *string  `json:"directory_id"`
				Endpoints   []string `json:"endpoints"`
			} `json:"current_voters"`
			CurrentObservers    []json.RawMessage `json:"current_observers"`
			MetadataLogWritable bool              `json:"metadata_log_writable"`
			MetadataLogError    string            `json:"metadata_log_error"`
		}
		decodeJSON(t, mustRun(t, "metadata-quorum", "describe", "--status", "--format", "json", "--bootstrap-server", addr), &st)
		if len(st.ClusterID) != 22 || st.LeaderID != 1 || st.LeaderEpoch < 1 || st.HighWatermark < 1 || st.MaxFollowerLag != 0 ||
			st.MaxFollowerLagTimeMs != 0 || len(st.CurrentVoters) != 1 || st.CurrentObservers == nil || len(st.CurrentObservers) != 0 ||
			!st.MetadataLogWritable || st.MetadataLogError != "" {
			t.Fatalf("--status json: %+v", st)
		}
		if v := st.CurrentVoters[0]; v.ID != 1 || v.DirectoryID != nil || len(v.Endpoints) != 1 || v.Endpoints[0] != "PLAINTEXT://"+addr {
			t.Errorf("voter: %+v", v)
		}
		var rep struct {
			Replicas []struct {
				NodeID                int32  `json:"node_id"`
				DirectoryID           string `json:"directory_id"`
				LogEndOffset          int64  `json:"log_end_offset"`
				Lag                   int64  `json:"lag"`
				LastFetchTimestamp    int64  `json:"last_fetch_timestamp"`
				LastCaughtUpTimestamp int64  `json:"last_caught_up_timestamp"`
				Status                string `json:"status"`
			} `json:"replicas"`
			MetadataLogWritable bool   `json:"metadata_log_writable"`
			MetadataLogError    string `json:"metadata_log_error"`
		}
		decodeJSON(t, mustRun(t, "metadata-quorum", "describe", "--replication", "--format", "json", "--bootstrap-server", addr), &rep)
		if len(rep.Replicas) != 1 || !rep.MetadataLogWritable {
			t.Fatalf("--replication json: %+v", rep)
		}
		if r := rep.Replicas[0]; r.NodeID != 1 || r.DirectoryID != "AAAAAAAAAAAAAAAAAAAAAA" || r.LogEndOffset < st.HighWatermark ||
			r.Lag != 0 || r.LastFetchTimestamp <= 0 || r.LastCaughtUpTimestamp <= 0 || r.Status != "Leader" {
			t.Errorf("leader row: %+v", r)
		}
		mustFail(t, 2, "metadata-quorum", "describe", "--replication", "--human-readable", "--format", "json", "--brokers", addr)
		mustFail(t, 2, "metadata-quorum", "describe", "--status", "--format", "csv", "--brokers", addr)
	})

	code, _, stderr := runCmd(t, "metadata-quorum", "describe", "--brokers", addr)
	if code != 2 || !strings.Contains(stderr, "give one of --status and --replication") {
		t.Fatalf("describe without a mode: exit %d, stderr %q", code, stderr)
	}
}
