package wire

import (
	"context"
	"crypto/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
)

// propose applies recs to the fake broker's image.
func propose(t *testing.T, b *fakeBroker, build func(img *metadata.Image) ([]metadata.Record, error)) *metadata.Image {
	t.Helper()
	img, err := b.Propose(context.Background(), build)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// newTopic creates topic with parts partitions of replication factor 1.
func newTopic(t *testing.T, b *fakeBroker, topic string, parts int32) *metadata.Topic {
	t.Helper()
	var id metadata.UUID
	_, _ = rand.Read(id[:])
	img := propose(t, b, func(img *metadata.Image) ([]metadata.Record, error) {
		return metadata.NewTopicRecords(img, topic, parts, 1, nil, nil, id)
	})
	top, _ := img.Topic(topic)
	return top
}

// metadataTopics asks for names (nil: all topics) at version v.
func metadataTopics(v int16, allowCreate bool, names ...string) *kmsg.MetadataRequest {
	req := metadataReq(v)
	req.AllowAutoTopicCreation = allowCreate
	if names == nil {
		if v == 0 {
			req.Topics = []kmsg.MetadataRequestTopic{}
		}
		return req
	}
	req.Topics = []kmsg.MetadataRequestTopic{}
	for _, n := range names {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(n)
		req.Topics = append(req.Topics, rt)
	}
	return req
}

func topicNames(resp *kmsg.MetadataResponse) []string {
	var out []string
	for _, t := range resp.Topics {
		out = append(out, deref(t.Topic))
	}
	return out
}

// Every advertised Metadata version answers all-topics and named requests
// with the fields that version has.
func TestMetadataEveryVersion(t *testing.T) {
	s, b := startBroker(t, map[string]string{"auto.create.topics.enable": "false"})
	top := newTopic(t, b, "orders", 2)
	c := dial(t, s)
	host, port := brokerAddr(t, b)
	for v := int16(0); v <= 12; v++ {
		resp := roundTrip[*kmsg.MetadataResponse](c, metadataTopics(v, false))
		if len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != 1 || resp.Brokers[0].Host != host || resp.Brokers[0].Port != port {
			t.Fatalf("v%d brokers %+v", v, resp.Brokers)
		}
		if !slices.Equal(topicNames(resp), []string{"orders"}) {
			t.Fatalf("v%d all topics: %v", v, topicNames(resp))
		}
		if v >= 1 && resp.ControllerID != 1 {
			t.Fatalf("v%d controller %d", v, resp.ControllerID)
		}
		if v >= 2 && deref(resp.ClusterID) != b.Image().ClusterID() {
			t.Fatalf("v%d cluster id %v", v, resp.ClusterID)
		}
		rt := resp.Topics[0]
		wantCode(t, "orders", rt.ErrorCode, nil)
		if v >= 10 && metadata.UUID(rt.TopicID) != top.ID() {
			t.Fatalf("v%d topic id %x, want %s", v, rt.TopicID, top.ID())
		}
		if v >= 8 && rt.AuthorizedOperations != authorizedOpsOmitted {
			t.Fatalf("v%d authorized operations %d not requested", v, rt.AuthorizedOperations)
		}
		if len(rt.Partitions) != 2 {
			t.Fatalf("v%d partitions %+v", v, rt.Partitions)
		}
		for i, p := range rt.Partitions {
			if p.Partition != int32(i) || p.Leader != 1 || !slices.Equal(p.Replicas, []int32{1}) || !slices.Equal(p.ISR, []int32{1}) {
				t.Fatalf("v%d partition %+v", v, p)
			}
			if v >= 7 && p.LeaderEpoch != 0 {
				t.Fatalf("v%d leader epoch %d", v, p.LeaderEpoch)
			}
			if v >= 5 && len(p.OfflineReplicas) != 0 {
				t.Fatalf("v%d offline %v", v, p.OfflineReplicas)
			}
		}
		// A named request, one topic unknown (no auto-creation: the
		// broker disables it), one with an illegal name.
		resp = roundTrip[*kmsg.MetadataResponse](c, metadataTopics(v, true, "orders", "nope", "bad name"))
		if !slices.Equal(topicNames(resp), []string{"orders", "nope", "bad name"}) {
			t.Fatalf("v%d named: %v", v, topicNames(resp))
		}
		wantCode(t, "orders", resp.Topics[0].ErrorCode, nil)
		wantCode(t, "nope", resp.Topics[1].ErrorCode, kerr.UnknownTopicOrPartition)
		wantCode(t, "bad name", resp.Topics[2].ErrorCode, kerr.InvalidTopicException)
	}
	if _, ok := b.Image().Topic("nope"); ok {
		t.Fatal("auto-created with auto.create.topics.enable=false")
	}
}

func brokerAddr(t *testing.T, b *fakeBroker) (string, int32) {
	t.Helper()
	br, ok := b.Image().Broker(1)
	if !ok {
		t.Fatal("broker 1 not registered")
	}
	return br.Host, br.Port
}

// v0 reads an empty topic list as all topics; v1+ reads it as none and a
// null list as all.
func TestMetadataEmptyAndNullLists(t *testing.T) {
	s, b := startBroker(t, nil)
	newTopic(t, b, "a", 1)
	newTopic(t, b, "b", 1)
	c := dial(t, s)
	v0 := metadataReq(0)
	v0.Topics = []kmsg.MetadataRequestTopic{}
	if got := topicNames(roundTrip[*kmsg.MetadataResponse](c, v0)); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("v0 empty list: %v", got)
	}
	for _, v := range []int16{1, 4, 9, 12} {
		empty := metadataReq(v)
		empty.Topics = []kmsg.MetadataRequestTopic{}
		if got := roundTrip[*kmsg.MetadataResponse](c, empty); len(got.Topics) != 0 || len(got.Brokers) != 1 {
			t.Fatalf("v%d empty list: topics %v brokers %d", v, topicNames(got), len(got.Brokers))
		}
		if got := topicNames(roundTrip[*kmsg.MetadataResponse](c, metadataReq(v))); !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("v%d null list: %v", v, got)
		}
	}
}

