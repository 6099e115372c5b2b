package metadata

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/cluster/config"
)

// seqReader is a deterministic source of random bytes (splitmix64).
type seqReader struct{ state uint64 }

func (r *seqReader) Read(p []byte) (int, error) {
	for i := range p {
		r.state += 0x9e3779b97f4a7c15
		z := r.state
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		p[i] = byte(z ^ z>>31)
	}
	return len(p), nil
}

func testController(t *testing.T, props ...string) *Controller {
	t.Helper()
	cfg := config.NewBroker()
	for i := 0; i+1 < len(props); i += 2 {
		if err := cfg.Override(props[i], props[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	return &Controller{Config: cfg, Rand: &seqReader{}}
}

// itemErrors lists the error of every item of res, in order.
func itemErrors(res Result) []APIError {
	var out []APIError
	switch r := res.(type) {
	case *CreateTopicsResult:
		for _, t := range r.Topics {
			out = append(out, t.Error)
		}
	case *CreatePartitionsResult:
		for _, t := range r.Topics {
			out = append(out, t.Error)
		}
	case *DeleteTopicsResult:
		for _, t := range r.Topics {
			out = append(out, t.Error)
		}
	case *AlterConfigsResult:
		for _, t := range r.Resources {
			out = append(out, t.Error)
		}
	case *AutoCreateTopicsResult:
		for _, t := range r.Topics {
			out = append(out, t.Error)
		}
	case *AllocateProducerIDsResult:
		out = append(out, r.Error)
	case *RegisterBrokerResult:
		out = append(out, r.Error)
	case *BrokerHeartbeatResult:
		out = append(out, r.Error)
	case *ElectLeadersResult:
		out = append(out, r.Errors...)
	case *MoveLeadersResult:
		out = append(out, r.Errors...)
	case *AlterPartitionResult:
		for _, p := range r.Partitions {
			out = append(out, p.Error)
		}
	}
	return out
}

// evalCase is one request against an image: the code of each item (nil:
// none), a substring of each failed item's message, and a check of the
// records (after they applied to the image).
type evalCase struct {
	name  string
	img   func(t *testing.T) *Image
	props []string
	req   Request
	codes []*kerr.Error
	msgs  []string
	check func(t *testing.T, res Result, recs []Record, after *Image)
}

func runEvalCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := threeBrokers(t)
			if c.img != nil {
				img = c.img(t)
			}
			res, recs := testController(t, c.props...).Evaluate(img, c.req)
			errs := itemErrors(res)
			if len(errs) != len(c.codes) {
				t.Fatalf("%d items, want %d: %+v", len(errs), len(c.codes), errs)
			}
			for i, e := range errs {
				want := int16(0)
				if c.codes[i] != nil {
					want = c.codes[i].Code
				}
				if e.Code != want {
					t.Errorf("item %d: %v (%s), want %v", i, kerr.ErrorForCode(e.Code), e.Message, c.codes[i])
				}
				if i < len(c.msgs) && !strings.Contains(e.Message, c.msgs[i]) {
					t.Errorf("item %d: message %q, want it to contain %q", i, e.Message, c.msgs[i])
				}
			}
			after := img
			if len(recs) > 0 {
				after = applyAll(t, img, recs...)
			}
			if c.check != nil {
				c.check(t, res, recs, after)
			}
		})
	}
}

func noRecords(t *testing.T, _ Result, recs []Record, _ *Image) {
	t.Helper()
	if len(recs) != 0 {
		t.Fatalf("%d records, want none", len(recs))
	}
}

func topic(name string, parts int32, rf int16, configs ...string) CreatableTopic {
	t := CreatableTopic{Name: name, NumPartitions: parts, ReplicationFactor: rf}
	for i := 0; i+1 < len(configs); i += 2 {
		t.Configs = append(t.Configs, ConfigValue{Name: configs[i], Value: strp(configs[i+1])})
	}
	return t
}

func manual(name string, lists ...[]int32) CreatableTopic {
	t := CreatableTopic{Name: name, NumPartitions: -1, ReplicationFactor: -1}
	for i, l := range lists {
		t.Assignments = append(t.Assignments, ReplicaAssignment{Partition: int32(i), Replicas: l})
	}
	return t
}

