package metadata

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// applyCase applies rec to base and checks the error or the new image.
type applyCase struct {
	name  string
	base  func(t *testing.T) *Image
	rec   Record
	err   error                          // the sentinel the error wraps, nil for success
	check func(t *testing.T, img *Image) // for successes
}

func runApplyCases(t *testing.T, cases []applyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := tc.base(t)
			before := base.Records()
			got, err := base.Apply(tc.rec, base.Offset()+1)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Apply(%v) error = %v, want %v", tc.rec, err, tc.err)
				}
				if got != nil {
					t.Fatal("Apply returned an image with its error")
				}
				if !strings.Contains(err.Error(), tc.rec.String()) {
					t.Errorf("error %q does not name the record %v", err, tc.rec)
				}
			} else {
				if err != nil {
					t.Fatalf("Apply(%v): %v", tc.rec, err)
				}
				if got.Offset() != base.Offset()+1 {
					t.Errorf("offset %d, want %d", got.Offset(), base.Offset()+1)
				}
				if tc.check != nil {
					tc.check(t, got)
				}
			}
			if !reflect.DeepEqual(base.Records(), before) {
				t.Fatal("Apply changed the image it was applied to")
			}
		})
	}
}

func empty(*testing.T) *Image         { return Empty() }
func brokers(t *testing.T) *Image     { return threeBrokers(t) }
func ordersTopic(t *testing.T) *Image { return withTopic(t, threeBrokers(t), "orders", 1, 3, 3) }
func ordersP0(t *testing.T, img *Image) Partition {
	t.Helper()
	p, ok := img.Partition(uuidN(1), 0)
	if !ok {
		t.Fatal("no partition 0 of orders")
	}
	return p
}

func TestApplyCluster(t *testing.T) {
	runApplyCases(t, []applyCase{
		{name: "cluster created", base: empty, rec: ClusterCreatedRecord{ClusterID: clusterIDForTest()},
			check: func(t *testing.T, img *Image) {
				if img.ClusterID() != clusterIDForTest() {
					t.Errorf("cluster id %q", img.ClusterID())
				}
			}},
		{name: "cluster created twice", base: brokers, rec: ClusterCreatedRecord{ClusterID: uuidN(5).String()}, err: ErrInvalidRecord},
		{name: "cluster id not a uuid", base: empty, rec: ClusterCreatedRecord{ClusterID: "my-cluster"}, err: ErrInvalidRecord},
		{name: "cluster id zero", base: empty, rec: ClusterCreatedRecord{ClusterID: UUID{}.String()}, err: ErrInvalidRecord},
		{name: "controller changed", base: brokers, rec: ControllerChangedRecord{ControllerID: 3, Term: 2},
			check: func(t *testing.T, img *Image) {
				if img.ControllerID() != 3 || img.ControllerEpoch() != 2 {
					t.Errorf("controller %d term %d", img.ControllerID(), img.ControllerEpoch())
				}
			}},
		{name: "controller term not after", base: brokers, rec: ControllerChangedRecord{ControllerID: 3, Term: 1}, err: ErrInvalidRecord},
		{name: "controller negative", base: empty, rec: ControllerChangedRecord{ControllerID: -1, Term: 1}, err: ErrInvalidRecord},
	})
}

