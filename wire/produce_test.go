package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/log/batch"
)

// Helpers shared by the data-path tests (Produce, Fetch, ListOffsets,
// OffsetForLeaderEpoch, DeleteRecords, DescribeProducers).

// createTopic creates topic with parts partitions on the fake broker and
// waits until every partition's actor leads.
func createTopic(t *testing.T, b *fakeBroker, topic string, parts int32) metadata.UUID {
	t.Helper()
	var id metadata.UUID // unique for names of up to 15 bytes
	id[0] = byte(len(topic))
	copy(id[1:], topic)
	img, err := b.Propose(context.Background(), func(img *metadata.Image) ([]metadata.Record, error) {
		return metadata.NewTopicRecords(img, topic, parts, 1, nil, nil, id)
	})
	if err != nil {
		t.Fatal(err)
	}
	top, _ := img.Topic(topic)
	for i := range parts {
		c := b.Replica(top.ID(), i)
		waitFor(t, func() bool { return c.Status().Role == partition.Leader })
	}
	return top.ID()
}

// replica returns the actor of topic's partition.
func replica(t *testing.T, b *fakeBroker, topic string, idx int32) *partition.Client {
	t.Helper()
	top, ok := b.Image().Topic(topic)
	if !ok {
		t.Fatalf("no topic %s", topic)
	}
	c := b.Replica(top.ID(), idx)
	if c == nil {
		t.Fatalf("no replica for %s-%d", topic, idx)
	}
	return c
}

// batchOpts are the header of a batch from a producer that is not
// idempotent.
func batchOpts() batch.Options {
	return batch.Options{ProducerID: batch.NoProducerID, ProducerEpoch: batch.NoProducerEpoch,
		BaseSequence: batch.NoSequence, PartitionLeaderEpoch: batch.NoPartitionLeaderEpoch, BaseTimestamp: 1000}
}

// idemOpts are the header of an idempotent producer's batch.
func idemOpts(pid int64, epoch int16, seq int32) batch.Options {
	o := batchOpts()
	o.ProducerID, o.ProducerEpoch, o.BaseSequence = pid, epoch, seq
	return o
}

// makeBatch builds a batch of n records with values of size bytes.
func makeBatch(t *testing.T, opts batch.Options, n, size int) []byte {
	t.Helper()
	recs := make([]kmsg.Record, n)
	for i := range recs {
		recs[i] = kmsg.Record{OffsetDelta: int32(i), TimestampDelta64: int64(i),
			Key: fmt.Appendf(nil, "k%d", i), Value: bytes.Repeat([]byte{byte('a' + i%26)}, size)}
	}
	b, err := batch.Build(opts, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// produceTo builds a Produce request of one partition.
func produceTo(version, acks int16, topic string, part int32, records []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = version, acks, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = part, records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// produce sends one partition's records and returns that partition's
// answer.
func (c *client) produce(version, acks int16, topic string, part int32, records []byte) kmsg.ProduceResponseTopicPartition {
	c.t.Helper()
	req := produceTo(version, acks, topic, part, records)
	c.send(req, 7)
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	c.expectCorr(resp, 7)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		c.t.Fatalf("produce response shape: %+v", resp)
	}
	return resp.Topics[0].Partitions[0]
}

// roundTrip sends req and decodes its response.
func roundTrip[R kmsg.Response](c *client, req kmsg.Request) R {
	c.t.Helper()
	c.send(req, 11)
	resp := req.ResponseKind()
	c.expectCorr(resp, 11)
	return resp.(R)
}

func wantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	var code int16
	if want != nil {
		code = want.Code
	}
	if got != code {
		t.Fatalf("%s: error %v (%d), want %v", what, kerr.ErrorForCode(got), got, want)
	}
}

func TestProduceAcks(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "acks", 1)
	c := dial(t, s)
	for i, acks := range []int16{1, -1} {
		for _, v := range []int16{3, 7, 9, 11} {
			p := c.produce(v, acks, "acks", 0, makeBatch(t, batchOpts(), 2, 10))
			wantCode(t, fmt.Sprintf("acks=%d v%d", acks, v), p.ErrorCode, nil)
			if p.BaseOffset%2 != 0 || p.LogAppendTime != -1 {
				t.Fatalf("acks=%d v%d: base offset %d, log append time %d", acks, v, p.BaseOffset, p.LogAppendTime)
			}
			_ = i
		}
	}
	if hw := replica(t, b, "acks", 0).Status().HighWatermark; hw != 16 {
		t.Fatalf("high watermark %d, want 16", hw)
	}
	// acks=0: no response, but the request keeps its place: the
	// ListOffsets after it is the next response read, and the records
	// arrive. (ListOffsets reads the published status, so it may answer
	// before the append is done: only the order of responses is Kafka's
	// contract here.)
	c.send(produceTo(9, 0, "acks", 0, makeBatch(t, batchOpts(), 3, 10)), 20)
	lo := listOffsetsReq(7, "acks", 0, -1, -1)
	c.send(lo, 21)
	resp := lo.ResponseKind().(*kmsg.ListOffsetsResponse)
	c.expectCorr(resp, 21)
	if off := resp.Topics[0].Partitions[0].Offset; off != 16 && off != 19 {
		t.Fatalf("latest offset after acks=0 produce %d, want 16 or 19", off)
	}
	deadline := time.Now().Add(10 * time.Second)
	for replica(t, b, "acks", 0).Status().HighWatermark != 19 {
		if time.Now().After(deadline) {
			t.Fatalf("acks=0 records never appended: high watermark %d", replica(t, b, "acks", 0).Status().HighWatermark)
		}
		time.Sleep(time.Millisecond)
	}
}

