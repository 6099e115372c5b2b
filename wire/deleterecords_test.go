package wire

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func deleteRecordsReq(version int16, topic string, offset int64) *kmsg.DeleteRecordsRequest {
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.Version, req.TimeoutMillis = version, 5000
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Partition, rp.Offset = 0, offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func TestDeleteRecords(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "dr", 1)
	c := dial(t, s)
	for range 5 {
		wantCode(t, "produce", c.produce(9, 1, "dr", 0, makeBatch(t, batchOpts(), 2, 10)).ErrorCode, nil)
	}
	del := func(what string, version int16, offset int64, want *kerr.Error, low int64) {
		t.Helper()
		resp := roundTrip[*kmsg.DeleteRecordsResponse](c, deleteRecordsReq(version, "dr", offset))
		p := resp.Topics[0].Partitions[0]
		wantCode(t, what, p.ErrorCode, want)
		if p.LowWatermark != low {
			t.Fatalf("%s: low watermark %d, want %d", what, p.LowWatermark, low)
		}
	}
	del("to 4", 0, 4, nil, 4)
	del("back to 2 changes nothing", 1, 2, nil, 4)
	del("past the high watermark", 2, 11, kerr.OffsetOutOfRange, -1)
	del("negative", 2, -5, kerr.OffsetOutOfRange, -1)

	p := onlyPartition(t, roundTrip[*kmsg.FetchResponse](c, fetchReq(11, 0, 1, 1<<20, fetchPart("dr", 0, 2, 1<<20))))
	wantCode(t, "fetch below the log start", p.ErrorCode, kerr.OffsetOutOfRange)
	if p.LogStartOffset != 4 {
		t.Fatalf("log start %d", p.LogStartOffset)
	}
	p = onlyPartition(t, roundTrip[*kmsg.FetchResponse](c, fetchReq(11, 0, 1, 1<<20, fetchPart("dr", 0, 4, 1<<20))))
	if p.ErrorCode != 0 || numBatches(t, p.RecordBatches) != 3 || p.LogStartOffset != 4 {
		t.Fatalf("fetch from the log start: %+v", p)
	}
	lo := roundTrip[*kmsg.ListOffsetsResponse](c, listOffsetsReq(7, "dr", 0, -2, -1))
	if off := lo.Topics[0].Partitions[0].Offset; off != 4 {
		t.Fatalf("earliest offset %d, want 4", off)
	}
	del("-1 is the high watermark", 2, -1, nil, 10)
	resp := roundTrip[*kmsg.DeleteRecordsResponse](c, deleteRecordsReq(0, "nope", 1))
	wantCode(t, "unknown topic", resp.Topics[0].Partitions[0].ErrorCode, kerr.UnknownTopicOrPartition)
}