func TestApplyBrokers(t *testing.T) {
	runApplyCases(t, []applyCase{
		{name: "register new broker is fenced", base: brokers, rec: registration(4, 1),
			check: func(t *testing.T, img *Image) {
				br, ok := img.Broker(4)
				if !ok || !br.Fenced || br.Epoch != 1 || br.Addr() != "127.0.0.1:9094" {
					t.Errorf("broker 4 = %+v, %v", br, ok)
				}
			}},
		{name: "re-register with higher epoch fences", base: brokers, rec: registration(2, 11),
			check: func(t *testing.T, img *Image) {
				if br, _ := img.Broker(2); !br.Fenced || br.Epoch != 11 || br.IncarnationID != registration(2, 11).IncarnationID {
					t.Errorf("broker 2 = %+v", br)
				}
			}},
		{name: "re-register with same epoch", base: brokers, rec: registration(2, 10), err: ErrStaleBrokerEpoch},
		{name: "register negative node", base: empty, rec: registration(-1, 1), err: ErrInvalidRecord},
		{name: "register without host", base: empty, rec: func() Record { r := registration(1, 1); r.Host = ""; return r }(), err: ErrInvalidRecord},
		{name: "register bad port", base: empty, rec: func() Record { r := registration(1, 1); r.Port = 70000; return r }(), err: ErrInvalidRecord},
		{name: "register zero incarnation", base: empty, rec: func() Record { r := registration(1, 1); r.IncarnationID = UUID{}; return r }(), err: ErrInvalidRecord},
		{name: "fence", base: brokers, rec: BrokerFencedRecord{NodeID: 2, BrokerEpoch: 10},
			check: func(t *testing.T, img *Image) {
				if br, _ := img.Broker(2); !br.Fenced {
					t.Error("broker 2 not fenced")
				}
			}},
		{name: "fence stale epoch", base: brokers, rec: BrokerFencedRecord{NodeID: 2, BrokerEpoch: 9}, err: ErrStaleBrokerEpoch},
		{name: "fence unknown broker", base: brokers, rec: BrokerFencedRecord{NodeID: 9, BrokerEpoch: 10}, err: ErrUnknownBroker},
		{name: "unfence unfenced is a no-op", base: brokers, rec: BrokerUnfencedRecord{NodeID: 2, BrokerEpoch: 10},
			check: func(t *testing.T, img *Image) {
				if br, _ := img.Broker(2); br.Fenced {
					t.Error("broker 2 fenced")
				}
			}},
		{name: "unfence stale epoch", base: brokers, rec: BrokerUnfencedRecord{NodeID: 2, BrokerEpoch: 11}, err: ErrStaleBrokerEpoch},
		{name: "unregister", base: brokers, rec: BrokerUnregisteredRecord{NodeID: 2, BrokerEpoch: 10},
			check: func(t *testing.T, img *Image) {
				if _, ok := img.Broker(2); ok {
					t.Error("broker 2 still registered")
				}
				if got := len(img.Brokers()); got != 2 {
					t.Errorf("%d brokers", got)
				}
			}},
		{name: "unregister stale", base: brokers, rec: BrokerUnregisteredRecord{NodeID: 2, BrokerEpoch: 3}, err: ErrStaleBrokerEpoch},
	})
}

func TestApplyTopics(t *testing.T) {
	runApplyCases(t, []applyCase{
		{name: "topic", base: brokers, rec: TopicRecord{Name: "a.b", TopicID: uuidN(7)},
			check: func(t *testing.T, img *Image) {
				tp, ok := img.Topic("a.b")
				if !ok || tp.ID() != uuidN(7) || tp.NumPartitions() != 0 {
					t.Fatalf("topic = %v, %v", tp, ok)
				}
				if byID, _ := img.TopicByID(uuidN(7)); byID != tp {
					t.Error("TopicByID differs from Topic")
				}
				if _, ok := img.Topic("a_b"); ok {
					t.Error("a_b found by collision")
				}
			}},
		{name: "duplicate name", base: ordersTopic, rec: TopicRecord{Name: "orders", TopicID: uuidN(7)}, err: ErrTopicExists},
		{name: "colliding name", base: func(t *testing.T) *Image { return withTopic(t, brokers(t), "a.b", 1, 1, 1) },
			rec: TopicRecord{Name: "a_b", TopicID: uuidN(7)}, err: ErrInvalidTopic},
		{name: "duplicate id", base: ordersTopic, rec: TopicRecord{Name: "other", TopicID: uuidN(1)}, err: ErrInvalidTopicID},
		{name: "zero id", base: brokers, rec: TopicRecord{Name: "other"}, err: ErrInvalidTopicID},
		{name: "metadata topic id", base: brokers, rec: TopicRecord{Name: "other", TopicID: MetadataTopicID}, err: ErrInvalidTopicID},
		{name: "illegal name", base: brokers, rec: TopicRecord{Name: "a/b", TopicID: uuidN(7)}, err: ErrInvalidTopic},
		{name: "remove", base: func(t *testing.T) *Image {
			img := ordersTopic(t)
			return applyAll(t, img, ConfigRecord{ResourceType: ResourceTopic, ResourceName: "orders", Name: "retention.ms", Value: "1"})
		}, rec: TopicRemovedRecord{TopicID: uuidN(1)},
			check: func(t *testing.T, img *Image) {
				if _, ok := img.Topic("orders"); ok {
					t.Error("orders still there")
				}
				if _, ok := img.TopicByID(uuidN(1)); ok {
					t.Error("orders still there by id")
				}
				if img.NumPartitions() != 0 || img.NumTopics() != 0 {
					t.Errorf("%d topics, %d partitions", img.NumTopics(), img.NumPartitions())
				}
				if c := img.Config(TopicResource("orders")); c != nil {
					t.Errorf("configs survive the topic: %v", c)
				}
			}},
		{name: "remove unknown", base: brokers, rec: TopicRemovedRecord{TopicID: uuidN(1)}, err: ErrUnknownTopic},
	})
}