// Pipelined idempotent produces on one connection reach the actor in
// order: all succeed with increasing offsets.
func TestProducePipelinedIdempotent(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "pipe", 1)
	c := dial(t, s)
	const n = 20
	for i := range n {
		c.send(produceTo(11, -1, "pipe", 0, makeBatch(t, idemOpts(42, 0, int32(i*2)), 2, 5)), int32(100+i))
	}
	for i := range n {
		resp := kmsg.NewPtrProduceResponse()
		resp.Version = 11
		c.expectCorr(resp, int32(100+i))
		p := resp.Topics[0].Partitions[0]
		wantCode(t, fmt.Sprintf("produce %d", i), p.ErrorCode, nil)
		if p.BaseOffset != int64(i*2) {
			t.Fatalf("produce %d: base offset %d", i, p.BaseOffset)
		}
	}
}

// The idempotent producer's rules through the wire: a duplicate gets the
// original offset, a gap 45, an old epoch 47, an unknown producer id any
// first sequence (KIP-360); nothing is appended for any of them.
func TestProduceIdempotentRules(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "idem", 1)
	c := dial(t, s)
	r := replica(t, b, "idem", 0)
	send := func(what string, opts batch.Options, n int, want *kerr.Error, wantOffset int64, wantHW int64) {
		t.Helper()
		p := c.produce(11, -1, "idem", 0, makeBatch(t, opts, n, 8))
		wantCode(t, what, p.ErrorCode, want)
		if want == nil && p.BaseOffset != wantOffset {
			t.Fatalf("%s: base offset %d, want %d", what, p.BaseOffset, wantOffset)
		}
		if want != nil && (p.ErrorMessage == nil || *p.ErrorMessage == "") {
			t.Fatalf("%s: no error message", what)
		}
		if hw := r.Status().HighWatermark; hw != wantHW {
			t.Fatalf("%s: high watermark %d, want %d", what, hw, wantHW)
		}
	}
	send("first", idemOpts(7, 0, 0), 3, nil, 0, 3)
	send("second", idemOpts(7, 0, 3), 2, nil, 3, 5)
	send("retry of the first", idemOpts(7, 0, 0), 3, nil, 0, 5)
	send("retry of the second", idemOpts(7, 0, 3), 2, nil, 3, 5)
	send("gap", idemOpts(7, 0, 9), 1, kerr.OutOfOrderSequenceNumber, 0, 5)
	send("new epoch from 0", idemOpts(7, 1, 0), 1, nil, 5, 6)
	send("stale epoch", idemOpts(7, 0, 5), 1, kerr.InvalidProducerEpoch, 0, 6)
	send("new epoch not from 0", idemOpts(7, 2, 4), 1, kerr.OutOfOrderSequenceNumber, 0, 6)
	send("unknown producer, any sequence (KIP-360)", idemOpts(8, 3, 1234), 2, nil, 6, 8)
}