// Auto-creation: v0-3 always ask for it, v4+ only with the flag; the new
// topic is answered with its leader at once.
func TestMetadataAutoCreate(t *testing.T) {
	s, b := startBroker(t, map[string]string{"num.partitions": "3"})
	c := dial(t, s)
	for v := int16(0); v <= 12; v++ {
		name := "auto-" + string(rune('a'+v))
		resp := roundTrip[*kmsg.MetadataResponse](c, metadataTopics(v, true, name))
		rt := resp.Topics[0]
		wantCode(t, name, rt.ErrorCode, nil)
		if len(rt.Partitions) != 3 || rt.Partitions[0].Leader != 1 {
			t.Fatalf("v%d auto-created %s: %+v", v, name, rt.Partitions)
		}
		top, ok := b.Image().Topic(name)
		if !ok || top.NumPartitions() != 3 {
			t.Fatalf("v%d: %s not in the image", v, name)
		}
		if v >= 10 && metadata.UUID(rt.TopicID) != top.ID() {
			t.Fatalf("v%d: topic id %x, image %s", v, rt.TopicID, top.ID())
		}
		if b.Replica(top.ID(), 2) == nil {
			t.Fatalf("v%d: no replica started", v)
		}
	}
	for v := int16(4); v <= 12; v++ {
		resp := roundTrip[*kmsg.MetadataResponse](c, metadataTopics(v, false, "not-asked"))
		wantCode(t, "not-asked", resp.Topics[0].ErrorCode, kerr.UnknownTopicOrPartition)
	}
	// An illegal or too long name is never created.
	long := strings.Repeat("x", 250)
	resp := roundTrip[*kmsg.MetadataResponse](c, metadataTopics(12, true, long, "a/b", "", ".", metadata.MetadataTopic))
	for i, rt := range resp.Topics {
		wantCode(t, "illegal name "+deref(rt.Topic), rt.ErrorCode, kerr.InvalidTopicException)
		if i == 0 && deref(rt.Topic) != long {
			t.Fatal("name not echoed")
		}
	}
	if b.Image().NumTopics() != 13 {
		t.Fatalf("%d topics", b.Image().NumTopics())
	}
}