func TestApplyPartition(t *testing.T) {
	topicOnly := func(t *testing.T) *Image { return applyAll(t, brokers(t), TopicRecord{Name: "t", TopicID: uuidN(7)}) }
	part := func(idx int32, replicas, isr []int32, leader int32) PartitionRecord {
		return PartitionRecord{TopicID: uuidN(7), Partition: idx, Replicas: replicas, ISR: isr, Leader: leader}
	}
	runApplyCases(t, []applyCase{
		{name: "first partition", base: topicOnly, rec: part(0, []int32{1, 2}, []int32{1, 2}, 1),
			check: func(t *testing.T, img *Image) {
				p, ok := img.Partition(uuidN(7), 0)
				if !ok || p.Leader != 1 || !slices.Equal(p.ISR, []int32{1, 2}) || img.NumPartitions() != 1 {
					t.Errorf("partition = %+v, %v", p, ok)
				}
			}},
		{name: "leaderless partition", base: topicOnly, rec: part(0, []int32{1}, []int32{1}, NoLeader)},
		{name: "unknown topic", base: brokers, rec: part(0, []int32{1}, []int32{1}, 1), err: ErrUnknownTopic},
		{name: "index out of order", base: topicOnly, rec: part(1, []int32{1}, []int32{1}, 1), err: ErrInvalidRecord},
		{name: "existing index", base: ordersTopic, rec: PartitionRecord{TopicID: uuidN(1), Partition: 0,
			Replicas: []int32{1}, ISR: []int32{1}, Leader: 1}, err: ErrInvalidRecord},
		{name: "no replicas", base: topicOnly, rec: part(0, nil, []int32{1}, 1), err: ErrInvalidRecord},
		{name: "duplicate replica", base: topicOnly, rec: part(0, []int32{1, 1}, []int32{1}, 1), err: ErrInvalidRecord},
		{name: "negative replica", base: topicOnly, rec: part(0, []int32{-3}, []int32{-3}, -3), err: ErrInvalidRecord},
		{name: "empty ISR with a leader", base: topicOnly, rec: part(0, []int32{1}, nil, 1), err: ErrInvalidRecord},
		// A snapshot holds a partition whose last ISR member was fenced
		// (KIP-966): no leader, an empty ISR, the member in the ELR.
		{name: "empty ISR without leader", base: topicOnly, rec: PartitionRecord{TopicID: uuidN(7), Replicas: []int32{1, 2},
			Leader: NoLeader, ELR: []int32{1}, LastKnownELR: []int32{2}},
			check: func(t *testing.T, img *Image) {
				p, _ := img.Partition(uuidN(7), 0)
				if len(p.ISR) != 0 || !slices.Equal(p.ELR, []int32{1}) || !slices.Equal(p.LastKnownELR, []int32{2}) {
					t.Errorf("partition = %+v", p)
				}
			}},
		{name: "ELR in the ISR", base: topicOnly, rec: PartitionRecord{TopicID: uuidN(7), Replicas: []int32{1, 2},
			ISR: []int32{1}, Leader: 1, ELR: []int32{1}}, err: ErrInvalidRecord},
		{name: "ELR not replicas", base: topicOnly, rec: PartitionRecord{TopicID: uuidN(7), Replicas: []int32{1, 2},
			ISR: []int32{1}, Leader: 1, ELR: []int32{3}}, err: ErrInvalidRecord},
		{name: "duplicate ELR member", base: topicOnly, rec: PartitionRecord{TopicID: uuidN(7), Replicas: []int32{1, 2, 3},
			ISR: []int32{1}, Leader: 1, ELR: []int32{2, 2}}, err: ErrInvalidRecord},
		{name: "last known ELR in the ELR", base: topicOnly, rec: PartitionRecord{TopicID: uuidN(7), Replicas: []int32{1, 2, 3},
			ISR: []int32{1}, Leader: 1, ELR: []int32{2}, LastKnownELR: []int32{2}}, err: ErrInvalidRecord},
		{name: "last known ELR in the ISR", base: topicOnly, rec: PartitionRecord{TopicID: uuidN(7), Replicas: []int32{1, 2, 3},
			ISR: []int32{1}, Leader: 1, LastKnownELR: []int32{1}}, err: ErrInvalidRecord},
		{name: "ISR not replicas", base: topicOnly, rec: part(0, []int32{1}, []int32{2}, 2), err: ErrInvalidRecord},
		{name: "duplicate ISR member", base: topicOnly, rec: part(0, []int32{1, 2}, []int32{2, 2}, 2), err: ErrInvalidRecord},
		{name: "leader not in ISR", base: topicOnly, rec: part(0, []int32{1, 2}, []int32{2}, 1), err: ErrInvalidRecord},
		{name: "negative epoch", base: topicOnly, rec: PartitionRecord{TopicID: uuidN(7), Replicas: []int32{1},
			ISR: []int32{1}, Leader: 1, LeaderEpoch: -1}, err: ErrInvalidRecord},
	})
}

