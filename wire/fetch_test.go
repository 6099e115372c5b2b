package wire

import (
	"bytes"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/fetchsession"
	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/log/batch"
)

// fetchPart is one partition of a Fetch request.
func fetchPart(topic string, part int32, offset int64, maxBytes int32) kmsg.FetchRequestTopic {
	t := kmsg.NewFetchRequestTopic()
	t.Topic = topic
	p := kmsg.NewFetchRequestTopicPartition()
	p.Partition, p.FetchOffset, p.PartitionMaxBytes = part, offset, maxBytes
	t.Partitions = append(t.Partitions, p)
	return t
}

// fetchReq builds a sessionless Fetch.
func fetchReq(version int16, maxWaitMs, minBytes, maxBytes int32, topics ...kmsg.FetchRequestTopic) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = version, maxWaitMs, minBytes, maxBytes
	req.Topics = topics
	return req
}

// onlyPartition returns the single partition of a fetch response.
func onlyPartition(t *testing.T, resp *kmsg.FetchResponse) kmsg.FetchResponseTopicPartition {
	t.Helper()
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch response shape: %d topics %+v", len(resp.Topics), resp.Topics)
	}
	return resp.Topics[0].Partitions[0]
}

func numBatches(t *testing.T, records []byte) int {
	t.Helper()
	bs, err := batch.Split(records)
	if err != nil {
		t.Fatal(err)
	}
	return len(bs)
}

// A long poll is parked until an append wakes it (max wait is a minute:
// the response arriving at all shows the wake-up).
func TestFetchLongPollWokenByAppend(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "lp", 3)
	consumer, producer := dial(t, s), dial(t, s)
	req := fetchReq(11, 60000, 1, 1<<20, fetchPart("lp", 0, 0, 1<<20))
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, req.Topics[0].Partitions[0], req.Topics[0].Partitions[0])
	req.Topics[0].Partitions[1].Partition, req.Topics[0].Partitions[2].Partition = 1, 2
	consumer.send(req, 5)
	consumer.expectSilence()
	wantCode(t, "produce", producer.produce(9, 1, "lp", 2, makeBatch(t, batchOpts(), 3, 10)).ErrorCode, nil)
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 11
	consumer.expectCorr(resp, 5)
	ps := resp.Topics[0].Partitions
	if len(ps) != 3 || len(ps[2].RecordBatches) == 0 || len(ps[0].RecordBatches) != 0 || ps[2].HighWatermark != 3 {
		t.Fatalf("fetch after wake-up: %+v", ps)
	}
	for _, p := range ps {
		if p.RecordBatches == nil || p.PreferredReadReplica != -1 || p.LastStableOffset != p.HighWatermark {
			t.Fatalf("partition %d: records nil %v, preferred replica %d, LSO %d HW %d", p.Partition, p.RecordBatches == nil, p.PreferredReadReplica, p.LastStableOffset, p.HighWatermark)
		}
	}
}

// min_bytes holds the fetch until enough data arrived; max_wait ends it
// with what there is.
func TestFetchMinBytesAndMaxWait(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "mb", 1)
	consumer, producer := dial(t, s), dial(t, s)
	consumer.send(fetchReq(7, 60000, 3000, 1<<20, fetchPart("mb", 0, 0, 1<<20)), 1)
	wantCode(t, "small produce", producer.produce(9, 1, "mb", 0, makeBatch(t, batchOpts(), 1, 100)).ErrorCode, nil)
	consumer.expectSilence()
	wantCode(t, "big produce", producer.produce(9, 1, "mb", 0, makeBatch(t, batchOpts(), 1, 4000)).ErrorCode, nil)
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 7
	consumer.expectCorr(resp, 1)
	if p := onlyPartition(t, resp); numBatches(t, p.RecordBatches) != 2 {
		t.Fatalf("want both batches, got %d bytes", len(p.RecordBatches))
	}
	// max_wait: 50 ms with min_bytes never met returns what there is.
	resp = roundTrip[*kmsg.FetchResponse](consumer, fetchReq(7, 50, 1<<20, 1<<20, fetchPart("mb", 0, 0, 1<<20)))
	if p := onlyPartition(t, resp); numBatches(t, p.RecordBatches) != 2 {
		t.Fatalf("max wait: want both batches, got %d bytes", len(p.RecordBatches))
	}
	// max_wait 0 answers at once, even with nothing.
	resp = roundTrip[*kmsg.FetchResponse](consumer, fetchReq(7, 0, 1, 1<<20, fetchPart("mb", 0, 2, 1<<20)))
	if p := onlyPartition(t, resp); p.ErrorCode != 0 || len(p.RecordBatches) != 0 || p.RecordBatches == nil {
		t.Fatalf("empty fetch: %+v", p)
	}
}

