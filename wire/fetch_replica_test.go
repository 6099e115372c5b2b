package wire

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster/metadata"
)

// createReplicatedTopic creates topic with parts partitions assigned to
// nodes 1 (the leader, this broker) and 2, both in the ISR: the leader's
// high watermark and acks=all wait for node 2's fetches.
func createReplicatedTopic(t *testing.T, b *fakeBroker, topic string, parts int32) metadata.UUID {
	t.Helper()
	var id metadata.UUID
	id[0] = byte(len(topic))
	copy(id[1:], topic)
	_, err := b.Propose(context.Background(), func(img *metadata.Image) ([]metadata.Record, error) {
		recs := []metadata.Record{metadata.TopicRecord{Name: topic, TopicID: id}}
		for i := range parts {
			recs = append(recs, metadata.PartitionRecord{TopicID: id, Partition: i, Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 1})
		}
		return recs, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range parts {
		c := b.Replica(id, i)
		waitFor(t, func() bool { return c.Status().Role == partition.Leader })
	}
	return id
}

// replicaFetch builds node 2's sessionless Fetch v12 of one partition.
func replicaFetch(topic string, part int32, offset int64, lastEpoch, currentEpoch, maxWaitMs int32) *kmsg.FetchRequest {
	tp := fetchPart(topic, part, offset, 1<<20)
	tp.Partitions[0].LastFetchedEpoch, tp.Partitions[0].CurrentLeaderEpoch = lastEpoch, currentEpoch
	req := fetchReq(12, maxWaitMs, 1, 1<<20, tp)
	req.ReplicaID, req.SessionEpoch = 2, -1
	return req
}

// A follower reads past the high watermark, up to the log end offset; its
// next fetch offset moves the high watermark, which consumers then read up
// to.
func TestReplicaFetchReadsToLogEnd(t *testing.T) {
	s, b := startBroker(t, nil)
	createReplicatedTopic(t, b, "rf", 1)
	leader := replica(t, b, "rf", 0)
	c := dial(t, s)
	wantCode(t, "produce", c.produce(9, 1, "rf", 0, makeBatch(t, batchOpts(), 3, 10)).ErrorCode, nil)
	if hw := leader.Status().HighWatermark; hw != 0 {
		t.Fatalf("high watermark %d before the follower fetched, want 0", hw)
	}
	consumer := onlyPartition(t, roundTrip[*kmsg.FetchResponse](c, fetchReq(12, 0, 1, 1<<20, fetchPart("rf", 0, 0, 1<<20))))
	if len(consumer.RecordBatches) != 0 {
		t.Fatalf("consumer read %d bytes above the high watermark", len(consumer.RecordBatches))
	}
	p := onlyPartition(t, roundTrip[*kmsg.FetchResponse](c, replicaFetch("rf", 0, 0, -1, 0, 0)))
	if p.ErrorCode != 0 || numBatches(t, p.RecordBatches) != 1 || p.HighWatermark != 0 || p.LogStartOffset != 0 || p.LastStableOffset != 0 {
		t.Fatalf("replica fetch: %+v", p)
	}
	if p.DivergingEpoch.Epoch != -1 || p.DivergingEpoch.EndOffset != -1 {
		t.Fatalf("diverging epoch on a plain fetch: %+v", p.DivergingEpoch)
	}
	p = onlyPartition(t, roundTrip[*kmsg.FetchResponse](c, replicaFetch("rf", 0, 3, 0, 0, 0)))
	if p.ErrorCode != 0 || len(p.RecordBatches) != 0 {
		t.Fatalf("replica fetch at the end: %+v", p)
	}
	waitFor(t, func() bool { return leader.Status().HighWatermark == 3 })
	consumer = onlyPartition(t, roundTrip[*kmsg.FetchResponse](c, fetchReq(12, 0, 1, 1<<20, fetchPart("rf", 0, 0, 1<<20))))
	if numBatches(t, consumer.RecordBatches) != 1 || consumer.HighWatermark != 3 {
		t.Fatalf("consumer after the follower fetched: %+v", consumer)
	}
}

// A follower's long poll wakes when the log end offset passes its fetch
// offset, though the high watermark does not move (it waits for that
// follower); acks=all completes once the follower fetches past the batch.
func TestReplicaFetchLongPollAndAcksAll(t *testing.T) {
	s, b := startBroker(t, nil)
	createReplicatedTopic(t, b, "lp", 1)
	leader := replica(t, b, "lp", 0)
	follower, producer := dial(t, s), dial(t, s)
	follower.send(replicaFetch("lp", 0, 0, -1, 0, 60000), 3)
	follower.expectSilence()
	producer.send(produceTo(9, -1, "lp", 0, makeBatch(t, batchOpts(), 2, 10)), 4)
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 12
	follower.expectCorr(resp, 3)
	if p := onlyPartition(t, resp); p.ErrorCode != 0 || numBatches(t, p.RecordBatches) != 1 {
		t.Fatalf("woken replica fetch: %+v", p)
	}
	producer.expectSilence() // acks=all waits for the follower's next fetch
	if hw := leader.Status().HighWatermark; hw != 0 {
		t.Fatalf("high watermark %d before the follower fetched past the batch", hw)
	}
	follower.send(replicaFetch("lp", 0, 2, 0, 0, 60000), 5)
	presp := kmsg.NewPtrProduceResponse()
	presp.Version = 9
	producer.expectCorr(presp, 4)
	if p := presp.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Fatalf("acks=all produce: %+v", p)
	}
	// The parked fetch at 2 is answered by the next append.
	wantCode(t, "produce", producer.produce(9, 1, "lp", 0, makeBatch(t, batchOpts(), 1, 10)).ErrorCode, nil)
	follower.expectCorr(resp, 5)
	if p := onlyPartition(t, resp); numBatches(t, p.RecordBatches) != 1 || p.HighWatermark != 2 {
		t.Fatalf("second replica fetch: %+v", p)
	}
}

// A follower whose last fetched epoch ends, in the leader's log, before
// its fetch offset gets the diverging epoch and no records, and its
// position is not counted.
func TestReplicaFetchDivergingEpoch(t *testing.T) {
	s, b := startBroker(t, nil)
	id := createReplicatedTopic(t, b, "dv", 1)
	leader := replica(t, b, "dv", 0)
	c := dial(t, s)
	wantCode(t, "produce", c.produce(9, 1, "dv", 0, makeBatch(t, batchOpts(), 3, 10)).ErrorCode, nil)
	bumpLeaderEpoch(t, b, id, 0)
	waitFor(t, func() bool { return leader.Status().LeaderEpoch == 1 })
	wantCode(t, "produce", c.produce(9, 1, "dv", 0, makeBatch(t, batchOpts(), 2, 10)).ErrorCode, nil)
	// Epoch 0 ends at 3 in the leader's log; the follower claims it up to 4.
	p := onlyPartition(t, roundTrip[*kmsg.FetchResponse](c, replicaFetch("dv", 0, 4, 0, 1, 60000)))
	if p.ErrorCode != 0 || len(p.RecordBatches) != 0 || p.DivergingEpoch.Epoch != 0 || p.DivergingEpoch.EndOffset != 3 {
		t.Fatalf("diverging fetch: %+v", p)
	}
	if p.HighWatermark != 0 || p.LogStartOffset != 0 {
		t.Fatalf("diverging fetch offsets: HW %d, log start %d", p.HighWatermark, p.LogStartOffset)
	}
	// Not diverged at 3: records of epoch 1.
	p = onlyPartition(t, roundTrip[*kmsg.FetchResponse](c, replicaFetch("dv", 0, 3, 0, 1, 0)))
	if p.ErrorCode != 0 || numBatches(t, p.RecordBatches) != 1 || p.DivergingEpoch.EndOffset != -1 {
		t.Fatalf("fetch at the epoch's end: %+v", p)
	}
	waitFor(t, func() bool { return leader.Status().HighWatermark == 3 })
}

// bumpLeaderEpoch makes node 1 lead partition idx of topic id again at
// the next leader epoch.
func bumpLeaderEpoch(t *testing.T, b *fakeBroker, id metadata.UUID, idx int32) {
	t.Helper()
	if _, err := b.Propose(context.Background(), func(*metadata.Image) ([]metadata.Record, error) {
		return []metadata.Record{metadata.PartitionChangeRecord{TopicID: id, Partition: idx, Leader: 1}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	p, _ := b.Image().Topics()[0].Partition(idx)
	b.Replica(id, idx).BecomeLeader(&partition.BecomeLeader{LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: p.ISR, Replicas: p.Replicas})
}

func TestReplicaFetchErrors(t *testing.T) {
	s, b := startBroker(t, nil)
	id := createReplicatedTopic(t, b, "er", 2)
	createTopic(t, b, "solo", 1) // replicas: node 1 only
	c := dial(t, s)
	wantCode(t, "produce", c.produce(9, 1, "er", 0, makeBatch(t, batchOpts(), 3, 10)).ErrorCode, nil)
	bumpLeaderEpoch(t, b, id, 0)
	waitFor(t, func() bool { return replica(t, b, "er", 0).Status().LeaderEpoch == 1 })
	replica(t, b, "er", 1).BecomeFollower(&partition.BecomeFollower{Leader: 2, LeaderEpoch: 1})
	waitFor(t, func() bool { return replica(t, b, "er", 1).Status().Role != partition.Leader })
	notAssigned := replicaFetch("er", 0, 0, -1, 1, 0)
	notAssigned.ReplicaID = 3
	for _, tc := range []struct {
		name string
		req  *kmsg.FetchRequest
		want *kerr.Error
		hw   int64
	}{
		{"not assigned", notAssigned, kerr.NotLeaderForPartition, -1},
		{"not assigned topic", replicaFetch("solo", 0, 0, -1, -1, 0), kerr.NotLeaderForPartition, -1},
		{"fenced", replicaFetch("er", 0, 0, -1, 0, 0), kerr.FencedLeaderEpoch, -1},
		{"unknown epoch", replicaFetch("er", 0, 0, -1, 5, 0), kerr.UnknownLeaderEpoch, -1},
		{"follower", replicaFetch("er", 1, 0, -1, -1, 0), kerr.NotLeaderForPartition, -1},
		{"unknown topic", replicaFetch("nope", 0, 0, -1, -1, 0), kerr.UnknownTopicOrPartition, -1},
		{"above the log end", replicaFetch("er", 0, 4, -1, 1, 60000), kerr.OffsetOutOfRange, 0},
	} {
		p := onlyPartition(t, roundTrip[*kmsg.FetchResponse](c, tc.req))
		wantCode(t, tc.name, p.ErrorCode, tc.want)
		if len(p.RecordBatches) != 0 || p.HighWatermark != tc.hw {
			t.Fatalf("%s: %+v", tc.name, p)
		}
		if tc.hw >= 0 && p.LogStartOffset != 0 {
			t.Fatalf("%s: log start %d", tc.name, p.LogStartOffset)
		}
	}
}

// Replica fetches use fetch sessions (KIP-227): a full fetch asking for
// one gets a session id, a sessionless one none, an unknown session id or
// an epoch without a session gets the session errors, and an incremental
// fetch in the session that carries no partition is answered with none
// when nothing changed.
func TestReplicaFetchSessions(t *testing.T) {
	s, b := startBroker(t, nil)
	createReplicatedTopic(t, b, "ss", 1)
	c := dial(t, s)
	for _, tc := range []struct {
		name        string
		id, epoch   int32
		want        *kerr.Error
		wantSession bool
	}{
		{"full, session asked", 0, 0, nil, true},
		{"full, sessionless", 0, -1, nil, false},
		{"unknown session", 7, 1, kerr.FetchSessionIDNotFound, false},
		{"epoch without session (as for consumers)", 0, 3, kerr.FetchSessionIDNotFound, false},
	} {
		req := replicaFetch("ss", 0, 0, -1, -1, 0)
		req.SessionID, req.SessionEpoch = tc.id, tc.epoch
		resp := roundTrip[*kmsg.FetchResponse](c, req)
		wantCode(t, tc.name, resp.ErrorCode, tc.want)
		if (resp.SessionID != 0) != tc.wantSession {
			t.Fatalf("%s: session id %d", tc.name, resp.SessionID)
		}
		if tc.wantSession {
			inc := replicaFetch("ss", 0, 0, -1, -1, 0)
			inc.SessionID, inc.SessionEpoch, inc.Topics = resp.SessionID, 1, nil
			r2 := roundTrip[*kmsg.FetchResponse](c, inc)
			if r2.ErrorCode != 0 || r2.SessionID != resp.SessionID || len(r2.Topics) != 0 {
				t.Fatalf("%s: incremental answer %+v", tc.name, r2)
			}
		}
		if tc.want == nil && (len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0) {
			t.Fatalf("%s: %+v", tc.name, resp.Topics)
		}
	}
}