func TestApplyPartitionChange(t *testing.T) {
	change := func(leader int32, isr []int32) PartitionChangeRecord {
		return PartitionChangeRecord{TopicID: uuidN(1), Partition: 0, Leader: leader, ISR: isr}
	}
	expect := func(leader int32, isr []int32, leaderEpoch, partitionEpoch int32) func(*testing.T, *Image) {
		return func(t *testing.T, img *Image) {
			p := ordersP0(t, img)
			if p.Leader != leader || !slices.Equal(p.ISR, isr) || p.LeaderEpoch != leaderEpoch || p.PartitionEpoch != partitionEpoch {
				t.Errorf("partition = leader %d isr %v epochs %d/%d, want leader %d isr %v epochs %d/%d",
					p.Leader, p.ISR, p.LeaderEpoch, p.PartitionEpoch, leader, isr, leaderEpoch, partitionEpoch)
			}
		}
	}
	// orders-0 starts with the replicas placement gives it; read them.
	img := ordersTopic(t)
	p0 := ordersP0(t, img)
	l, f1, f2 := p0.Replicas[0], p0.Replicas[1], p0.Replicas[2]
	runApplyCases(t, []applyCase{
		{name: "shrink ISR keeps leader epoch", base: ordersTopic, rec: change(LeaderNoChange, []int32{l, f1}),
			check: expect(l, []int32{l, f1}, 0, 1)},
		{name: "new leader bumps both epochs", base: ordersTopic, rec: change(f2, nil),
			check: expect(f2, p0.ISR, 1, 1)},
		{name: "same leader bumps leader epoch", base: ordersTopic, rec: change(l, nil),
			check: expect(l, p0.ISR, 1, 1)},
		{name: "leader and ISR together", base: ordersTopic, rec: change(f1, []int32{f1}),
			check: expect(f1, []int32{f1}, 1, 1)},
		{name: "no leader", base: ordersTopic, rec: change(NoLeader, nil),
			check: expect(NoLeader, p0.ISR, 1, 1)},
		{name: "leader not in ISR", base: ordersTopic, rec: change(f2, []int32{l, f1}), err: ErrInvalidRecord},
		{name: "shrink ISR away from leader", base: ordersTopic, rec: change(LeaderNoChange, []int32{f1}), err: ErrInvalidRecord},
		{name: "leader not a replica", base: ordersTopic, rec: change(7, nil), err: ErrInvalidRecord},
		{name: "empty ISR with a leader", base: ordersTopic, rec: change(LeaderNoChange, []int32{}), err: ErrInvalidRecord},
		{name: "empty ISR without leader", base: ordersTopic,
			rec: PartitionChangeRecord{TopicID: uuidN(1), Leader: NoLeader, ISR: []int32{}, ELR: []int32{l, f1, f2}},
			check: func(t *testing.T, img *Image) {
				if p := ordersP0(t, img); p.ISR == nil && len(p.ISR) == 0 && !slices.Equal(p.ELR, []int32{l, f1, f2}) {
					t.Errorf("partition = %+v", p)
				}
			}},
		{name: "ELR only", base: ordersTopic,
			rec: PartitionChangeRecord{TopicID: uuidN(1), Leader: LeaderNoChange, ISR: []int32{l}, ELR: []int32{f1}},
			check: func(t *testing.T, img *Image) {
				p := ordersP0(t, img)
				if !slices.Equal(p.ELR, []int32{f1}) || p.LeaderEpoch != 0 || p.PartitionEpoch != 1 {
					t.Errorf("partition = %+v", p)
				}
				// An ELR change alone bumps the partition epoch, not the
				// leader epoch, and an empty list empties it.
				img = applyAll(t, img, PartitionChangeRecord{TopicID: uuidN(1), Leader: LeaderNoChange, ELR: []int32{}})
				if p := ordersP0(t, img); len(p.ELR) != 0 || p.LeaderEpoch != 0 || p.PartitionEpoch != 2 {
					t.Errorf("after emptying the ELR: %+v", p)
				}
			}},
		{name: "ELR overlaps ISR", base: ordersTopic,
			rec: PartitionChangeRecord{TopicID: uuidN(1), Leader: LeaderNoChange, ELR: []int32{f1}}, err: ErrInvalidRecord},
		{name: "last known ELR overlaps ELR", base: ordersTopic,
			rec: PartitionChangeRecord{TopicID: uuidN(1), Leader: LeaderNoChange, ISR: []int32{l}, ELR: []int32{f1}, LastKnownELR: []int32{f1}},
			err: ErrInvalidRecord},
		{name: "changes nothing", base: ordersTopic, rec: change(LeaderNoChange, nil), err: ErrInvalidRecord},
		{name: "bad leader value", base: ordersTopic, rec: change(-3, nil), err: ErrInvalidRecord},
		{name: "unknown topic", base: brokers, rec: change(1, nil), err: ErrUnknownTopic},
		{name: "unknown partition", base: ordersTopic, rec: PartitionChangeRecord{TopicID: uuidN(1), Partition: 3, Leader: 1},
			err: ErrUnknownPartition},
	})
}