// KIP-74: a batch larger than the partition's or the response's max bytes
// is still returned when it is the first; the response's max bytes bounds
// the rest.
func TestFetchMaxBytes(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "max", 2)
	c := dial(t, s)
	big := makeBatch(t, batchOpts(), 1, 5000)
	wantCode(t, "big", c.produce(9, 1, "max", 0, big).ErrorCode, nil)
	for range 3 {
		wantCode(t, "small", c.produce(9, 1, "max", 1, makeBatch(t, batchOpts(), 1, 1000)).ErrorCode, nil)
	}
	one := len(makeBatch(t, batchOpts(), 1, 1000))

	// The first batch comes whole over partition max bytes.
	resp := roundTrip[*kmsg.FetchResponse](c, fetchReq(4, 0, 1, 1<<20, fetchPart("max", 0, 0, 100)))
	if p := onlyPartition(t, resp); len(p.RecordBatches) != len(big) {
		t.Fatalf("KIP-74: got %d bytes, want the %d-byte batch", len(p.RecordBatches), len(big))
	}
	// Response max bytes bounds how many batches come back.
	resp = roundTrip[*kmsg.FetchResponse](c, fetchReq(4, 0, 1, int32(2*one+10), fetchPart("max", 1, 0, 1<<20)))
	if p := onlyPartition(t, resp); numBatches(t, p.RecordBatches) != 2 {
		t.Fatalf("max bytes %d: got %d batches", 2*one+10, numBatches(t, p.RecordBatches))
	}
	// Partition max bytes too.
	resp = roundTrip[*kmsg.FetchResponse](c, fetchReq(4, 0, 1, 1<<20, fetchPart("max", 1, 0, int32(one+10))))
	if p := onlyPartition(t, resp); numBatches(t, p.RecordBatches) != 1 {
		t.Fatalf("partition max bytes: got %d batches", numBatches(t, p.RecordBatches))
	}
	// Once the response is full, later partitions return no records.
	req := fetchReq(4, 0, 1, 1000, fetchPart("max", 0, 0, 1<<20))
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, req.Topics[0].Partitions[0])
	req.Topics[0].Partitions[1].Partition = 1
	resp = roundTrip[*kmsg.FetchResponse](c, req)
	ps := resp.Topics[0].Partitions
	if len(ps[0].RecordBatches) != len(big) || len(ps[1].RecordBatches) != 0 || ps[1].HighWatermark != 3 {
		t.Fatalf("full response: %d and %d bytes, HW %d", len(ps[0].RecordBatches), len(ps[1].RecordBatches), ps[1].HighWatermark)
	}
}

