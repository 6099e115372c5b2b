package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirmq/weir/internal/cli"
)

// quorumCommands is the table of `weir metadata-quorum` commands.
var quorumCommands = []cli.Command{
	{Name: "describe", Summary: "print the metadata quorum's --status or --replication, as kafka-metadata-quorum.sh, and whether its log is writable", Run: runQuorumDescribe},
}

// runMetadataQuorum is `weir metadata-quorum <command>`.
func runMetadataQuorum(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cli.Dispatch(ctx, "metadata-quorum", quorumCommands, args, stdout, stderr)
}

// metadataTopic is the metadata quorum's partition, __cluster_metadata-0.
const metadataTopic = "__cluster_metadata"

// errQuorumUnwritable is returned, after the status is printed, when the
// broker reports that its metadata log cannot be written.
var errQuorumUnwritable = errors.New("the metadata log cannot be written")

// runQuorumDescribe is `weir metadata-quorum describe --status|--replication`.
// It sends DescribeQuorum (kadm has no helper for it) and prints what
// kafka-metadata-quorum.sh prints, plus a MetadataLogWritable line. A
// partition answering KAFKA_STORAGE_ERROR (weir's report of a metadata log
// that cannot be written) is printed in full, then the command fails.
func runQuorumDescribe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const name = "metadata-quorum describe"
	fs := cli.NewFlagSet(name, "--status | --replication [--human-readable] [flags]", stderr)
	conn := cli.AddConnFlags(fs)
	status := fs.Bool("status", false, "print the quorum's leader, epoch, high watermark, follower lag, voters and observers")
	replication := fs.Bool("replication", false, "print each voter's and observer's log end offset, lag and last fetch and caught-up times")
	human := fs.Bool("human-readable", false, "with --replication, print times as 'N ms ago'")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := fs.NoArgs(); err != nil {
		return err
	}
	if *status == *replication {
		return fs.UsageError(errors.New("give one of --status and --replication"))
	}
	if *human && !*replication {
		return fs.UsageError(errors.New("--human-readable goes with --replication"))
	}
	adm, ctx, cancel, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	defer adm.Close()

	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = metadataTopic
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = []kmsg.DescribeQuorumRequestTopic{rt}
	resp, err := req.RequestWith(ctx, adm.Kgo)
	if err != nil {
		return adm.Explain(ctx, "describe quorum", err)
	}
	q, err := quorumFromResponse(resp)
	if err != nil {
		return err
	}
	var clusterID string
	if *status {
		md, err := adm.BrokerMetadata(ctx)
		if err != nil {
			return adm.Explain(ctx, "describe cluster", err)
		}
		clusterID = md.Cluster
	}
	var b strings.Builder
	if *status {
		writeQuorumStatus(&b, clusterID, q)
	} else {
		writeQuorumReplication(&b, q, *human, time.Now())
	}
	fmt.Fprintf(&b, "MetadataLogWritable:    %s\n", q.writable())
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	if q.storageErr != "" {
		return fmt.Errorf("%w: %s", errQuorumUnwritable, q.storageErr)
	}
	return nil
}

// quorumView is a DescribeQuorum answer's partition with its nodes.
type quorumView struct {
	kmsg.DescribeQuorumResponseTopicPartition
	nodes map[int32][]kmsg.DescribeQuorumResponseNodeListener
	// storageErr is set when the partition answered KAFKA_STORAGE_ERROR:
	// the broker's message, or the code's description before v2.
	storageErr string
}

// writable is the MetadataLogWritable value.
func (q *quorumView) writable() string {
	if q.storageErr == "" {
		return "true"
	}
	return "false: " + q.storageErr
}