// Bad input on Produce: the Kafka code, nothing appended, other
// connections unaffected.
func TestProduceBadInput(t *testing.T) {
	s, b := startBroker(t, nil)
	good := makeBatch(t, batchOpts(), 1, 10)

	badCRC := makeBatch(t, batchOpts(), 2, 10)
	badCRC[len(badCRC)-1] ^= 0xff
	magic1 := makeBatch(t, batchOpts(), 1, 10)
	magic1[16] = 1
	batch.SetCRC(magic1)
	control := batchOpts()
	control.Control = true
	zstd := batchOpts()
	zstd.Codec = batch.CodecZstd
	twoBatches := append(makeBatch(t, batchOpts(), 1, 10), makeBatch(t, batchOpts(), 1, 10)...)

	cases := []struct {
		name    string
		version int16
		acks    int16
		topic   string
		part    int32
		records []byte
		want    *kerr.Error
	}{
		{"bad CRC", 9, 1, "bad", 0, badCRC, kerr.CorruptMessage},
		{"truncated batch", 9, 1, "bad", 0, good[:len(good)-3], kerr.CorruptMessage},
		{"magic v1", 9, 1, "bad", 0, magic1, kerr.InvalidRecord},
		{"two batches", 9, 1, "bad", 0, twoBatches, kerr.InvalidRecord},
		{"no records", 9, 1, "bad", 0, []byte{}, kerr.InvalidRecord},
		{"control batch from a client", 9, 1, "bad", 0, makeBatch(t, control, 1, 4), kerr.InvalidRecord},
		{"record over message.max.bytes", 9, 1, "bad", 0, makeBatch(t, batchOpts(), 1, 1100000), kerr.MessageTooLarge},
		{"acks=5", 9, 5, "bad", 0, good, kerr.InvalidRequiredAcks},
		{"zstd on Produce v6", 6, 1, "bad", 0, makeBatch(t, zstd, 2, 10), kerr.UnsupportedCompressionType},
		{"unknown topic", 9, 1, "nope", 0, good, kerr.UnknownTopicOrPartition},
		{"internal topic", 9, 1, "__consumer_offsets", 0, good, kerr.InvalidTopicException},
		{"unknown partition", 9, 1, "bad", 5, good, kerr.UnknownTopicOrPartition},
		{"Produce v2", 2, 1, "bad", 0, good, kerr.UnsupportedVersion},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			topic := fmt.Sprintf("bad%d", i)
			createTopic(t, b, topic, 1)
			r := replica(t, b, topic, 0)
			if tc.topic == "bad" {
				tc.topic = topic
			}
			c := dial(t, s)
			p := c.produce(tc.version, tc.acks, tc.topic, tc.part, append([]byte(nil), tc.records...))
			wantCode(t, tc.name, p.ErrorCode, tc.want)
			if p.BaseOffset != -1 {
				t.Fatalf("base offset %d on error", p.BaseOffset)
			}
			if st := r.Status(); st.LogEndOffset != 0 {
				t.Fatalf("log end offset %d: something was appended", st.LogEndOffset)
			}
			// The same connection and another one still work.
			wantCode(t, "same connection", c.produce(9, 1, topic, 0, makeBatch(t, batchOpts(), 1, 1)).ErrorCode, nil)
			wantCode(t, "other connection", dial(t, s).produce(9, 1, topic, 0, makeBatch(t, batchOpts(), 1, 1)).ErrorCode, nil)
		})
	}
}

