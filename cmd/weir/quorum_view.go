package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// quorumStatus is `weir metadata-quorum describe --status`: the fields
// kafka-metadata-quorum.sh prints, plus whether the metadata log can be
// written (JSON field names in the tags).
type quorumStatus struct {
	ClusterID     string `json:"cluster_id"`
	LeaderID      int32  `json:"leader_id"`
	LeaderEpoch   int32  `json:"leader_epoch"`
	HighWatermark int64  `json:"high_watermark"`
	// MaxFollowerLag is the leader's log end offset minus the lowest
	// voter's; MaxFollowerLagTimeMs how long that voter has not been caught
	// up (-1 when unknown).
	MaxFollowerLag       int64        `json:"max_follower_lag"`
	MaxFollowerLagTimeMs int64        `json:"max_follower_lag_time_ms"`
	CurrentVoters        []quorumNode `json:"current_voters"`
	CurrentObservers     []quorumNode `json:"current_observers"`
	MetadataLogWritable  bool         `json:"metadata_log_writable"`
	// MetadataLogError is the broker's reason when the log is not writable.
	MetadataLogError string `json:"metadata_log_error,omitempty"`
}

// quorumNode is a voter or observer of quorumStatus.
type quorumNode struct {
	ID int32 `json:"id"`
	// DirectoryID is the replica's directory Uuid, nil when it has none.
	DirectoryID *string  `json:"directory_id"`
	Endpoints   []string `json:"endpoints"`
}

// quorumReplication is `weir metadata-quorum describe --replication`.
type quorumReplication struct {
	Replicas            []quorumReplica `json:"replicas"`
	MetadataLogWritable bool            `json:"metadata_log_writable"`
	MetadataLogError    string          `json:"metadata_log_error,omitempty"`
}

// quorumReplica is one row of quorumReplication: the leader first, then the
// other voters, then the observers. Timestamps are Unix milliseconds, -1
// when unknown.
type quorumReplica struct {
	NodeID                int32  `json:"node_id"`
	DirectoryID           string `json:"directory_id"`
	LogEndOffset          int64  `json:"log_end_offset"`
	Lag                   int64  `json:"lag"`
	LastFetchTimestamp    int64  `json:"last_fetch_timestamp"`
	LastCaughtUpTimestamp int64  `json:"last_caught_up_timestamp"`
	Status                string `json:"status"`
}

// status computes the --status view of q.
func (q *quorumView) status(clusterID string) quorumStatus {
	leader := q.leader()
	lagging := leader
	for _, v := range q.CurrentVoters {
		if v.LogEndOffset < lagging.LogEndOffset {
			lagging = v
		}
	}
	lagMs := int64(-1)
	switch {
	case lagging.ReplicaID == leader.ReplicaID:
		lagMs = 0
	case leader.LastCaughtUpTimestamp >= 0 && lagging.LastCaughtUpTimestamp >= 0:
		lagMs = leader.LastCaughtUpTimestamp - lagging.LastCaughtUpTimestamp
	}
	return quorumStatus{ClusterID: clusterID, LeaderID: q.LeaderID, LeaderEpoch: q.LeaderEpoch,
		HighWatermark: q.HighWatermark, MaxFollowerLag: leader.LogEndOffset - lagging.LogEndOffset,
		MaxFollowerLagTimeMs: lagMs, CurrentVoters: q.quorumNodes(q.CurrentVoters),
		CurrentObservers: q.quorumNodes(q.Observers), MetadataLogWritable: q.storageErr == "",
		MetadataLogError: q.storageErr}
}

// quorumNodes lists replicas with their endpoints.
func (q *quorumView) quorumNodes(rs []kmsg.DescribeQuorumResponseTopicPartitionReplicaState) []quorumNode {
	out := make([]quorumNode, 0, len(rs))
	for _, r := range rs {
		n := quorumNode{ID: r.ReplicaID, Endpoints: []string{}}
		if r.ReplicaDirectoryID != ([16]byte{}) {
			id := directoryID(r.ReplicaDirectoryID)
			n.DirectoryID = &id
		}
		for _, l := range q.nodes[r.ReplicaID] {
			n.Endpoints = append(n.Endpoints, fmt.Sprintf("%s://%s:%d", l.Name, l.Host, l.Port))
		}
		out = append(out, n)
	}
	return out
}

