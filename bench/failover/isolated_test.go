package failover

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceFrame is a Produce request of version ver (header included, as
// franz-go writes it) with a batch of records[i] records on partition i
// of topic t.
func produceFrame(ver int16, corr int32, t string, records ...int) []byte {
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(ver)
	req.Acks = -1
	topic := kmsg.NewProduceRequestTopic()
	topic.Topic = t
	for i, n := range records {
		b := kmsg.NewRecordBatch()
		b.Magic = 2
		b.NumRecords = int32(n)
		b.LastOffsetDelta = int32(n - 1)
		b.Records = make([]byte, 7*n) // the records themselves are not read
		raw := b.AppendTo(nil)
		p := kmsg.NewProduceRequestTopicPartition()
		p.Partition = int32(i)
		p.Records = raw
		topic.Partitions = append(topic.Partitions, p)
	}
	req.Topics = append(req.Topics, topic)
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench")).AppendRequest(nil, req, corr)
}

// produceAnswer answers partition i of t with codes[i].
func produceAnswer(ver int16, corr int32, t string, codes ...int16) []byte {
	resp := kmsg.NewPtrProduceResponse()
	resp.SetVersion(ver)
	topic := kmsg.NewProduceResponseTopic()
	topic.Topic = t
	for i, c := range codes {
		p := kmsg.NewProduceResponseTopicPartition()
		p.Partition = int32(i)
		p.ErrorCode = c
		topic.Partitions = append(topic.Partitions, p)
	}
	resp.Topics = append(resp.Topics, topic)
	return frame(corr, resp.IsFlexible(), resp.AppendTo(nil))
}

// TestIsolatedAcksCountsRecords: the records of Produce requests begun
// on the isolated node's connection during the cut are counted when
// their partition is answered without error, whenever the answer comes;
// requests before the cut, after the heal or to another node are not,
// for flexible and older versions and requests written in pieces.
func TestIsolatedAcksCountsRecords(t *testing.T) {
	nl := kerr.NotLeaderForPartition.Code
	for _, ver := range []int16{7, 9, 11} {
		iso := &isolatedAcks{}
		tally := newErrorTally()
		tally.iso.Store(iso)
		var in []byte
		in = append(in, produceAnswer(ver, 1, "t", 0, 0)...)
		in = append(in, produceAnswer(ver, 2, "t", 0, nl, 0)...)
		in = append(in, produceAnswer(ver, 3, "t", 0)...)
		c := &tapConn{tally: tally, addr: "10.0.0.2:9092", inflight: map[int32]request{}, produces: map[int32]produceSent{}}
		c.Conn = &fakeConn{read: in}
		other := &tapConn{tally: tally, addr: "10.0.0.3:9092", inflight: map[int32]request{}, produces: map[int32]produceSent{},
			Conn: &fakeConn{read: produceAnswer(ver, 9, "t", 0)}}

		_, _ = c.Write(produceFrame(ver, 1, "t", 5, 6)) // before the cut
		iso.isolate(c.addr, time.Now())
		req := produceFrame(ver, 2, "t", 10, 20, 30) // 10 and 30 acknowledged
		for len(req) > 0 {
			n := min(7, len(req))
			_, _ = c.Write(req[:n])
			req = req[n:]
		}
		_, _ = other.Write(produceFrame(ver, 9, "t", 100))
		iso.heal(time.Now())
		_, _ = c.Write(produceFrame(ver, 3, "t", 1000)) // after the heal
		buf := make([]byte, 5)
		for range len(in) {
			if _, err := c.Read(buf); err != nil {
				t.Fatal(err)
			}
		}
		for {
			if n, _ := other.Read(buf); n == 0 {
				break
			}
		}
		if got := iso.acked(); got != 40 {
			t.Errorf("v%d: %d records acknowledged by the isolated node, want 40", ver, got)
		}
		if len(c.produces) != 0 {
			t.Errorf("v%d: produce requests still kept: %v", ver, c.produces)
		}
	}
}