func TestFetchErrors(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "fe", 1)
	c := dial(t, s)
	wantCode(t, "produce", c.produce(9, 1, "fe", 0, makeBatch(t, batchOpts(), 3, 10)).ErrorCode, nil)

	check := func(what string, req *kmsg.FetchRequest, want *kerr.Error) kmsg.FetchResponseTopicPartition {
		t.Helper()
		resp := roundTrip[*kmsg.FetchResponse](c, req)
		p := onlyPartition(t, resp)
		wantCode(t, what, p.ErrorCode, want)
		if want != nil && (p.RecordBatches == nil || len(p.RecordBatches) != 0) {
			t.Fatalf("%s: records must be empty, not null", what)
		}
		return p
	}
	p := check("past the log end", fetchReq(12, 5000, 1, 1<<20, fetchPart("fe", 0, 4, 1<<20)), kerr.OffsetOutOfRange)
	if p.HighWatermark != 3 || p.LogStartOffset != 0 {
		t.Fatalf("out of range: HW %d log start %d", p.HighWatermark, p.LogStartOffset)
	}
	check("at the log end", fetchReq(12, 0, 1, 1<<20, fetchPart("fe", 0, 3, 1<<20)), nil)
	check("unknown topic", fetchReq(12, 5000, 1, 1<<20, fetchPart("nope", 0, 0, 1<<20)), kerr.UnknownTopicOrPartition)
	check("unknown partition", fetchReq(12, 5000, 1, 1<<20, fetchPart("fe", 3, 0, 1<<20)), kerr.UnknownTopicOrPartition)

	// current_leader_epoch (v9+): -1 is no check; move the leader to epoch 3.
	r := replica(t, b, "fe", 0)
	r.BecomeLeader(&partition.BecomeLeader{LeaderEpoch: 3, ISR: []int32{1}})
	waitFor(t, func() bool { return r.Status().LeaderEpoch == 3 })
	for _, tc := range []struct {
		epoch int32
		want  *kerr.Error
	}{{-1, nil}, {3, nil}, {2, kerr.FencedLeaderEpoch}, {4, kerr.UnknownLeaderEpoch}} {
		req := fetchReq(12, 0, 1, 1<<20, fetchPart("fe", 0, 0, 1<<20))
		req.Topics[0].Partitions[0].CurrentLeaderEpoch = tc.epoch
		check(fmt.Sprintf("leader epoch %d", tc.epoch), req, tc.want)
	}
	// Fetch v8 has no epoch: never fenced.
	check("v8", fetchReq(8, 0, 1, 1<<20, fetchPart("fe", 0, 0, 1<<20)), nil)
}

// sessionFetch builds a Fetch v12 in a session.
func sessionFetch(id, epoch int32, topics ...kmsg.FetchRequestTopic) *kmsg.FetchRequest {
	req := fetchReq(12, 0, 1, 1<<20, topics...)
	req.SessionID, req.SessionEpoch = id, epoch
	return req
}

