package wire

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/partition"
)

func offsetForLeaderEpochReq(version int16, topic string, epoch, current int32) *kmsg.OffsetForLeaderEpochRequest {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.Version, req.ReplicaID = version, -1
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.Partition, rp.LeaderEpoch, rp.CurrentLeaderEpoch = 0, epoch, current
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func TestOffsetForLeaderEpoch(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "ofle", 1)
	c := dial(t, s)
	r := replica(t, b, "ofle", 0)
	// Epoch 0: offsets 0-2; epoch 2: offsets 3-4.
	wantCode(t, "produce", c.produce(9, 1, "ofle", 0, makeBatch(t, batchOpts(), 3, 1)).ErrorCode, nil)
	r.BecomeLeader(&partition.BecomeLeader{LeaderEpoch: 2, ISR: []int32{1}})
	wantCode(t, "produce", c.produce(9, 1, "ofle", 0, makeBatch(t, batchOpts(), 2, 1)).ErrorCode, nil)

	for _, tc := range []struct {
		version        int16
		epoch, current int32
		want           *kerr.Error
		leader         int32
		end            int64
	}{
		{3, 0, -1, nil, 0, 3},
		{3, 1, -1, nil, 0, 3},
		{4, 2, 2, nil, 2, 5},
		{4, 7, -1, nil, -1, -1}, // newer than any epoch the log holds: unknown, as Kafka
		{4, 0, 1, kerr.FencedLeaderEpoch, -1, -1},
		{4, 0, 3, kerr.UnknownLeaderEpoch, -1, -1},
	} {
		what := fmt.Sprintf("v%d epoch %d current %d", tc.version, tc.epoch, tc.current)
		resp := roundTrip[*kmsg.OffsetForLeaderEpochResponse](c, offsetForLeaderEpochReq(tc.version, "ofle", tc.epoch, tc.current))
		p := resp.Topics[0].Partitions[0]
		wantCode(t, what, p.ErrorCode, tc.want)
		if p.LeaderEpoch != tc.leader || p.EndOffset != tc.end {
			t.Fatalf("%s: epoch %d end %d, want %d %d", what, p.LeaderEpoch, p.EndOffset, tc.leader, tc.end)
		}
	}
	resp := roundTrip[*kmsg.OffsetForLeaderEpochResponse](c, offsetForLeaderEpochReq(4, "nope", 0, -1))
	wantCode(t, "unknown topic", resp.Topics[0].Partitions[0].ErrorCode, kerr.UnknownTopicOrPartition)
}
