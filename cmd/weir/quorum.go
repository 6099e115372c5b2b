package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
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
	human := fs.Bool("human-readable", false, "with --replication, print times as 'N ms ago' (text only)")
	out := cli.AddFormatFlag(fs)
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	if *status == *replication {
		return fs.UsageError(errors.New("give one of --status and --replication"))
	}
	if *human && !*replication {
		return fs.UsageError(errors.New("--human-readable goes with --replication"))
	}
	if *human && out.JSON() {
		return fs.UsageError(errors.New("--human-readable is for text output; --format json prints Unix milliseconds"))
	}
	adm, ctx, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
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
	if *status {
		md, err := adm.BrokerMetadata(ctx)
		if err != nil {
			return adm.Explain(ctx, "describe cluster", err)
		}
		st := q.status(md.Cluster)
		err = out.Write(stdout, st, st.writeText)
	} else {
		r := q.replication()
		err = out.Write(stdout, r, func(w io.Writer) error { return r.writeText(w, *human, time.Now()) })
	}
	if err != nil {
		return err
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

// directoryID prints a replica's directory id as a Kafka Uuid (base64url,
// no padding).
func directoryID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

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