func TestApplyConfig(t *testing.T) {
	set := func(typ ResourceType, name, key, value string) ConfigRecord {
		return ConfigRecord{ResourceType: typ, ResourceName: name, Name: key, Value: value}
	}
	withRetention := func(t *testing.T) *Image {
		return applyAll(t, ordersTopic(t), set(ResourceTopic, "orders", "retention.ms", "100"))
	}
	runApplyCases(t, []applyCase{
		{name: "topic override", base: ordersTopic, rec: set(ResourceTopic, "orders", "retention.ms", "100"),
			check: func(t *testing.T, img *Image) {
				if v, ok := img.ConfigValue(TopicResource("orders"), "retention.ms"); !ok || v != "100" {
					t.Errorf("retention.ms = %q, %v", v, ok)
				}
			}},
		{name: "replace", base: withRetention, rec: set(ResourceTopic, "orders", "retention.ms", "200"),
			check: func(t *testing.T, img *Image) {
				if c := img.Config(TopicResource("orders")); len(c) != 1 || c["retention.ms"] != "200" {
					t.Errorf("configs %v", c)
				}
			}},
		{name: "remove last drops the resource", base: withRetention,
			rec: ConfigRecord{ResourceType: ResourceTopic, ResourceName: "orders", Name: "retention.ms", Remove: true},
			check: func(t *testing.T, img *Image) {
				if c := img.Config(TopicResource("orders")); c != nil {
					t.Errorf("configs %v", c)
				}
				if !img.Equal(ordersAt(t, ordersTopic(t), img.Offset())) {
					t.Error("removing the only override does not give the image without it")
				}
			}},
		{name: "remove absent", base: ordersTopic,
			rec: ConfigRecord{ResourceType: ResourceTopic, ResourceName: "orders", Name: "x", Remove: true}},
		{name: "broker default", base: empty, rec: set(ResourceBroker, "", "log.retention.ms", "1")},
		{name: "broker by id", base: empty, rec: set(ResourceBroker, "12", "log.retention.ms", "1"),
			check: func(t *testing.T, img *Image) {
				if _, ok := img.ConfigValue(BrokerResource(12), "log.retention.ms"); !ok {
					t.Error("override missing")
				}
			}},
		{name: "broker name not an id", base: empty, rec: set(ResourceBroker, "012", "a", "1"), err: ErrInvalidConfig},
		{name: "unknown topic", base: brokers, rec: set(ResourceTopic, "orders", "a", "1"), err: ErrUnknownTopic},
		{name: "unknown resource type", base: empty, rec: set(ResourceType(8), "x", "a", "1"), err: ErrInvalidConfig},
		{name: "empty key", base: ordersTopic, rec: set(ResourceTopic, "orders", "", "1"), err: ErrInvalidConfig},
		{name: "removal with value", base: ordersTopic,
			rec: ConfigRecord{ResourceType: ResourceTopic, ResourceName: "orders", Name: "a", Value: "1", Remove: true}, err: ErrInvalidRecord},
	})
}