func withOrders(t *testing.T) *Image { return withTopic(t, threeBrokers(t), "orders", 1, 2, 2) }

func TestEvaluateCreateTopics(t *testing.T) {
	tooMany := make([]CreatableTopic, 11)
	for i := range tooMany {
		tooMany[i] = topic(fmt.Sprintf("t%d", i), 1000, 1)
	}
	runEvalCases(t, []evalCase{
		{name: "created", req: &CreateTopicsRequest{Topics: []CreatableTopic{topic("new", 3, 2, "retention.ms", "1000")}},
			codes: []*kerr.Error{nil},
			check: func(t *testing.T, res Result, recs []Record, after *Image) {
				ct := res.(*CreateTopicsResult).Topics[0]
				top, ok := after.Topic("new")
				if !ok || top.ID() != ct.TopicID || ct.NumPartitions != 3 || ct.ReplicationFactor != 2 || top.NumPartitions() != 3 {
					t.Fatalf("result %+v, topic %v", ct, top)
				}
				for i := range int32(3) {
					p, _ := top.Partition(i)
					if len(p.Replicas) != 2 || !slices.Equal(p.ISR, p.Replicas) || p.Leader != p.Replicas[0] {
						t.Fatalf("partition %d: %+v", i, p)
					}
				}
				if v, _ := after.ConfigValue(TopicResource("new"), "retention.ms"); v != "1000" {
					t.Fatalf("retention.ms %q", v)
				}
				found := false
				for _, c := range ct.Configs {
					if c.Name == "retention.ms" {
						found = c.Value != nil && *c.Value == "1000"
					}
				}
				if !found {
					t.Fatalf("configs %+v lack retention.ms=1000", ct.Configs)
				}
			}},
		{name: "defaults and min.insync.replicas=2 at rf 3", req: &CreateTopicsRequest{Topics: []CreatableTopic{topic("d", -1, -1)}},
			codes: []*kerr.Error{nil},
			check: func(t *testing.T, res Result, _ []Record, after *Image) {
				ct := res.(*CreateTopicsResult).Topics[0]
				if ct.NumPartitions != 1 || ct.ReplicationFactor != 3 {
					t.Fatalf("%+v", ct)
				}
				if v, _ := after.ConfigValue(TopicResource("d"), "min.insync.replicas"); v != "2" {
					t.Fatalf("min.insync.replicas %q", v)
				}
			}},
		{name: "validate only", req: &CreateTopicsRequest{ValidateOnly: true, Topics: []CreatableTopic{topic("v", 1, 1)}},
			codes: []*kerr.Error{nil}, check: func(t *testing.T, res Result, recs []Record, after *Image) {
				noRecords(t, res, recs, after)
				if res.(*CreateTopicsResult).Topics[0].TopicID.IsZero() {
					t.Fatal("a creatable topic's result has no id")
				}
			}},
		{name: "refusals", img: withOrders, req: &CreateTopicsRequest{Topics: []CreatableTopic{
			topic("dup", 1, 1), topic("dup", 1, 1), topic("orders", 1, 1), topic("__consumer_offsets", 1, 1),
			topic("__cluster_metadata", 1, 1), topic("bad/name", 1, 1), topic("rf0", 1, 0), topic("p0", 0, 1),
			topic("rf4", 1, 4), {Name: "null", NumPartitions: 1, ReplicationFactor: 1, Configs: []ConfigValue{{Name: "retention.ms"}}},
			topic("badval", 1, 1, "retention.ms", "soon"), topic("ok", 1, 1),
		}}, codes: []*kerr.Error{kerr.InvalidRequest, kerr.InvalidRequest, kerr.TopicAlreadyExists, kerr.InvalidRequest,
			kerr.InvalidRequest, kerr.InvalidTopicException, kerr.InvalidReplicationFactor, kerr.InvalidPartitions,
			kerr.InvalidReplicationFactor, kerr.InvalidConfig, kerr.InvalidConfig, nil},
			msgs: []string{"Duplicate topic name.", "Duplicate topic name.", "Topic 'orders' already exists.",
				"Creation of internal topic __consumer_offsets is prohibited.", "Creation of internal topic __cluster_metadata",
				"", "Replication factor must be larger than 0", "Number of partitions was set to an invalid non-positive value.",
				"only 3 unfenced broker(s)", "Null value not supported for topic configs: retention.ms", "retention.ms"},
			check: func(t *testing.T, _ Result, recs []Record, after *Image) {
				if after.NumTopics() != 2 {
					t.Fatalf("%d topics after, want orders and ok", after.NumTopics())
				}
			}},
		{name: "colliding names in one request", req: &CreateTopicsRequest{Topics: []CreatableTopic{topic("a.b", 1, 1), topic("a_b", 1, 1)}},
			codes: []*kerr.Error{nil, kerr.InvalidTopicException}},
		{name: "manual assignment", req: &CreateTopicsRequest{Topics: []CreatableTopic{manual("m", []int32{3, 1}, []int32{2, 3})}},
			codes: []*kerr.Error{nil}, check: func(t *testing.T, _ Result, _ []Record, after *Image) {
				top, _ := after.Topic("m")
				p1, _ := top.Partition(1)
				if !slices.Equal(p1.Replicas, []int32{2, 3}) || p1.Leader != 2 {
					t.Fatalf("partition 1: %+v", p1)
				}
			}},
		{name: "manual assignment refusals", req: &CreateTopicsRequest{Topics: []CreatableTopic{
			{Name: "rf", NumPartitions: -1, ReplicationFactor: 2, Assignments: []ReplicaAssignment{{Partition: 0, Replicas: []int32{1}}}},
			{Name: "np", NumPartitions: 1, ReplicationFactor: -1, Assignments: []ReplicaAssignment{{Partition: 0, Replicas: []int32{1}}}},
			{Name: "gap", NumPartitions: -1, ReplicationFactor: -1, Assignments: []ReplicaAssignment{{Partition: 1, Replicas: []int32{1}}}},
			manual("unknown", []int32{9}), manual("twice", []int32{1, 1}), manual("uneven", []int32{1, 2}, []int32{1}),
			manual("empty", []int32{}),
		}}, codes: []*kerr.Error{kerr.InvalidRequest, kerr.InvalidRequest, kerr.InvalidReplicaAssignment,
			kerr.InvalidReplicaAssignment, kerr.InvalidReplicaAssignment, kerr.InvalidReplicaAssignment, kerr.InvalidReplicaAssignment},
			msgs: []string{"replication factor was not set to -1", "numPartitions was not set to -1", "consecutive 0-based",
				"broker 9, but no such broker is registered", "broker 1 more than once", "1 replica(s)", "empty replica list"},
			check: noRecords},
		{name: "too many partitions", req: &CreateTopicsRequest{Topics: tooMany},
			codes: []*kerr.Error{kerr.PolicyViolation, kerr.PolicyViolation, kerr.PolicyViolation, kerr.PolicyViolation,
				kerr.PolicyViolation, kerr.PolicyViolation, kerr.PolicyViolation, kerr.PolicyViolation, kerr.PolicyViolation,
				kerr.PolicyViolation, kerr.PolicyViolation},
			msgs: []string{"Excessively large number of partitions per request."}, check: noRecords},
	})
}

