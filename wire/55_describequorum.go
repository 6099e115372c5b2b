package wire

// DescribeQuorum (key 55), versions 0-2, the API of
// kafka-metadata-quorum.sh describe (KIP-595; v1 adds the replicas' last
// fetch and caught-up times, KIP-836; v2 error messages, directory ids and
// the voters' listeners, KIP-853). Always flexible.
//
// The request names the metadata partition, __cluster_metadata-0, and
// nothing else: any other request (another topic or partition, more than
// one) gets UNKNOWN_TOPIC_OR_PARTITION on every partition it names, as
// Kafka's raft client answers. A node that does not lead the quorum answers
// NOT_LEADER_OR_FOLLOWER (Kafka forwards the request to the controller;
// in a single-node cluster the node leads).
//
// The leader answers from its quorum driver's state: leader id, epoch (the
// raft term), high watermark and every voter's log end offset, all offsets
// of the leader's metadata log; the leader's own fetch and caught-up times
// are the time of the answer, as Kafka's are. Voters have no directory id
// (zero, which Kafka's tool prints as null); v2's nodes carry each voter's
// registered listener.
//
// A metadata log that cannot be written (cluster/stall.go) is reported on
// the partition as KAFKA_STORAGE_ERROR, with (v2) a message naming the
// cause and since when, and the rest of the partition filled in as when
// writable. Kafka's admin client and kadm-based tools turn a partition
// error into an error and show only it, which for this state is the point:
// a Kafka user's `kafka-metadata-quorum.sh describe --status` prints the
// storage error instead of a healthy-looking status. `weir metadata-quorum`
// reads the raw response and shows both. Kafka's raft layer never answers
// this code (a KRaft controller that cannot write its log exits).

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/internal/kafkaerr"
)

// describeQuorumBackstop bounds the wait for the metadata actor's answer.
const describeQuorumBackstop = 10 * time.Second

// describeQuorumListener is the listener name v2's nodes carry: weir's one
// listener (combined broker and controller).
const describeQuorumListener = "PLAINTEXT"

func (h *BrokerHandler) handleDescribeQuorum(_ context.Context, req *Request) Response {
	r := req.Body.(*kmsg.DescribeQuorumRequest)
	if !namesMetadataPartition(r) {
		return Reply(describeQuorumPartitionErrors(r, kerr.UnknownTopicOrPartition))
	}
	return Defer(func(ctx context.Context) Response {
		ctx, cancel := context.WithTimeout(ctx, describeQuorumBackstop)
		defer cancel()
		st, err := h.broker.DescribeQuorum(ctx)
		if err != nil {
			code := kafkaerr.Of(err) // REQUEST_TIMED_OUT past the backstop
			h.log.Warn("describe quorum failed", "client", req.ClientID, "err", err)
			return Reply(describeQuorumError(r, code, err.Error()))
		}
		if !st.Leader {
			return Reply(describeQuorumError(r, kerr.NotLeaderForPartition, kerr.NotLeaderForPartition.Description))
		}
		return Reply(describeQuorumAnswer(r, st, h.broker.Image()))
	})
}

// namesMetadataPartition reports whether r names exactly
// __cluster_metadata-0, as Kafka requires.
func namesMetadataPartition(r *kmsg.DescribeQuorumRequest) bool {
	return len(r.Topics) == 1 && r.Topics[0].Topic == metadata.MetadataTopic &&
		len(r.Topics[0].Partitions) == 1 && r.Topics[0].Partitions[0].Partition == 0
}

