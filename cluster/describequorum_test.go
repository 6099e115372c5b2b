package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/quorum"
	"github.com/weirmq/weir/log"
)

// askQuorum sends DescribeQuorum v2 for __cluster_metadata-0 and
// returns its one partition.
func askQuorum(ctx context.Context, t *testing.T, cl *kgo.Client) kmsg.DescribeQuorumResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.Version = 2
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = quorum.MetadataPartition.Topic
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = []kmsg.DescribeQuorumRequestTopic{rt}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("describe quorum: %v", err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("describe quorum: %+v", resp)
	}
	return resp.Topics[0].Partitions[0]
}

// DescribeQuorum reports the node's real quorum: it leads, its high
// watermark is the metadata log's end offset (not a raft index) and moves
// with each change; while the disk under the metadata log is full it
// answers KAFKA_STORAGE_ERROR naming the cause, and once space is back it
// is writable again by itself, with the change made during the stall
// committed.
func TestDescribeQuorumWhileWritesStall(t *testing.T) {
	mem := log.NewMemFS()
	full := &diskFull{}
	mem.SetFaults(full.hook)
	n, sys := startTestNode(t, map[string]string{"log.dirs": "/data", "listeners": "PLAINTEXT://127.0.0.1:0"}, mem)
	defer stopNode(t, n, sys)
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	metaLog := func() *log.Log {
		l, ok := n.logs.Log(quorum.MetadataPartition)
		if !ok {
			t.Fatal("no metadata log")
		}
		return l
	}

	createOneTopic(ctx, t, cl, "before")
	p := askQuorum(ctx, t, cl)
	leo := metaLog().LogEndOffset()
	if p.ErrorCode != 0 || p.LeaderID != n.ID() || p.LeaderEpoch < 1 || p.HighWatermark != leo ||
		len(p.CurrentVoters) != 1 || p.CurrentVoters[0].ReplicaID != n.ID() || p.CurrentVoters[0].LogEndOffset != leo {
		t.Fatalf("writable: %+v, metadata log ends at %d", p, leo)
	}

	full.set(true)
	if code, _ := createTopicCode(ctx, t, cl, "during", 500); code != kerr.RequestTimedOut.Code {
		t.Fatalf("create during a full disk: %v", kerr.ErrorForCode(code))
	}
	waitFor(ctx, t, "DescribeQuorum to report the log cannot be written", func() bool {
		return askQuorum(ctx, t, cl).ErrorCode == kerr.KafkaStorageError.Code
	})
	p = askQuorum(ctx, t, cl)
	if p.ErrorMessage == nil || !strings.Contains(*p.ErrorMessage, "no space left on device") ||
		p.LeaderID != n.ID() || p.HighWatermark != leo || len(p.CurrentVoters) != 1 {
		t.Fatalf("stalled: %+v (message %v), high watermark before %d", p, p.ErrorMessage, leo)
	}

	full.set(false)
	waitFor(ctx, t, "DescribeQuorum to report the log writable again", func() bool {
		return askQuorum(ctx, t, cl).ErrorCode == 0
	})
	p = askQuorum(ctx, t, cl)
	if p.ErrorMessage != nil || p.HighWatermark <= leo || p.HighWatermark != metaLog().LogEndOffset() {
		t.Fatalf("recovered: %+v, metadata log ends at %d, was %d", p, metaLog().LogEndOffset(), leo)
	}
}