// An operation over MaxRecordsPerOp fails every topic that would have
// been created, validate_only included, and the refused ones keep their
// errors.
func TestEvaluateCreateTopicsOpTooLarge(t *testing.T) {
	var topics []CreatableTopic
	for i := range 4000 {
		topics = append(topics, topic(fmt.Sprintf("big-%d", i), 2, 1, "retention.ms", "1000"))
	}
	topics = append(topics, topic("__consumer_offsets", 1, 1))
	for _, validate := range []bool{false, true} {
		res, recs := testController(t).Evaluate(threeBrokers(t), &CreateTopicsRequest{Topics: topics, ValidateOnly: validate})
		errs := itemErrors(res)
		if len(recs) != 0 || errs[0].Code != kerr.PolicyViolation.Code || errs[0].Message != "Unable to perform excessively large batch operation." ||
			errs[len(errs)-1].Code != kerr.InvalidRequest.Code {
			t.Fatalf("validate %v: %d records, first %+v, last %+v", validate, len(recs), errs[0], errs[len(errs)-1])
		}
	}
}

func TestEvaluateCreatePartitions(t *testing.T) {
	withInternal := func(t *testing.T) *Image { return withTopic(t, withOrders(t), ConsumerOffsetsTopic, 2, 1, 1) }
	runEvalCases(t, []evalCase{
		{name: "placed", img: withOrders, req: &CreatePartitionsRequest{Topics: []PartitionsIncrease{{Name: "orders", Count: 4}}},
			codes: []*kerr.Error{nil}, check: func(t *testing.T, _ Result, recs []Record, after *Image) {
				top, _ := after.Topic("orders")
				p3, _ := top.Partition(3)
				if len(recs) != 2 || top.NumPartitions() != 4 || len(p3.Replicas) != 2 {
					t.Fatalf("%d records, %d partitions, p3 %+v", len(recs), top.NumPartitions(), p3)
				}
			}},
		{name: "assigned", img: withOrders, req: &CreatePartitionsRequest{Topics: []PartitionsIncrease{{Name: "orders", Count: 3, Assigned: true, Assignments: [][]int32{{3, 1}}}}},
			codes: []*kerr.Error{nil}, check: func(t *testing.T, _ Result, _ []Record, after *Image) {
				p, _ := after.Partition(uuidN(1), 2)
				if !slices.Equal(p.Replicas, []int32{3, 1}) {
					t.Fatalf("p2 %+v", p)
				}
			}},
		{name: "validate only", img: withOrders, req: &CreatePartitionsRequest{ValidateOnly: true, Topics: []PartitionsIncrease{{Name: "orders", Count: 4}}},
			codes: []*kerr.Error{nil}, check: noRecords},
		{name: "refusals", img: withInternal, req: &CreatePartitionsRequest{Topics: []PartitionsIncrease{
			{Name: "nope", Count: 2}, {Name: ConsumerOffsetsTopic, Count: 2}, {Name: "orders", Count: 1}, {Name: "orders", Count: 2},
		}}, codes: []*kerr.Error{kerr.UnknownTopicOrPartition, kerr.InvalidTopicException, kerr.InvalidRequest, kerr.InvalidRequest},
			msgs: []string{"", "Cannot add partitions to internal topic __consumer_offsets.", "Duplicate topic name."}, check: noRecords},
		{name: "not an increase", img: withOrders, req: &CreatePartitionsRequest{Topics: []PartitionsIncrease{{Name: "orders", Count: 1}}},
			codes: []*kerr.Error{kerr.InvalidPartitions}, msgs: []string{"currently has 2 partition(s); 1 would not be an increase."}},
		{name: "same count", img: withOrders, req: &CreatePartitionsRequest{Topics: []PartitionsIncrease{{Name: "orders", Count: 2}}},
			codes: []*kerr.Error{kerr.InvalidPartitions}, msgs: []string{"Topic already has 2 partition(s)."}},
		{name: "assignment count", img: withOrders, req: &CreatePartitionsRequest{Topics: []PartitionsIncrease{{Name: "orders", Count: 4, Assigned: true, Assignments: [][]int32{{1, 2}}}}},
			codes: []*kerr.Error{kerr.InvalidReplicaAssignment}, msgs: []string{"Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified."}},
		{name: "assignment of another replication factor", img: withOrders, req: &CreatePartitionsRequest{Topics: []PartitionsIncrease{{Name: "orders", Count: 3, Assigned: true, Assignments: [][]int32{{1}}}}},
			codes: []*kerr.Error{kerr.InvalidReplicaAssignment}},
		{name: "too many", img: withOrders, req: &CreatePartitionsRequest{Topics: []PartitionsIncrease{{Name: "orders", Count: 20000}}},
			codes: []*kerr.Error{kerr.PolicyViolation}, check: noRecords},
	})
}