// describeQuorumPartitionErrors answers code on every partition r names.
func describeQuorumPartitionErrors(r *kmsg.DescribeQuorumRequest, code *kerr.Error) *kmsg.DescribeQuorumResponse {
	resp := r.ResponseKind().(*kmsg.DescribeQuorumResponse)
	resp.Topics = make([]kmsg.DescribeQuorumResponseTopic, 0, len(r.Topics))
	for _, t := range r.Topics {
		rt := kmsg.NewDescribeQuorumResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := emptyQuorumPartition(r.Version, p.Partition, code, code.Description)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// describeQuorumError answers code on the metadata partition.
func describeQuorumError(r *kmsg.DescribeQuorumRequest, code *kerr.Error, msg string) *kmsg.DescribeQuorumResponse {
	resp := r.ResponseKind().(*kmsg.DescribeQuorumResponse)
	rt := kmsg.NewDescribeQuorumResponseTopic()
	rt.Topic = metadata.MetadataTopic
	rt.Partitions = []kmsg.DescribeQuorumResponseTopicPartition{emptyQuorumPartition(r.Version, 0, code, msg)}
	resp.Topics = []kmsg.DescribeQuorumResponseTopic{rt}
	return resp
}

// emptyQuorumPartition is a partition answer carrying only an error.
func emptyQuorumPartition(version int16, partition int32, code *kerr.Error, msg string) kmsg.DescribeQuorumResponseTopicPartition {
	rp := kmsg.NewDescribeQuorumResponseTopicPartition()
	rp.Partition, rp.ErrorCode = partition, code.Code
	rp.LeaderID, rp.LeaderEpoch, rp.HighWatermark = -1, -1, -1
	rp.CurrentVoters = []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{}
	rp.Observers = []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{}
	if version >= 2 {
		rp.ErrorMessage = &msg
	}
	return rp
}

// describeQuorumAnswer is the leader's answer from st; img gives the
// voters' listeners.
func describeQuorumAnswer(r *kmsg.DescribeQuorumRequest, st QuorumStatus, img *metadata.Image) *kmsg.DescribeQuorumResponse {
	resp := r.ResponseKind().(*kmsg.DescribeQuorumResponse)
	rp := kmsg.NewDescribeQuorumResponseTopicPartition()
	rp.Partition = 0
	rp.LeaderID, rp.LeaderEpoch, rp.HighWatermark = st.LeaderID, st.LeaderEpoch, st.HighWatermark
	rp.CurrentVoters = quorumReplicas(st, st.Voters)
	rp.Observers = quorumReplicas(st, st.Observers)
	if !st.Writable {
		rp.ErrorCode = kerr.KafkaStorageError.Code
		if r.Version >= 2 {
			msg := QuorumUnwritableMessage(st)
			rp.ErrorMessage = &msg
		}
	}
	rt := kmsg.NewDescribeQuorumResponseTopic()
	rt.Topic = metadata.MetadataTopic
	rt.Partitions = []kmsg.DescribeQuorumResponseTopicPartition{rp}
	resp.Topics = []kmsg.DescribeQuorumResponseTopic{rt}
	if r.Version >= 2 {
		resp.Nodes = []kmsg.DescribeQuorumResponseNode{}
		for _, v := range st.Voters {
			n := kmsg.NewDescribeQuorumResponseNode()
			n.NodeID = v.ID
			n.Listeners = []kmsg.DescribeQuorumResponseNodeListener{}
			if br, ok := img.Broker(v.ID); ok {
				l := kmsg.NewDescribeQuorumResponseNodeListener()
				l.Name, l.Host, l.Port = describeQuorumListener, br.Host, uint16(br.Port)
				n.Listeners = append(n.Listeners, l)
			}
			resp.Nodes = append(resp.Nodes, n)
		}
	}
	return resp
}

// QuorumUnwritableMessage is the ErrorMessage of a metadata partition whose
// log cannot be written: the cause and since when.
func QuorumUnwritableMessage(st QuorumStatus) string {
	if st.Stopped {
		return fmt.Sprintf("The metadata log failed at %s (%s); the metadata quorum stopped, restart the node.",
			st.Since.UTC().Format(time.RFC3339Nano), st.Cause)
	}
	return fmt.Sprintf("The metadata log cannot be written since %s (%s); metadata changes are refused and retried until it can.",
		st.Since.UTC().Format(time.RFC3339Nano), st.Cause)
}

// quorumReplicas converts replicas; the leader's times are st.Now.
func quorumReplicas(st QuorumStatus, rs []QuorumReplica) []kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
	out := make([]kmsg.DescribeQuorumResponseTopicPartitionReplicaState, 0, len(rs))
	for _, q := range rs {
		s := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		s.ReplicaID, s.LogEndOffset = q.ID, q.LogEndOffset
		fetch, caught := q.LastFetch, q.LastCaughtUp
		if q.ID == st.LeaderID {
			fetch, caught = st.Now, st.Now
		}
		s.LastFetchTimestamp, s.LastCaughtUpTimestamp = millisOrNone(fetch), millisOrNone(caught)
		out = append(out, s)
	}
	return out
}

// millisOrNone is t in Unix milliseconds, -1 for the zero time.
func millisOrNone(t time.Time) int64 {
	if t.IsZero() {
		return -1
	}
	return t.UnixMilli()
}
