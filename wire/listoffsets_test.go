package wire

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/partition"
)

// listOffsetsReq asks for one partition's offset at ts.
func listOffsetsReq(version int16, topic string, part int32, ts int64, epoch int32) *kmsg.ListOffsetsRequest {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = version
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = part, ts, epoch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func TestListOffsets(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "lo", 1)
	c := dial(t, s)
	// Three batches of two records at timestamps 1000/1001, 3000/3001,
	// 2000/2001: offsets 0-1, 2-3, 4-5.
	for _, ts := range []int64{1000, 3000, 2000} {
		o := batchOpts()
		o.BaseTimestamp = ts
		wantCode(t, "produce", c.produce(9, 1, "lo", 0, makeBatch(t, o, 2, 10)).ErrorCode, nil)
	}
	r := replica(t, b, "lo", 0)
	r.BecomeLeader(&partition.BecomeLeader{LeaderEpoch: 2, ISR: []int32{1}})
	waitFor(t, func() bool { return r.Status().LeaderEpoch == 2 })

	cases := []struct {
		version   int16
		ts        int64
		epoch     int32
		want      *kerr.Error
		offset    int64
		timestamp int64
		leader    int32
	}{
		{7, -2, -1, nil, 0, -1, 0},
		{7, -1, -1, nil, 6, -1, 2},
		{7, -3, -1, nil, 3, 3001, 0},
		{7, 1001, -1, nil, 1, 1001, 0},
		{7, 1500, -1, nil, 2, 3000, 0},
		{7, 2001, -1, nil, 2, 3000, 0},
		{7, 3002, -1, nil, -1, -1, -1},
		{1, -2, -1, nil, 0, -1, -1},
		{1, -1, -1, nil, 6, -1, -1},
		{1, 2000, -1, nil, 2, 3000, -1},
		{4, -1, 2, nil, 6, -1, 2},
		{4, -1, 1, kerr.FencedLeaderEpoch, -1, -1, -1},
		{5, -1, 3, kerr.UnknownLeaderEpoch, -1, -1, -1},
	}
	for _, tc := range cases {
		what := fmt.Sprintf("v%d ts %d epoch %d", tc.version, tc.ts, tc.epoch)
		resp := roundTrip[*kmsg.ListOffsetsResponse](c, listOffsetsReq(tc.version, "lo", 0, tc.ts, tc.epoch))
		p := resp.Topics[0].Partitions[0]
		wantCode(t, what, p.ErrorCode, tc.want)
		if p.Offset != tc.offset || p.Timestamp != tc.timestamp || (tc.version >= 4 && p.LeaderEpoch != tc.leader) {
			t.Fatalf("%s: offset %d timestamp %d epoch %d, want %d %d %d", what, p.Offset, p.Timestamp, p.LeaderEpoch, tc.offset, tc.timestamp, tc.leader)
		}
	}
	resp := roundTrip[*kmsg.ListOffsetsResponse](c, listOffsetsReq(7, "nope", 0, -1, -1))
	wantCode(t, "unknown topic", resp.Topics[0].Partitions[0].ErrorCode, kerr.UnknownTopicOrPartition)
}

// TestListOffsetsAfterAcksZero pipelines acks=0 produces and a ListOffsets
// on one connection without waiting in between: as in Kafka, which serves
// a connection's requests one after another, the ListOffsets must see
// every record those produces appended.
func TestListOffsetsAfterAcksZero(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "lo0", 1)
	c := dial(t, s)
	const rounds, perRound = 50, 4
	for round := range rounds {
		for range perRound {
			c.send(produceTo(9, 0, "lo0", 0, makeBatch(t, batchOpts(), 3, 10)), 5)
		}
		c.send(listOffsetsReq(7, "lo0", 0, -1, -1), int32(100+round))
		resp := kmsg.NewPtrListOffsetsResponse()
		resp.Version = 7
		c.expectCorr(resp, int32(100+round))
		rp := resp.Topics[0].Partitions[0]
		wantCode(t, "list offsets", rp.ErrorCode, nil)
		if want := int64((round + 1) * perRound * 3); rp.Offset != want {
			t.Fatalf("round %d: latest offset %d right after the acks=0 produces, want %d", round, rp.Offset, want)
		}
	}
}