func TestEvaluateDeleteTopics(t *testing.T) {
	withTwo := func(t *testing.T) *Image {
		return withTopic(t, withTopic(t, withOrders(t), "logs", 2, 1, 1), ConsumerOffsetsTopic, 3, 1, 1)
	}
	runEvalCases(t, []evalCase{
		{name: "by name and id", img: withTwo, req: &DeleteTopicsRequest{Topics: []TopicRef{{Name: strp("orders")}, {ID: uuidN(2)}}},
			codes: []*kerr.Error{nil, nil}, check: func(t *testing.T, res Result, recs []Record, after *Image) {
				d := res.(*DeleteTopicsResult).Topics
				if *d[1].Name != "logs" || d[0].ID != uuidN(1) || after.NumTopics() != 1 || len(recs) != 2 {
					t.Fatalf("%+v, %d topics after", d, after.NumTopics())
				}
			}},
		{name: "refusals", img: withTwo, req: &DeleteTopicsRequest{Topics: []TopicRef{
			{Name: strp("orders"), ID: uuidN(1)}, {}, {Name: strp("nope")}, {ID: uuidN(50)}, {Name: strp(ConsumerOffsetsTopic)},
			{Name: strp("logs")}, {Name: strp("logs")}, {ID: uuidN(1)}, {ID: uuidN(1)},
		}}, codes: []*kerr.Error{kerr.InvalidRequest, kerr.InvalidRequest, kerr.UnknownTopicOrPartition, kerr.UnknownTopicID,
			kerr.InvalidTopicException, kerr.InvalidRequest, kerr.InvalidRequest, kerr.InvalidRequest, kerr.InvalidRequest},
			msgs: []string{"You may not specify both topic name and topic id.", "Neither topic name nor id were specified.", "", "",
				"Cannot delete internal topic __consumer_offsets.", "Duplicate topic name.", "Duplicate topic name.", "Duplicate topic id."},
			check: noRecords},
		{name: "a name and the id of the same topic", img: withTwo, req: &DeleteTopicsRequest{Topics: []TopicRef{{ID: uuidN(1)}, {Name: strp("orders")}}},
			codes: []*kerr.Error{nil, kerr.InvalidRequest}, msgs: []string{"", "maps to an ID that was already supplied"}},
		{name: "disabled", img: withTwo, props: []string{"delete.topic.enable", "false"},
			req:   &DeleteTopicsRequest{Topics: []TopicRef{{Name: strp("orders")}}},
			codes: []*kerr.Error{kerr.TopicDeletionDisabled}, msgs: []string{"Topic deletion is disabled."}, check: noRecords},
	})
}

