package wire

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDescribeProducers(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "dp", 2)
	c := dial(t, s)
	wantCode(t, "produce", c.produce(11, -1, "dp", 0, makeBatch(t, idemOpts(5, 1, 0), 3, 1)).ErrorCode, nil)
	wantCode(t, "produce", c.produce(11, -1, "dp", 0, makeBatch(t, idemOpts(9, 0, 10), 2, 1)).ErrorCode, nil)
	wantCode(t, "produce", c.produce(11, -1, "dp", 0, makeBatch(t, batchOpts(), 2, 1)).ErrorCode, nil)

	req := kmsg.NewPtrDescribeProducersRequest()
	rt := kmsg.NewDescribeProducersRequestTopic()
	rt.Topic, rt.Partitions = "dp", []int32{0, 1, 4}
	req.Topics = append(req.Topics, rt)
	nope := kmsg.NewDescribeProducersRequestTopic()
	nope.Topic, nope.Partitions = "nope", []int32{0}
	req.Topics = append(req.Topics, nope)
	resp := roundTrip[*kmsg.DescribeProducersResponse](c, req)

	ps := resp.Topics[0].Partitions
	wantCode(t, "partition 0", ps[0].ErrorCode, nil)
	got := ps[0].ActiveProducers
	if len(got) != 2 || got[0].ProducerID != 5 || got[0].ProducerEpoch != 1 || got[0].LastSequence != 2 ||
		got[1].ProducerID != 9 || got[1].LastSequence != 11 || got[0].CurrentTxnStartOffset != -1 || got[0].CoordinatorEpoch != -1 {
		t.Fatalf("producers: %+v", got)
	}
	if got[0].LastTimestamp != 1002 {
		t.Fatalf("last timestamp %d", got[0].LastTimestamp)
	}
	if ps[1].ErrorCode != 0 || len(ps[1].ActiveProducers) != 0 {
		t.Fatalf("partition 1: %+v", ps[1])
	}
	wantCode(t, "unknown partition", ps[2].ErrorCode, kerr.UnknownTopicOrPartition)
	wantCode(t, "unknown topic", resp.Topics[1].Partitions[0].ErrorCode, kerr.UnknownTopicOrPartition)
}