// replication computes the --replication view of q.
func (q *quorumView) replication() quorumReplication {
	leader := q.leader()
	out := quorumReplication{Replicas: []quorumReplica{}, MetadataLogWritable: q.storageErr == "", MetadataLogError: q.storageErr}
	row := func(r kmsg.DescribeQuorumResponseTopicPartitionReplicaState, status string) {
		out.Replicas = append(out.Replicas, quorumReplica{NodeID: r.ReplicaID,
			DirectoryID: directoryID(r.ReplicaDirectoryID), LogEndOffset: r.LogEndOffset,
			Lag: leader.LogEndOffset - r.LogEndOffset, LastFetchTimestamp: r.LastFetchTimestamp,
			LastCaughtUpTimestamp: r.LastCaughtUpTimestamp, Status: status})
	}
	row(leader, "Leader")
	for _, v := range q.CurrentVoters {
		if v.ReplicaID != q.LeaderID {
			row(v, "Follower")
		}
	}
	for _, o := range q.Observers {
		row(o, "Observer")
	}
	return out
}

// writeText prints s as kafka-metadata-quorum.sh describe --status does,
// the nodes as its JSON-like list
// [{"id": 1, "directoryId": null, "endpoints": ["PLAINTEXT://host:port"]}],
// then the MetadataLogWritable line.
func (s quorumStatus) writeText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "ClusterId:              %s\n", s.ClusterID)
	fmt.Fprintf(&b, "LeaderId:               %d\n", s.LeaderID)
	fmt.Fprintf(&b, "LeaderEpoch:            %d\n", s.LeaderEpoch)
	fmt.Fprintf(&b, "HighWatermark:          %d\n", s.HighWatermark)
	fmt.Fprintf(&b, "MaxFollowerLag:         %d\n", s.MaxFollowerLag)
	fmt.Fprintf(&b, "MaxFollowerLagTimeMs:   %d\n", s.MaxFollowerLagTimeMs)
	fmt.Fprintf(&b, "CurrentVoters:          %s\n", nodeList(s.CurrentVoters))
	fmt.Fprintf(&b, "CurrentObservers:       %s\n", nodeList(s.CurrentObservers))
	fmt.Fprintf(&b, "MetadataLogWritable:    %s\n", writableText(s.MetadataLogError))
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// nodeList prints nodes as the Kafka tool does.
func nodeList(ns []quorumNode) string {
	parts := make([]string, 0, len(ns))
	for _, n := range ns {
		dir := "null"
		if n.DirectoryID != nil {
			dir = `"` + *n.DirectoryID + `"`
		}
		s := fmt.Sprintf(`{"id": %d, "directoryId": %s`, n.ID, dir)
		if len(n.Endpoints) > 0 {
			eps := make([]string, len(n.Endpoints))
			for i, e := range n.Endpoints {
				eps[i] = `"` + e + `"`
			}
			s += `, "endpoints": [` + strings.Join(eps, ", ") + "]"
		}
		parts = append(parts, s+"}")
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// writableText is the MetadataLogWritable value.
func writableText(storageErr string) string {
	if storageErr == "" {
		return "true"
	}
	return "false: " + storageErr
}

// writeText prints r as kafka-metadata-quorum.sh describe --replication
// does (times as "N ms ago" when human), then the MetadataLogWritable line.
func (r quorumReplication) writeText(w io.Writer, human bool, now time.Time) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NodeId\tDirectoryId\tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus")
	for _, x := range r.Replicas {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s\t%s\n", x.NodeID, x.DirectoryID, x.LogEndOffset, x.Lag,
			quorumTime(x.LastFetchTimestamp, human, now), quorumTime(x.LastCaughtUpTimestamp, human, now), x.Status)
	}
	_ = tw.Flush() // b is a strings.Builder
	fmt.Fprintf(&b, "MetadataLogWritable:    %s\n", writableText(r.MetadataLogError))
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