func TestEvaluateAlterConfigs(t *testing.T) {
	withOverrides := func(t *testing.T) *Image {
		return applyAll(t, withOrders(t),
			ConfigRecord{ResourceType: ResourceTopic, ResourceName: "orders", Name: "retention.ms", Value: "1000"},
			ConfigRecord{ResourceType: ResourceTopic, ResourceName: "orders", Name: "segment.ms", Value: "60000"})
	}
	overrides := func(want map[string]string) func(t *testing.T, _ Result, _ []Record, after *Image) {
		return func(t *testing.T, _ Result, _ []Record, after *Image) {
			t.Helper()
			got := after.Config(TopicResource("orders"))
			if len(got) != len(want) {
				t.Fatalf("overrides %v, want %v", got, want)
			}
			for k, v := range want {
				if got[k] != v {
					t.Fatalf("overrides %v, want %v", got, want)
				}
			}
		}
	}
	res := func(typ int8, name string, cs ...ConfigChange) AlterConfigsResource {
		return AlterConfigsResource{Type: typ, Name: name, Configs: cs}
	}
	set := func(name, value string) ConfigChange { return ConfigChange{Name: name, Op: OpSet, Value: strp(value)} }
	runEvalCases(t, []evalCase{
		{name: "replace", img: withOverrides, req: &AlterConfigsRequest{Node: 1, Resources: []AlterConfigsResource{res(2, "orders", set("retention.ms", "5"))}},
			codes: []*kerr.Error{nil}, check: overrides(map[string]string{"retention.ms": "5"})},
		{name: "incremental", img: withOverrides, req: &AlterConfigsRequest{Node: 1, Incremental: true, Resources: []AlterConfigsResource{res(2, "orders",
			set("retention.ms", "5"), ConfigChange{Name: "segment.ms", Op: OpDelete},
			ConfigChange{Name: "cleanup.policy", Op: OpAppend, Value: strp("compact")})}},
			codes: []*kerr.Error{nil}, check: overrides(map[string]string{"retention.ms": "5", "cleanup.policy": "delete,compact"})},
		{name: "validate only", img: withOverrides, req: &AlterConfigsRequest{Node: 1, ValidateOnly: true, Resources: []AlterConfigsResource{res(2, "orders")}},
			codes: []*kerr.Error{nil}, check: noRecords},
		{name: "refusals", img: withOverrides, req: &AlterConfigsRequest{Node: 1, Incremental: true, Resources: []AlterConfigsResource{
			res(2, "nope", set("retention.ms", "5")), res(2, "orders", set("retention.ms", "soon")),
			res(4, "", set("log.retention.ms", "5")), res(4, "2"), res(4, "x"), res(8, "1"), res(2, "dup"), res(2, "dup"),
		}}, codes: []*kerr.Error{kerr.UnknownTopicOrPartition, kerr.InvalidConfig, kerr.InvalidRequest, kerr.InvalidRequest,
			kerr.InvalidRequest, kerr.InvalidRequest, kerr.InvalidRequest, kerr.InvalidRequest},
			msgs: []string{"", "retention.ms", "Cannot update these configs dynamically: Set(log.retention.ms)",
				"Unexpected broker id, expected 1 or empty string, but received 2", "Broker id must be an integer, but it is: x",
				"Unexpected resource type BROKER_LOGGER.", "Duplicate resource.", "Duplicate resource."},
			check: noRecords},
		{name: "incremental refusals", img: withOverrides, req: &AlterConfigsRequest{Node: 1, Incremental: true, Resources: []AlterConfigsResource{
			res(2, "orders", set("retention.ms", "5"), set("retention.ms", "6")),
		}}, codes: []*kerr.Error{kerr.InvalidRequest}, msgs: []string{"Error due to duplicate config keys"}},
		{name: "append to a non-list", img: withOverrides, req: &AlterConfigsRequest{Node: 1, Incremental: true, Resources: []AlterConfigsResource{
			res(2, "orders", ConfigChange{Name: "retention.ms", Op: OpAppend, Value: strp("5")}),
		}}, codes: []*kerr.Error{kerr.InvalidConfig}, msgs: []string{"Can't APPEND to key retention.ms because its type is not LIST."}},
		{name: "null in replace", img: withOverrides, req: &AlterConfigsRequest{Node: 1, Resources: []AlterConfigsResource{
			res(2, "orders", ConfigChange{Name: "retention.ms"}),
		}}, codes: []*kerr.Error{kerr.InvalidConfig}, msgs: []string{"Null value not supported for topic configs: retention.ms"}},
		{name: "unknown op", img: withOverrides, req: &AlterConfigsRequest{Node: 1, Incremental: true, Resources: []AlterConfigsResource{
			res(2, "orders", ConfigChange{Name: "retention.ms", Op: 9}),
		}}, codes: []*kerr.Error{kerr.InvalidRequest}, msgs: []string{"Unknown alter config operation type 9"}},
	})
}