func TestApplyProducerIDs(t *testing.T) {
	block := func(first, size int64) ProducerIDsBlockRecord {
		return ProducerIDsBlockRecord{BrokerID: 1, BrokerEpoch: 10, FirstProducerID: first, Size: size}
	}
	withBlock := func(t *testing.T) *Image { return applyAll(t, brokers(t), block(0, 1000)) }
	runApplyCases(t, []applyCase{
		{name: "first block", base: brokers, rec: block(0, 1000),
			check: func(t *testing.T, img *Image) {
				if img.NextProducerID() != 1000 {
					t.Errorf("next %d", img.NextProducerID())
				}
			}},
		{name: "next block", base: withBlock, rec: block(1000, 1000)},
		{name: "overlapping block", base: withBlock, rec: block(500, 1000), err: ErrInvalidRecord},
		{name: "gap", base: withBlock, rec: block(2000, 1000), err: ErrInvalidRecord},
		{name: "empty block", base: brokers, rec: block(0, 0), err: ErrInvalidRecord},
		{name: "overflow", base: brokers, rec: block(0, -1), err: ErrInvalidRecord},
		{name: "bad broker id", base: brokers, rec: ProducerIDsBlockRecord{BrokerID: -2, Size: 1}, err: ErrInvalidRecord},
	})
}

func TestApplyRejectsPointersAndOldOffsets(t *testing.T) {
	img := brokers(t)
	if _, err := img.Apply(&TopicRecord{Name: "x", TopicID: uuidN(1)}, img.Offset()+1); !errors.Is(err, ErrUnknownRecordType) {
		t.Errorf("pointer record: %v", err)
	}
	if _, err := img.Apply(TopicRecord{Name: "x", TopicID: uuidN(1)}, img.Offset()-1); !errors.Is(err, ErrInvalidRecord) {
		t.Errorf("offset going back: %v", err)
	}
	// The records of one raft entry share its offset.
	if _, err := img.Apply(TopicRecord{Name: "x", TopicID: uuidN(1)}, img.Offset()); err != nil {
		t.Errorf("same offset: %v", err)
	}
	if err := NewBuilder(img).AdvanceTo(img.Offset() - 1); !errors.Is(err, ErrInvalidRecord) {
		t.Errorf("AdvanceTo going back: %v", err)
	}
}