// The internal __consumer_offsets is auto-created with the offsets.topic.*
// settings and listed as internal; the metadata log is never a topic.
func TestMetadataInternalTopics(t *testing.T) {
	s, b := startBroker(t, map[string]string{"offsets.topic.num.partitions": "4"})
	newTopic(t, b, "user", 1)
	c := dial(t, s)
	resp := roundTrip[*kmsg.MetadataResponse](c, metadataTopics(12, true, metadata.ConsumerOffsetsTopic))
	rt := resp.Topics[0]
	wantCode(t, "offsets topic", rt.ErrorCode, nil)
	if !rt.IsInternal || len(rt.Partitions) != 4 {
		t.Fatalf("offsets topic: internal %v, %d partitions", rt.IsInternal, len(rt.Partitions))
	}
	if got := b.Image().Config(metadata.TopicResource(metadata.ConsumerOffsetsTopic))["cleanup.policy"]; got != "compact" {
		t.Fatalf("offsets topic cleanup.policy %q", got)
	}
	resp = roundTrip[*kmsg.MetadataResponse](c, metadataTopics(1, false))
	if got := topicNames(resp); !slices.Equal(got, []string{metadata.ConsumerOffsetsTopic, "user"}) {
		t.Fatalf("all topics: %v", got)
	}
	if !resp.Topics[0].IsInternal || resp.Topics[1].IsInternal {
		t.Fatalf("is_internal: %v %v", resp.Topics[0].IsInternal, resp.Topics[1].IsInternal)
	}
	// kadm lists user topics only unless asked.
	adm := newAdmin(t, s)
	listed, err := adm.ListTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(listed.Names(), []string{"user"}) {
		t.Fatalf("kadm ListTopics: %v", listed.Names())
	}
}

// Partitions without a leader answer LEADER_NOT_AVAILABLE with leader -1;
// replicas on fenced or unregistered brokers are offline (v5+).
func TestMetadataLeaderlessAndOffline(t *testing.T) {
	s, b := startBroker(t, nil)
	// Register node 2, still fenced, and place a partition on 1 and 2.
	propose(t, b, func(img *metadata.Image) ([]metadata.Record, error) {
		recs, _, err := metadata.RegisterBrokerRecords(img, metadata.BrokerRegistrationRecord{
			NodeID: 2, IncarnationID: metadata.UUID{2}, Host: "127.0.0.2", Port: 9092})
		return recs, err
	})
	top := newTopic(t, b, "t", 2)
	propose(t, b, func(img *metadata.Image) ([]metadata.Record, error) {
		return []metadata.Record{metadata.PartitionChangeRecord{TopicID: top.ID(), Partition: 0, Leader: metadata.NoLeader}}, nil
	})
	c := dial(t, s)
	// Manual assignment on nodes 2 and 1: ISR is the unfenced node 1.
	ct := createTopicsReq(7, false)
	ct.Topics = append(ct.Topics, manualTopic("m", [][]int32{{2, 1}}))
	created := roundTrip[*kmsg.CreateTopicsResponse](c, ct)
	wantCode(t, "manual", created.Topics[0].ErrorCode, nil)

	resp := roundTrip[*kmsg.MetadataResponse](c, metadataTopics(12, false, "t", "m"))
	p0 := resp.Topics[0].Partitions[0]
	wantCode(t, "leaderless partition", p0.ErrorCode, kerr.LeaderNotAvailable)
	if p0.Leader != -1 || p0.LeaderEpoch != 1 {
		t.Fatalf("leaderless partition: leader %d epoch %d", p0.Leader, p0.LeaderEpoch)
	}
	wantCode(t, "led partition", resp.Topics[0].Partitions[1].ErrorCode, nil)
	m0 := resp.Topics[1].Partitions[0]
	if m0.Leader != 1 || !slices.Equal(m0.Replicas, []int32{2, 1}) || !slices.Equal(m0.ISR, []int32{1}) || !slices.Equal(m0.OfflineReplicas, []int32{2}) {
		t.Fatalf("manual partition %+v", m0)
	}
	if len(resp.Brokers) != 1 {
		t.Fatalf("fenced broker listed: %+v", resp.Brokers)
	}
}