// The leader walks the records of every batch (Kafka's LogValidator):
// records that do not parse under a valid CRC get INVALID_RECORD (Kafka's
// InvalidRecordException), as does a record without a key on a compacted
// topic, and nothing is appended.
func TestProduceRecordChecks(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "plain", 1)
	var id metadata.UUID
	copy(id[:], "compacted")
	if _, err := b.Propose(context.Background(), func(img *metadata.Image) ([]metadata.Record, error) {
		return metadata.NewTopicRecords(img, "compacted", 1, 1, map[string]string{"cleanup.policy": "compact"}, nil, id)
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return replica(t, b, "compacted", 0).Status().Role == partition.Leader })

	// Record 0's offset delta is the byte after its length, attributes and
	// timestamp delta (one byte each here); its key length the next.
	reorder := makeBatch(t, batchOpts(), 2, 10)
	len0, _ := binary.Varint(reorder[batch.HeaderSize:])
	reorder[batch.HeaderSize+3] = 2             // record 0: delta 1
	reorder[batch.HeaderSize+1+int(len0)+3] = 0 // record 1: delta 0
	batch.SetCRC(reorder)
	overrun := makeBatch(t, batchOpts(), 2, 10)
	overrun[batch.HeaderSize+4] = 0x7e // key length 63, past the record
	batch.SetCRC(overrun)
	keyless := func(codec int16) []byte {
		o := batchOpts()
		o.Codec = codec
		recs := []kmsg.Record{{Key: []byte("k"), Value: []byte("v")}, {OffsetDelta: 1, Value: []byte("no key")}}
		out, err := batch.Build(o, recs)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	cases := []struct {
		name, topic string
		records     []byte
		want        *kerr.Error
	}{
		{"offset deltas out of order", "plain", reorder, kerr.InvalidRecord},
		{"key overruns its record", "plain", overrun, kerr.InvalidRecord},
		{"record without a key, compacted", "compacted", keyless(batch.CodecNone), kerr.InvalidRecord},
		{"record without a key, compacted, zstd", "compacted", keyless(batch.CodecZstd), kerr.InvalidRecord},
		{"record without a key, not compacted", "plain", keyless(batch.CodecNone), nil},
		{"keyed records, compacted, lz4", "compacted", func() []byte { o := batchOpts(); o.Codec = batch.CodecLz4; return makeBatch(t, o, 3, 10) }(), nil},
	}
	c := dial(t, s)
	for _, tc := range cases {
		r := replica(t, b, tc.topic, 0)
		before := r.Status().LogEndOffset
		p := c.produce(9, 1, tc.topic, 0, tc.records)
		wantCode(t, tc.name, p.ErrorCode, tc.want)
		after := r.Status().LogEndOffset
		switch {
		case tc.want != nil && after != before:
			t.Errorf("%s: log end %d -> %d: something was appended", tc.name, before, after)
		case tc.want == nil && after == before:
			t.Errorf("%s: nothing appended", tc.name)
		}
	}
	wantCode(t, "same connection afterwards", c.produce(9, 1, "plain", 0, makeBatch(t, batchOpts(), 1, 1)).ErrorCode, nil)
}

// CreateTime timestamps must lie within message.timestamp.before.max.ms
// before and message.timestamp.after.max.ms (default one hour) after the
// broker's clock, or the batch gets INVALID_TIMESTAMP and nothing is
// appended; LogAppendTime topics take any.
func TestProduceTimestampBounds(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "ts-default", 1)
	for name, cfg := range map[string]map[string]string{
		"ts-recent":     {"message.timestamp.before.max.ms": "60000"},
		"ts-appendtime": {"message.timestamp.type": "LogAppendTime", "message.timestamp.before.max.ms": "60000"},
	} {
		var id metadata.UUID
		copy(id[:], name)
		if _, err := b.Propose(context.Background(), func(img *metadata.Image) ([]metadata.Record, error) {
			return metadata.NewTopicRecords(img, name, 1, 1, cfg, nil, id)
		}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool { return replica(t, b, name, 0).Status().Role == partition.Leader })
	}
	at := func(ts int64) []byte {
		o := batchOpts()
		o.BaseTimestamp = ts
		return makeBatch(t, o, 2, 10)
	}
	now := time.Now().UnixMilli()
	cases := []struct {
		name, topic string
		records     []byte
		want        *kerr.Error
	}{
		{"two hours ahead", "ts-default", at(now + 2*3600_000), kerr.InvalidTimestamp},
		{"half an hour ahead", "ts-default", at(now + 1800_000), nil},
		{"long ago, no before limit", "ts-default", at(1000), nil},
		{"long ago, before limit one minute", "ts-recent", at(1000), kerr.InvalidTimestamp},
		{"just now, before limit one minute", "ts-recent", at(now), nil},
		{"long ago, LogAppendTime", "ts-appendtime", at(1000), nil},
	}
	c := dial(t, s)
	for _, tc := range cases {
		r := replica(t, b, tc.topic, 0)
		before := r.Status().LogEndOffset
		p := c.produce(9, 1, tc.topic, 0, tc.records)
		wantCode(t, tc.name, p.ErrorCode, tc.want)
		if after := r.Status().LogEndOffset; (tc.want != nil) != (after == before) {
			t.Errorf("%s: log end %d -> %d", tc.name, before, after)
		}
	}
}

