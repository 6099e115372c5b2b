package wire

import (
	"context"
	"log/slog"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
)

// FuzzBrokerHandler feeds byte streams through the real API table and the
// real BrokerHandler over a one-node fake broker with a topic "fz" of two
// partitions: framing, decoding, every API's handler, the partition actors
// behind them. It must never panic or break the Handler contract, and
// every reply must encode and decode again. Deferred answers get a short
// deadline, so long polls end quickly.
func FuzzBrokerHandler(f *testing.F) {
	for _, a := range apis {
		for v := a.Advertised.Min; v <= a.Advertised.Max; v++ {
			req := kmsg.RequestForKey(a.Key)
			req.SetVersion(v)
			f.Add(requestFrame(req, int32(v)))
		}
	}
	f.Add(requestFrame(fuzzFetch(), 7))
	f.Add(append(requestFrame(metadataReq(1), 1), requestFrame(metadataReq(0), 2)...))

	b := newFakeBroker(f, "127.0.0.1:9092", nil)
	if _, err := b.Propose(context.Background(), func(img *metadata.Image) ([]metadata.Record, error) {
		return metadata.NewTopicRecords(img, "fz", 2, 1, nil, nil, metadata.UUID{0xf2})
	}); err != nil {
		f.Fatal(err)
	}
	h, err := NewBrokerHandler(BrokerHandlerConfig{Broker: b, System: b.system, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = h.Close() })
	s, err := newServer(DefaultConfig(), h, apis)
	if err != nil {
		f.Fatal(err)
	}
	s.log = slog.New(slog.DiscardHandler)
	f.Cleanup(func() { s.Close() })
	ci := &ConnInfo{ID: 1}

	f.Fuzz(func(t *testing.T, stream []byte) {
		serveStream(t, s, context.Background(), ci, stream, true)
	})
}

// fuzzFetch is a Fetch of both partitions of "fz" that does not wait.
func fuzzFetch() *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(11)
	req.ReplicaID = -1
	req.MaxBytes = 1 << 20
	req.SessionEpoch = -1
	t := kmsg.NewFetchRequestTopic()
	t.Topic = "fz"
	for i := range int32(2) {
		p := kmsg.NewFetchRequestTopicPartition()
		p.Partition = i
		p.PartitionMaxBytes = 1 << 20
		p.CurrentLeaderEpoch = -1
		p.LogStartOffset = -1
		t.Partitions = append(t.Partitions, p)
	}
	req.Topics = append(req.Topics, t)
	return req
}