// Metadata by topic id is v12+; v10-11 reject it as Kafka does.
func TestMetadataByTopicID(t *testing.T) {
	s, b := startBroker(t, nil)
	top := newTopic(t, b, "byid", 1)
	c := dial(t, s)
	byID := func(v int16, id metadata.UUID) *kmsg.MetadataRequest {
		req := metadataReq(v)
		rt := kmsg.NewMetadataRequestTopic()
		rt.TopicID = id
		req.Topics = append(req.Topics, rt)
		return req
	}
	resp := roundTrip[*kmsg.MetadataResponse](c, byID(12, top.ID()))
	if len(resp.Topics) != 1 || deref(resp.Topics[0].Topic) != "byid" || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("by id: %+v", resp.Topics)
	}
	resp = roundTrip[*kmsg.MetadataResponse](c, byID(12, metadata.UUID{1, 2, 3}))
	wantCode(t, "unknown id", resp.Topics[0].ErrorCode, kerr.UnknownTopicID)
	if resp.Topics[0].Topic != nil {
		t.Fatalf("unknown id answered with name %q", *resp.Topics[0].Topic)
	}
	for _, v := range []int16{10, 11} {
		req := byID(v, top.ID())
		req.Topics[0].Topic = kmsg.StringPtr("")
		resp = roundTrip[*kmsg.MetadataResponse](c, req)
		wantCode(t, "id before v12", resp.Topics[0].ErrorCode, kerr.InvalidRequest)
	}
}

// Authorized operations are filled only when asked for (v8+).
func TestMetadataAuthorizedOperations(t *testing.T) {
	s, b := startBroker(t, nil)
	newTopic(t, b, "ops", 1)
	c := dial(t, s)
	req := metadataTopics(10, false)
	req.IncludeTopicAuthorizedOperations, req.IncludeClusterAuthorizedOperations = true, true
	resp := roundTrip[*kmsg.MetadataResponse](c, req)
	if resp.Topics[0].AuthorizedOperations != topicAuthorizedOps || resp.AuthorizedOperations != clusterAuthorizedOps {
		t.Fatalf("operations %d %d", resp.Topics[0].AuthorizedOperations, resp.AuthorizedOperations)
	}
}

// A franz-go producer auto-creates the topic it produces to.
func TestMetadataAutoCreateByProducer(t *testing.T) {
	s, b := startBroker(t, nil)
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.Addr().String()), kgo.AllowAutoTopicCreation(),
		kgo.DefaultProduceTopic("fresh"), kgo.RecordRetries(20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	top, ok := b.Image().Topic("fresh")
	if !ok || top.NumPartitions() != 1 {
		t.Fatalf("fresh: %v %v", ok, top)
	}
}

func newAdmin(t *testing.T, s *Server) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// While the node's lease has lapsed, the partitions its image says it
// leads are answered leaderless (LEADER_NOT_AVAILABLE); once the lease is
// renewed, led again.
func TestMetadataWithoutLeaseLeadsNothing(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "t", 2)
	c := dial(t, s)
	b.leaseUntil.Store(time.Now().Add(-time.Second).UnixNano())
	resp := roundTrip[*kmsg.MetadataResponse](c, metadataTopics(12, false, "t"))
	for _, p := range resp.Topics[0].Partitions {
		wantCode(t, "partition led here", p.ErrorCode, kerr.LeaderNotAvailable)
		if p.Leader != -1 || len(p.Replicas) != 1 {
			t.Fatalf("without the lease: partition %d leader %d replicas %v", p.Partition, p.Leader, p.Replicas)
		}
	}
	b.leaseUntil.Store(0)
	resp = roundTrip[*kmsg.MetadataResponse](c, metadataTopics(12, false, "t"))
	for _, p := range resp.Topics[0].Partitions {
		if p.Leader != 1 || p.ErrorCode != 0 {
			t.Fatalf("with the lease: partition %d leader %d (%v)", p.Partition, p.Leader, kerr.ErrorForCode(p.ErrorCode))
		}
	}
}