// Incremental fetch sessions through the wire (KIP-227), with the session
// errors 70 and 71 only for requests that name a session.
func TestFetchSessions(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "fs", 2)
	c := dial(t, s)
	wantCode(t, "produce", c.produce(9, 1, "fs", 0, makeBatch(t, batchOpts(), 2, 10)).ErrorCode, nil)

	both := fetchPart("fs", 0, 0, 1<<20)
	both.Partitions = append(both.Partitions, both.Partitions[0])
	both.Partitions[1].Partition = 1
	resp := roundTrip[*kmsg.FetchResponse](c, sessionFetch(0, 0, both))
	id := resp.SessionID
	if resp.ErrorCode != 0 || id == 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 {
		t.Fatalf("full fetch creating a session: %+v", resp)
	}
	// Nothing changed: an incremental response with no partitions (the
	// client did not move its offsets; the request lists none).
	resp = roundTrip[*kmsg.FetchResponse](c, sessionFetch(id, 1))
	if resp.ErrorCode != 0 || resp.SessionID != id || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("incremental fetch 1: %+v", resp) // partition 0 still returns its records from offset 0
	}
	// Move partition 0's offset past its records: now nothing to send.
	resp = roundTrip[*kmsg.FetchResponse](c, sessionFetch(id, 2, fetchPart("fs", 0, 2, 1<<20)))
	if resp.ErrorCode != 0 || len(resp.Topics) != 0 {
		t.Fatalf("incremental fetch 2: %+v", resp)
	}
	// An append to partition 1 brings it back.
	wantCode(t, "produce", c.produce(9, 1, "fs", 1, makeBatch(t, batchOpts(), 1, 10)).ErrorCode, nil)
	resp = roundTrip[*kmsg.FetchResponse](c, sessionFetch(id, 3))
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].Partition != 1 ||
		len(resp.Topics[0].Partitions[0].RecordBatches) == 0 {
		t.Fatalf("incremental fetch 3: %+v", resp)
	}
	// Forget partition 1 and append to it: not sent any more.
	forget := kmsg.NewFetchRequestForgottenTopic()
	forget.Topic, forget.Partitions = "fs", []int32{1}
	req := sessionFetch(id, 4, fetchPart("fs", 1, 1, 1<<20))
	req.ForgottenTopics = append(req.ForgottenTopics, forget)
	resp = roundTrip[*kmsg.FetchResponse](c, req)
	wantCode(t, "forget", resp.ErrorCode, nil)
	wantCode(t, "produce", c.produce(9, 1, "fs", 1, makeBatch(t, batchOpts(), 1, 10)).ErrorCode, nil)
	resp = roundTrip[*kmsg.FetchResponse](c, sessionFetch(id, 5))
	if len(resp.Topics) != 0 {
		t.Fatalf("forgotten partition sent: %+v", resp)
	}

	for _, tc := range []struct {
		name      string
		id, epoch int32
		want      *kerr.Error
	}{
		{"wrong epoch", id, 9, kerr.InvalidFetchSessionEpoch},
		{"unknown session", id + 1, 1, kerr.FetchSessionIDNotFound},
		{"sessionless", 0, -1, nil},
		{"sessionless with a negative epoch", 0, -5, nil},
	} {
		resp := roundTrip[*kmsg.FetchResponse](c, sessionFetch(tc.id, tc.epoch, fetchPart("fs", 0, 0, 1<<20)))
		wantCode(t, tc.name, resp.ErrorCode, tc.want)
		if resp.SessionID != 0 || (tc.want != nil) != (len(resp.Topics) == 0) {
			t.Fatalf("%s: session %d, %d topics", tc.name, resp.SessionID, len(resp.Topics))
		}
	}
	// The errors did not disturb the session; closing it (id, -1) does.
	wantCode(t, "still alive", roundTrip[*kmsg.FetchResponse](c, sessionFetch(id, 6)).ErrorCode, nil)
	wantCode(t, "close", roundTrip[*kmsg.FetchResponse](c, sessionFetch(id, -1, both)).ErrorCode, nil)
	wantCode(t, "closed", roundTrip[*kmsg.FetchResponse](c, sessionFetch(id, 7)).ErrorCode, kerr.FetchSessionIDNotFound)
}

// startBrokerWithSessions is startBroker with a fetch session cache of
// the given size; it returns a connection and the broker.
func startBrokerWithSessions(t *testing.T, cfg fetchsession.Config) (*client, *fakeBroker) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := newFakeBroker(t, ln.Addr().String(), nil)
	h, err := NewBrokerHandler(BrokerHandlerConfig{Broker: b, System: b.system, FetchSessions: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(TestConfig(), h)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(ln); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.Close()
		_ = h.Close()
	})
	return dial(t, s), b
}