func TestEvaluateAutoCreateTopics(t *testing.T) {
	runEvalCases(t, []evalCase{
		{name: "created with defaults", img: withOrders, req: &AutoCreateTopicsRequest{Names: []string{"orders", "fresh", TransactionStateTopic, ConsumerOffsetsTopic}},
			codes: []*kerr.Error{nil, nil, kerr.UnknownTopicOrPartition, nil},
			check: func(t *testing.T, _ Result, _ []Record, after *Image) {
				fresh, _ := after.Topic("fresh")
				offsets, ok := after.Topic(ConsumerOffsetsTopic)
				p0, _ := fresh.Partition(0)
				if fresh.NumPartitions() != 1 || len(p0.Replicas) != 3 || !ok || offsets.NumPartitions() != 50 {
					t.Fatalf("fresh %d partitions rf %d, offsets %v", fresh.NumPartitions(), len(p0.Replicas), offsets)
				}
				if v, _ := after.ConfigValue(TopicResource(ConsumerOffsetsTopic), "cleanup.policy"); v != "compact" {
					t.Fatalf("__consumer_offsets cleanup.policy %q", v)
				}
				if v, _ := after.ConfigValue(TopicResource("fresh"), "min.insync.replicas"); v != "2" {
					t.Fatalf("fresh min.insync.replicas %q", v)
				}
			}},
	})
}