// quorumFromResponse checks resp as Kafka's admin client does (one topic,
// __cluster_metadata, one partition 0, no error), except that
// KAFKA_STORAGE_ERROR keeps the partition's state.
func quorumFromResponse(resp *kmsg.DescribeQuorumResponse) (*quorumView, error) {
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, fmt.Errorf("describe quorum: %w", cli.WithBrokerMessage(err, deref(resp.ErrorMessage)))
	}
	if len(resp.Topics) != 1 || resp.Topics[0].Topic != metadataTopic || len(resp.Topics[0].Partitions) != 1 ||
		resp.Topics[0].Partitions[0].Partition != 0 {
		return nil, fmt.Errorf("describe quorum: the broker answered for other partitions than %s-0", metadataTopic)
	}
	q := &quorumView{DescribeQuorumResponseTopicPartition: resp.Topics[0].Partitions[0], nodes: map[int32][]kmsg.DescribeQuorumResponseNodeListener{}}
	for _, n := range resp.Nodes {
		q.nodes[n.NodeID] = n.Listeners
	}
	switch err := kerr.ErrorForCode(q.ErrorCode); {
	case err == nil:
	case errors.Is(err, kerr.KafkaStorageError):
		q.storageErr = deref(q.ErrorMessage)
		if q.storageErr == "" {
			q.storageErr = kerr.KafkaStorageError.Message
		}
	default:
		return nil, fmt.Errorf("describe quorum: %w", cli.WithBrokerMessage(err, deref(q.ErrorMessage)))
	}
	return q, nil
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// leader returns the leader's replica state, or one at offset -1.
func (q *quorumView) leader() kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
	for _, v := range q.CurrentVoters {
		if v.ReplicaID == q.LeaderID {
			return v
		}
	}
	s := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
	s.ReplicaID, s.LogEndOffset, s.LastFetchTimestamp, s.LastCaughtUpTimestamp = q.LeaderID, -1, -1, -1
	return s
}

// writeQuorumStatus prints describe --status as kafka-metadata-quorum.sh:
// the follower lag is the leader's end offset minus the lowest voter's.
func writeQuorumStatus(w io.Writer, clusterID string, q *quorumView) {
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
	fmt.Fprintf(w, "ClusterId:              %s\n", clusterID)
	fmt.Fprintf(w, "LeaderId:               %d\n", q.LeaderID)
	fmt.Fprintf(w, "LeaderEpoch:            %d\n", q.LeaderEpoch)
	fmt.Fprintf(w, "HighWatermark:          %d\n", q.HighWatermark)
	fmt.Fprintf(w, "MaxFollowerLag:         %d\n", leader.LogEndOffset-lagging.LogEndOffset)
	fmt.Fprintf(w, "MaxFollowerLagTimeMs:   %d\n", lagMs)
	fmt.Fprintf(w, "CurrentVoters:          %s\n", q.replicaList(q.CurrentVoters))
	fmt.Fprintf(w, "CurrentObservers:       %s\n", q.replicaList(q.Observers))
}

// replicaList prints replicas as the Kafka tool does:
// [{"id": 1, "directoryId": null, "endpoints": ["PLAINTEXT://host:port"]}].
func (q *quorumView) replicaList(rs []kmsg.DescribeQuorumResponseTopicPartitionReplicaState) string {
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		s := fmt.Sprintf(`{"id": %d, "directoryId": %s`, r.ReplicaID, directoryID(r.ReplicaDirectoryID, true))
		if ls := q.nodes[r.ReplicaID]; len(ls) > 0 {
			eps := make([]string, len(ls))
			for i, l := range ls {
				eps[i] = fmt.Sprintf(`"%s://%s:%d"`, l.Name, l.Host, l.Port)
			}
			s += `, "endpoints": [` + strings.Join(eps, ", ") + "]"
		}
		parts = append(parts, s+"}")
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// directoryID prints a replica's directory id as a Kafka Uuid (base64url,
// no padding); the zero id is null in the status's JSON.
func directoryID(id [16]byte, nullIfZero bool) string {
	if id == ([16]byte{}) && nullIfZero {
		return "null"
	}
	s := base64.RawURLEncoding.EncodeToString(id[:])
	if nullIfZero {
		return `"` + s + `"`
	}
	return s
}

// writeQuorumReplication prints describe --replication as
// kafka-metadata-quorum.sh: the leader, then the other voters, then the
// observers.
func writeQuorumReplication(w io.Writer, q *quorumView, human bool, now time.Time) {
	leader := q.leader()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NodeId\tDirectoryId\tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus")
	row := func(r kmsg.DescribeQuorumResponseTopicPartitionReplicaState, status string) {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s\t%s\n", r.ReplicaID, directoryID(r.ReplicaDirectoryID, false), r.LogEndOffset,
			leader.LogEndOffset-r.LogEndOffset, quorumTime(r.LastFetchTimestamp, human, now),
			quorumTime(r.LastCaughtUpTimestamp, human, now), status)
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
	_ = tw.Flush() // w is a strings.Builder
}

// quorumTime prints a timestamp in milliseconds: -1 when unknown, else the
// number or, human, "N ms ago".
func quorumTime(ms int64, human bool, now time.Time) string {
	switch {
	case ms < 0:
		return "-1"
	case human:
		return fmt.Sprintf("%d ms ago", max(0, now.UnixMilli()-ms))
	default:
		return fmt.Sprint(ms)
	}
}