// The session cache is bounded: when full, a full fetch gets session id
// 0 (it carries on sessionless) unless it may evict a session: an idle
// one, or, after the minimum age, a smaller one.
func TestFetchSessionCacheEviction(t *testing.T) {
	c, b := startBrokerWithSessions(t, fetchsession.Config{MaxSlots: 2, MinEvictionMs: 60000})
	createTopic(t, b, "ev", 3)
	parts := func(n int32) kmsg.FetchRequestTopic {
		tp := fetchPart("ev", 0, 0, 1<<20)
		for i := int32(1); i < n; i++ {
			p := tp.Partitions[0]
			p.Partition = i
			tp.Partitions = append(tp.Partitions, p)
		}
		return tp
	}
	a := roundTrip[*kmsg.FetchResponse](c, sessionFetch(0, 0, parts(1))).SessionID
	bID := roundTrip[*kmsg.FetchResponse](c, sessionFetch(0, 0, parts(2))).SessionID
	if a == 0 || bID == 0 || a == bID {
		t.Fatalf("sessions %d and %d", a, bID)
	}
	// Full: a newcomer cannot evict sessions younger than the minimum age.
	if id := roundTrip[*kmsg.FetchResponse](c, sessionFetch(0, 0, parts(3))).SessionID; id != 0 {
		t.Fatalf("full cache gave session %d", id)
	}
	// Closing one frees its slot.
	roundTrip[*kmsg.FetchResponse](c, sessionFetch(a, -1, parts(1)))
	cID := roundTrip[*kmsg.FetchResponse](c, sessionFetch(0, 0, parts(1))).SessionID
	if cID == 0 {
		t.Fatal("no session after a slot was freed")
	}
	wantCode(t, "session b", roundTrip[*kmsg.FetchResponse](c, sessionFetch(bID, 1)).ErrorCode, nil)

	// With no minimum age, the least recently used idle session is
	// evicted: c (b was used after it).
	c2, b2 := startBrokerWithSessions(t, fetchsession.Config{MaxSlots: 1, MinEvictionMs: 0})
	createTopic(t, b2, "ev", 3)
	first := roundTrip[*kmsg.FetchResponse](c2, sessionFetch(0, 0, parts(1))).SessionID
	// Let the wall clock pass the millisecond the session was used in:
	// "idle longer than 0 ms" needs a later millisecond.
	time.Sleep(3 * time.Millisecond)
	second := roundTrip[*kmsg.FetchResponse](c2, sessionFetch(0, 0, parts(1))).SessionID
	if first == 0 || second == 0 || first == second {
		t.Fatalf("sessions %d then %d", first, second)
	}
	wantCode(t, "evicted", roundTrip[*kmsg.FetchResponse](c2, sessionFetch(first, 1)).ErrorCode, kerr.FetchSessionIDNotFound)
	wantCode(t, "newcomer", roundTrip[*kmsg.FetchResponse](c2, sessionFetch(second, 1)).ErrorCode, nil)
}

// Fetch versions 4-12 all decode and answer with the records.
func TestFetchAllVersions(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "vers", 1)
	c := dial(t, s)
	sent := makeBatch(t, batchOpts(), 2, 10)
	wantCode(t, "produce", c.produce(3, 1, "vers", 0, append([]byte(nil), sent...)).ErrorCode, nil)
	for v := int16(4); v <= 12; v++ {
		p := onlyPartition(t, roundTrip[*kmsg.FetchResponse](c, fetchReq(v, 0, 1, 1<<20, fetchPart("vers", 0, 0, 1<<20))))
		if p.ErrorCode != 0 || !bytes.Equal(p.RecordBatches[16:], sent[16:]) || p.HighWatermark != 2 {
			t.Fatalf("Fetch v%d: %+v", v, p)
		}
		if v >= 5 && p.LogStartOffset != 0 {
			t.Fatalf("Fetch v%d: log start %d", v, p.LogStartOffset)
		}
	}
}

// A consumer's long poll on a node whose lease lapses ends then with
// NOT_LEADER_OR_FOLLOWER (max wait is a minute: the answer arriving at
// all shows the lease ended it), and so does every fetch after, until
// the lease is renewed.
func TestFetchEndsWhenLeaseLapses(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "ls", 1)
	consumer := dial(t, s)
	b.leaseUntil.Store(time.Now().Add(300 * time.Millisecond).UnixNano())
	consumer.send(fetchReq(11, 60000, 1, 1<<20, fetchPart("ls", 0, 0, 1<<20)), 1)
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 11
	consumer.expectCorr(resp, 1)
	if p := onlyPartition(t, resp); p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("long poll past the lease: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	resp = roundTrip[*kmsg.FetchResponse](consumer, fetchReq(11, 60000, 1, 1<<20, fetchPart("ls", 0, 0, 1<<20)))
	if p := onlyPartition(t, resp); p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("fetch without the lease: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	b.leaseUntil.Store(0)
	resp = roundTrip[*kmsg.FetchResponse](consumer, fetchReq(11, 0, 1, 1<<20, fetchPart("ls", 0, 0, 1<<20)))
	if p := onlyPartition(t, resp); p.ErrorCode != 0 {
		t.Fatalf("fetch with the lease renewed: %v", kerr.ErrorForCode(p.ErrorCode))
	}
}
