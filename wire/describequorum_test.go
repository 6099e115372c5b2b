package wire

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// describeQuorumRequest names topic/partitions at version v.
func describeQuorumRequest(v int16, topic string, partitions ...int32) *kmsg.DescribeQuorumRequest {
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.Version = v
	t := kmsg.NewDescribeQuorumRequestTopic()
	t.Topic = topic
	for _, p := range partitions {
		rp := kmsg.NewDescribeQuorumRequestTopicPartition()
		rp.Partition = p
		t.Partitions = append(t.Partitions, rp)
	}
	req.Topics = []kmsg.DescribeQuorumRequestTopic{t}
	return req
}

// DescribeQuorum at every version: the leader's state, its own times the
// answer's, v2's node listeners; and a metadata log that cannot be written
// is KAFKA_STORAGE_ERROR with the cause (v2), the state still filled in.
func TestDescribeQuorumEveryVersion(t *testing.T) {
	s, b := startBroker(t, nil)
	c := dial(t, s)
	host, port := brokerAddr(t, b)
	hw := b.Image().Offset() + 1
	for v := int16(0); v <= 2; v++ {
		before := time.Now().UnixMilli()
		resp := roundTrip[*kmsg.DescribeQuorumResponse](c, describeQuorumRequest(v, "__cluster_metadata", 0))
		wantCode(t, "describe quorum", resp.ErrorCode, nil)
		if len(resp.Topics) != 1 || resp.Topics[0].Topic != "__cluster_metadata" || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("v%d: %+v", v, resp)
		}
		p := resp.Topics[0].Partitions[0]
		wantCode(t, "partition", p.ErrorCode, nil)
		if p.LeaderID != 1 || p.LeaderEpoch != 1 || p.HighWatermark != hw || len(p.CurrentVoters) != 1 || len(p.Observers) != 0 {
			t.Fatalf("v%d: partition %+v", v, p)
		}
		voter := p.CurrentVoters[0]
		if voter.ReplicaID != 1 || voter.LogEndOffset != hw {
			t.Fatalf("v%d: voter %+v", v, voter)
		}
		if v >= 1 && (voter.LastFetchTimestamp < before || voter.LastCaughtUpTimestamp < before) {
			t.Fatalf("v%d: leader times %+v, request sent at %d", v, voter, before)
		}
		if v >= 2 {
			if len(resp.Nodes) != 1 || resp.Nodes[0].NodeID != 1 || len(resp.Nodes[0].Listeners) != 1 ||
				resp.Nodes[0].Listeners[0].Host != host || int32(resp.Nodes[0].Listeners[0].Port) != port {
				t.Fatalf("v%d: nodes %+v", v, resp.Nodes)
			}
		}
	}

	since := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	b.mu.Lock()
	b.quorum = &QuorumStatus{Leader: true, LeaderID: 1, LeaderEpoch: 3, HighWatermark: 40, Now: time.Now(),
		Voters: []QuorumReplica{{ID: 1, LogEndOffset: 41}}, Since: since, Cause: "no space left on device"}
	b.mu.Unlock()
	for v := int16(0); v <= 2; v++ {
		resp := roundTrip[*kmsg.DescribeQuorumResponse](c, describeQuorumRequest(v, "__cluster_metadata", 0))
		p := resp.Topics[0].Partitions[0]
		wantCode(t, "unwritable", p.ErrorCode, kerr.KafkaStorageError)
		if p.LeaderID != 1 || p.LeaderEpoch != 3 || p.HighWatermark != 40 || len(p.CurrentVoters) != 1 || p.CurrentVoters[0].LogEndOffset != 41 {
			t.Fatalf("v%d unwritable: %+v", v, p)
		}
		switch {
		case v < 2 && p.ErrorMessage != nil:
			t.Fatalf("v%d: message %q", v, *p.ErrorMessage)
		case v >= 2 && (p.ErrorMessage == nil || !strings.Contains(*p.ErrorMessage, "no space left on device") ||
			!strings.Contains(*p.ErrorMessage, "2026-12-01T10:00:00Z")):
			t.Fatalf("v%d: message %v", v, p.ErrorMessage)
		}
	}

	// A node that does not lead answers NOT_LEADER_OR_FOLLOWER.
	b.mu.Lock()
	b.quorum = &QuorumStatus{LeaderID: 2, Writable: true}
	b.mu.Unlock()
	resp := roundTrip[*kmsg.DescribeQuorumResponse](c, describeQuorumRequest(2, "__cluster_metadata", 0))
	wantCode(t, "follower", resp.Topics[0].Partitions[0].ErrorCode, kerr.NotLeaderForPartition)
}

// Anything but exactly __cluster_metadata-0 is UNKNOWN_TOPIC_OR_PARTITION on
// every partition named, as Kafka's raft client answers.
func TestDescribeQuorumBadPartition(t *testing.T) {
	s, _ := startBroker(t, nil)
	c := dial(t, s)
	for _, req := range []*kmsg.DescribeQuorumRequest{
		describeQuorumRequest(2, "orders", 0),
		describeQuorumRequest(0, "__cluster_metadata", 1),
		describeQuorumRequest(1, "__cluster_metadata", 0, 1),
	} {
		name := req.Topics[0].Topic
		resp := roundTrip[*kmsg.DescribeQuorumResponse](c, req)
		wantCode(t, name, resp.ErrorCode, nil)
		if len(resp.Topics) != 1 || resp.Topics[0].Topic != name || len(resp.Topics[0].Partitions) != len(req.Topics[0].Partitions) {
			t.Fatalf("%s: %+v", name, resp)
		}
		for i, p := range resp.Topics[0].Partitions {
			wantCode(t, name, p.ErrorCode, kerr.UnknownTopicOrPartition)
			if p.Partition != req.Topics[0].Partitions[i].Partition || len(p.CurrentVoters) != 0 {
				t.Fatalf("%s: partition %+v", name, p)
			}
		}
	}
}