// Auto-creation creates one bounded operation's worth of topics and
// answers the rest LEADER_NOT_AVAILABLE.
func TestEvaluateAutoCreateSplit(t *testing.T) {
	names := make([]string, MaxRecordsPerOp/3+50) // three records a topic (rf 3: min.insync.replicas)
	for i := range names {
		names[i] = fmt.Sprintf("auto-%d", i)
	}
	res, recs := testController(t).Evaluate(threeBrokers(t), &AutoCreateTopicsRequest{Names: names})
	created, later := 0, 0
	for _, e := range itemErrors(res) {
		switch e.Code {
		case 0:
			created++
		case kerr.LeaderNotAvailable.Code:
			later++
		default:
			t.Fatalf("unexpected %+v", e)
		}
	}
	if later == 0 || created == 0 || len(recs) > MaxRecordsPerOp || len(recs) != 3*created {
		t.Fatalf("%d created, %d later, %d records", created, later, len(recs))
	}
}

func TestEvaluateAllocateProducerIDs(t *testing.T) {
	nearEnd := func(t *testing.T) *Image {
		return applyAll(t, threeBrokers(t), ProducerIDsBlockRecord{BrokerID: 1, BrokerEpoch: 10, FirstProducerID: 0, Size: math.MaxInt64 - 500})
	}
	runEvalCases(t, []evalCase{
		{name: "block", req: &AllocateProducerIDsRequest{BrokerID: 2, BrokerEpoch: 10}, codes: []*kerr.Error{nil},
			check: func(t *testing.T, res Result, _ []Record, after *Image) {
				r := res.(*AllocateProducerIDsResult)
				if r.FirstProducerID != 0 || r.Size != DefaultProducerIDBlockSize || after.NextProducerID() != DefaultProducerIDBlockSize {
					t.Fatalf("%+v, next %d", r, after.NextProducerID())
				}
			}},
		{name: "stale epoch", req: &AllocateProducerIDsRequest{BrokerID: 2, BrokerEpoch: 9}, codes: []*kerr.Error{kerr.StaleBrokerEpoch}, check: noRecords},
		{name: "unregistered", req: &AllocateProducerIDsRequest{BrokerID: 7, BrokerEpoch: 1}, codes: []*kerr.Error{kerr.BrokerIDNotRegistered}, check: noRecords},
		{name: "exhausted", img: nearEnd, req: &AllocateProducerIDsRequest{BrokerID: 1, BrokerEpoch: 10}, codes: []*kerr.Error{kerr.UnknownServerError}, check: noRecords},
	})
}

// Fail keeps the refusals and turns the successes into the error; an
// auto-creation that did not apply is LEADER_NOT_AVAILABLE, for the retry.
func TestResultFail(t *testing.T) {
	timedOut := APIError{Code: kerr.RequestTimedOut.Code, Message: "late"}
	res, _ := testController(t).Evaluate(threeBrokers(t), &CreateTopicsRequest{Topics: []CreatableTopic{topic("ok", 1, 1), topic("bad", 0, 1)}})
	res.Fail(timedOut)
	ct := res.(*CreateTopicsResult).Topics
	if ct[0].Error != timedOut || !ct[0].TopicID.IsZero() || ct[1].Error.Code != kerr.InvalidPartitions.Code {
		t.Fatalf("%+v", ct)
	}
	auto := (&AutoCreateTopicsRequest{Names: []string{"a"}}).Refused(timedOut).(*AutoCreateTopicsResult)
	if auto.Topics[0].Error.Code != kerr.LeaderNotAvailable.Code || auto.Topics[0].Error.Message != "late" {
		t.Fatalf("%+v", auto.Topics[0])
	}
}