// An acks=0 produce that fails closes its connection (docs/clients.md rule 7) and appends
// nothing; other connections carry on.
func TestProduceAcksZeroErrorClosesConnection(t *testing.T) {
	s, b := startBroker(t, nil)
	badCRC := makeBatch(t, batchOpts(), 2, 10)
	badCRC[len(badCRC)-1] ^= 0xff
	cases := []struct {
		name string
		req  *kmsg.ProduceRequest
	}{
		{"unknown topic", produceTo(9, 0, "nope", 0, makeBatch(t, batchOpts(), 1, 1))},
		{"bad CRC", produceTo(9, 0, "zero", 0, badCRC)},
		{"Produce v2", produceTo(2, 0, "zero", 0, makeBatch(t, batchOpts(), 1, 1))},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			topic := fmt.Sprintf("zero%d", i)
			createTopic(t, b, topic, 1)
			if tc.req.Topics[0].Topic == "zero" {
				tc.req.Topics[0].Topic = topic
			}
			c := dial(t, s)
			c.send(tc.req, 1)
			c.expectClosed()
			if end := replica(t, b, topic, 0).Status().LogEndOffset; end != 0 {
				t.Fatalf("log end offset %d after a failed acks=0 produce", end)
			}
			wantCode(t, "other connection", dial(t, s).produce(9, 1, topic, 0, makeBatch(t, batchOpts(), 1, 1)).ErrorCode, nil)
		})
	}
}

// Batches of every codec are stored and served byte for byte (only the
// base offset and partition leader epoch, outside the CRC, change).
func TestProduceCompressionPassThrough(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "codecs", 1)
	c := dial(t, s)
	var sent [][]byte
	for codec := batch.CodecNone; codec <= batch.CodecZstd; codec++ {
		o := batchOpts()
		o.Codec = int16(codec)
		bt := makeBatch(t, o, 50, 100)
		sent = append(sent, append([]byte(nil), bt...))
		wantCode(t, fmt.Sprintf("codec %d", codec), c.produce(11, -1, "codecs", 0, bt).ErrorCode, nil)
	}
	f := fetchReq(12, 0, 0, 1<<20, fetchPart("codecs", 0, 0, 1<<20))
	resp := roundTrip[*kmsg.FetchResponse](c, f)
	got, err := batch.Split(resp.Topics[0].Partitions[0].RecordBatches)
	if err != nil || len(got) != len(sent) {
		t.Fatalf("fetched %d batches (%v), want %d", len(got), err, len(sent))
	}
	for i := range sent {
		if !bytes.Equal(got[i][16:], sent[i][16:]) || !bytes.Equal(got[i][8:12], sent[i][8:12]) {
			t.Fatalf("batch %d (codec %d) changed", i, i)
		}
		if _, err := batch.Validate(got[i]); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
	}
}

// A replica that is not the leader answers NOT_LEADER_OR_FOLLOWER with the
// leader it knows (KIP-951, Produce v10+: current leader and the leader's
// endpoint); Fetch gets the same code.
func TestProduceNotLeader(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "nl", 1)
	r := replica(t, b, "nl", 0)
	b.system.Root.Send(r.PID(), &partition.BecomeFollower{Leader: 1, LeaderEpoch: 5})
	waitFor(t, func() bool { return r.Status().Role == partition.Follower })
	c := dial(t, s)
	req := produceTo(11, 1, "nl", 0, makeBatch(t, batchOpts(), 1, 1))
	resp := roundTrip[*kmsg.ProduceResponse](c, req)
	p := resp.Topics[0].Partitions[0]
	wantCode(t, "produce to a follower", p.ErrorCode, kerr.NotLeaderForPartition)
	if p.CurrentLeader.LeaderID != 1 || p.CurrentLeader.LeaderEpoch != 5 {
		t.Fatalf("current leader %+v", p.CurrentLeader)
	}
	host, port := b.Image().Brokers()[0].Host, b.Image().Brokers()[0].Port
	if len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != 1 || resp.Brokers[0].Host != host || resp.Brokers[0].Port != port {
		t.Fatalf("node endpoints %+v", resp.Brokers)
	}
	f := onlyPartition(t, roundTrip[*kmsg.FetchResponse](c, fetchReq(12, 0, 1, 1<<20, fetchPart("nl", 0, 0, 1<<20))))
	wantCode(t, "fetch from a follower", f.ErrorCode, kerr.NotLeaderForPartition)
}
