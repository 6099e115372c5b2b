package wire

import (
	"context"
	"errors"
	"maps"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func createTopicsReq(v int16, validateOnly bool) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version, req.ValidateOnly, req.TimeoutMillis = v, validateOnly, 5000
	return req
}

func plainTopic(name string, parts int32, rf int16, configs ...string) kmsg.CreateTopicsRequestTopic {
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, parts, rf
	for i := 0; i+1 < len(configs); i += 2 {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = configs[i], kmsg.StringPtr(configs[i+1])
		t.Configs = append(t.Configs, c)
	}
	return t
}

func manualTopic(name string, lists [][]int32) kmsg.CreateTopicsRequestTopic {
	t := plainTopic(name, -1, -1)
	for i, l := range lists {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(i), l
		t.ReplicaAssignment = append(t.ReplicaAssignment, a)
	}
	return t
}

// configOf finds a config in a kadm describe result.
func configOf(t *testing.T, rc kadm.ResourceConfig, key string) kadm.Config {
	t.Helper()
	for _, c := range rc.Configs {
		if c.Key == key {
			return c
		}
	}
	t.Fatalf("%s: no config %s", rc.Name, key)
	return kadm.Config{}
}

// The whole life of a topic through kadm (franz-go's admin client, which
// uses each API's newest version): create, list, grow, describe, alter
// incrementally and wholesale, delete.
func TestAdminTopicLifecycle(t *testing.T) {
	s, b := startBroker(t, nil)
	adm, ctx := newAdmin(t, s), testCtx(t)

	created, err := adm.CreateTopic(ctx, 3, 1, map[string]*string{"retention.ms": kmsg.StringPtr("1000")}, "life")
	if err != nil || created.Err != nil {
		t.Fatalf("create: %v %v %s", err, created.Err, created.ErrMessage)
	}
	top, ok := b.Image().Topic("life")
	if !ok || [16]byte(created.ID) != top.ID() || created.NumPartitions != 3 || created.ReplicationFactor != 1 {
		t.Fatalf("created %+v, image %v", created, top)
	}
	if c := created.Configs["retention.ms"]; deref(c.Value) != "1000" || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("created configs: retention.ms %+v", c)
	}
	// kadm returns the topic's error as the call's error too.
	if again, _ := adm.CreateTopic(ctx, 1, 1, nil, "life"); !errors.Is(again.Err, kerr.TopicAlreadyExists) {
		t.Fatalf("create again: %v", again.Err)
	}

	listed, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := listed["life"]; len(d.Partitions) != 3 || d.ID != kadm.TopicID(top.ID()) || d.Partitions[2].Leader != 1 {
		t.Fatalf("listed %+v", d)
	}

	if v, err := adm.ValidateCreatePartitions(ctx, 2, "life"); err != nil || v["life"].Err != nil {
		t.Fatalf("validate create partitions: %v %v", err, v["life"].Err)
	}
	if top, _ := b.Image().Topic("life"); top.NumPartitions() != 3 {
		t.Fatal("validate_only grew the topic")
	}
	if cp, err := adm.CreatePartitions(ctx, 2, "life"); err != nil || cp["life"].Err != nil {
		t.Fatalf("create partitions: %v %v", err, cp["life"].Err)
	}
	top, _ = b.Image().Topic("life")
	if top.NumPartitions() != 5 || b.Replica(top.ID(), 4) == nil {
		t.Fatalf("grown to %d partitions", top.NumPartitions())
	}
	if cp, _ := adm.UpdatePartitions(ctx, 4, "life"); !errors.Is(cp["life"].Err, kerr.InvalidPartitions) {
		t.Fatalf("shrink: %v", cp["life"].Err)
	}

	described := describeTopic(t, adm, "life")
	if c := configOf(t, described, "retention.ms"); deref(c.Value) != "1000" || c.Source != kmsg.ConfigSourceDynamicTopicConfig ||
		len(c.Synonyms) < 2 || c.Synonyms[0].Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("retention.ms %+v", c)
	}
	if c := configOf(t, described, "segment.bytes"); deref(c.Value) != "1073741824" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("segment.bytes %+v", c)
	}

	alters := []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "segment.ms", Value: kmsg.StringPtr("3600000")},
		{Op: kadm.DeleteConfig, Name: "retention.ms"},
		{Op: kadm.AppendConfig, Name: "cleanup.policy", Value: kmsg.StringPtr("compact")},
	}
	if ar, err := adm.ValidateAlterTopicConfigs(ctx, alters, "life"); err != nil || ar[0].Err != nil {
		t.Fatalf("validate alter: %v %+v", err, ar)
	}
	if got := b.Image().Config(metadata.TopicResource("life")); !maps.Equal(got, map[string]string{"retention.ms": "1000"}) {
		t.Fatalf("validate_only changed the configs: %v", got)
	}
	if ar, err := adm.AlterTopicConfigs(ctx, alters, "life"); err != nil || ar[0].Err != nil {
		t.Fatalf("alter: %v %+v", err, ar)
	}
	want := map[string]string{"segment.ms": "3600000", "cleanup.policy": "delete,compact"}
	if got := b.Image().Config(metadata.TopicResource("life")); !maps.Equal(got, want) {
		t.Fatalf("after incremental alter: %v, want %v", got, want)
	}
	described = describeTopic(t, adm, "life")
	if c := configOf(t, described, "segment.ms"); deref(c.Value) != "3600000" || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("segment.ms %+v", c)
	}
	if c := configOf(t, described, "retention.ms"); deref(c.Value) != "604800000" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("retention.ms after delete %+v", c)
	}

	state := []kadm.AlterConfig{{Name: "max.message.bytes", Value: kmsg.StringPtr("2000")}}
	if ar, err := adm.AlterTopicConfigsState(ctx, state, "life"); err != nil || ar[0].Err != nil {
		t.Fatalf("alter state: %v %+v", err, ar)
	}
	if got := b.Image().Config(metadata.TopicResource("life")); !maps.Equal(got, map[string]string{"max.message.bytes": "2000"}) {
		t.Fatalf("after AlterConfigs: %v", got)
	}

	deleted, err := adm.DeleteTopics(ctx, "life")
	if err != nil || deleted["life"].Err != nil {
		t.Fatalf("delete: %v %v", err, deleted["life"].Err)
	}
	if _, ok := b.Image().Topic("life"); ok || b.Replica(top.ID(), 0) != nil {
		t.Fatal("topic or replica survived deletion")
	}
	if deleted, _ := adm.DeleteTopics(ctx, "life"); !errors.Is(deleted["life"].Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("delete again: %v", deleted["life"].Err)
	}
}

func describeTopic(t *testing.T, adm *kadm.Client, topic string) kadm.ResourceConfig {
	t.Helper()
	rcs, err := adm.DescribeTopicConfigs(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("describe %s: %v %v", topic, err, rc.Err)
	}
	return rc
}

// Bad CreateTopics input gets Kafka's codes, and nothing is created.
func TestCreateTopicsBadInput(t *testing.T) {
	s, b := startBroker(t, nil)
	c := dial(t, s)
	req := createTopicsReq(7, false)
	req.Topics = []kmsg.CreateTopicsRequestTopic{
		plainTopic(strings.Repeat("a", 250), 1, 1),
		plainTopic("bad/name", 1, 1),
		plainTopic(".", 1, 1),
		plainTopic("cfg", 1, 1, "retention.ms", "soon"),
		plainTopic("cfg2", 1, 1, "no.such.config", "1"),
		plainTopic("rf", 1, 2),
		plainTopic("rf0", 1, 0),
		plainTopic("p0", 0, 1),
		plainTopic("dup", 1, 1),
		plainTopic("dup", 1, 1),
		manualTopic("gap", [][]int32{{1}, nil}),
		manualTopic("ghost", [][]int32{{7}}),
		manualTopic("twice", [][]int32{{1, 1}}),
		plainTopic("ok", 2, -1),
	}
	nullCfg := plainTopic("nullcfg", 1, 1)
	nullCfg.Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "retention.ms"}}
	req.Topics = append(req.Topics, nullCfg)
	manualRF := manualTopic("manualrf", [][]int32{{1}})
	manualRF.ReplicationFactor = 1
	req.Topics = append(req.Topics, manualRF)
	want := []*kerr.Error{kerr.InvalidTopicException, kerr.InvalidTopicException, kerr.InvalidTopicException,
		kerr.InvalidConfig, kerr.InvalidConfig, kerr.InvalidReplicationFactor, kerr.InvalidReplicationFactor,
		kerr.InvalidPartitions, kerr.InvalidRequest, kerr.InvalidRequest, kerr.InvalidReplicaAssignment,
		kerr.InvalidReplicaAssignment, kerr.InvalidReplicaAssignment, nil, kerr.InvalidConfig, kerr.InvalidRequest}
	resp := roundTrip[*kmsg.CreateTopicsResponse](c, req)
	if len(resp.Topics) != len(want) {
		t.Fatalf("%d results for %d topics", len(resp.Topics), len(want))
	}
	for i, rt := range resp.Topics {
		wantCode(t, rt.Topic, rt.ErrorCode, want[i])
		if want[i] != nil && (rt.ErrorMessage == nil || *rt.ErrorMessage == "" || rt.NumPartitions != -1) {
			t.Fatalf("%s: message %v, partitions %d", rt.Topic, rt.ErrorMessage, rt.NumPartitions)
		}
	}
	if msg := deref(resp.Topics[3].ErrorMessage); !strings.Contains(msg, "retention.ms") || strings.Contains(msg, "config:") {
		t.Fatalf("config error message %q", msg)
	}
	if names := slices.Collect(func(yield func(string) bool) {
		for _, tp := range b.Image().Topics() {
			yield(tp.Name())
		}
	}); !slices.Equal(names, []string{"ok"}) {
		t.Fatalf("topics created: %v", names)
	}
	// Too many partitions in one request: all refused.
	req = createTopicsReq(7, false)
	req.Topics = []kmsg.CreateTopicsRequestTopic{plainTopic("huge", 1<<30, 1), plainTopic("small", 1, 1)}
	resp = roundTrip[*kmsg.CreateTopicsResponse](c, req)
	for _, rt := range resp.Topics {
		wantCode(t, rt.Topic, rt.ErrorCode, kerr.PolicyViolation)
	}
}

// Every CreateTopics version creates topics, honours validate_only (v1+)
// and fills the fields it has.
func TestCreateTopicsEveryVersion(t *testing.T) {
	s, b := startBroker(t, map[string]string{"num.partitions": "2"})
	c := dial(t, s)
	for v := int16(0); v <= 7; v++ {
		name := "ct" + string(rune('0'+v))
		if v >= 1 {
			req := createTopicsReq(v, true)
			req.Topics = append(req.Topics, plainTopic(name, 3, 1))
			resp := roundTrip[*kmsg.CreateTopicsResponse](c, req)
			wantCode(t, "validate "+name, resp.Topics[0].ErrorCode, nil)
			if _, ok := b.Image().Topic(name); ok {
				t.Fatalf("v%d validate_only created %s", v, name)
			}
		}
		req := createTopicsReq(v, false)
		req.Topics = append(req.Topics, plainTopic(name, -1, -1, "cleanup.policy", "compact"))
		resp := roundTrip[*kmsg.CreateTopicsResponse](c, req)
		rt := resp.Topics[0]
		wantCode(t, name, rt.ErrorCode, nil)
		top, ok := b.Image().Topic(name)
		if !ok || top.NumPartitions() != 2 {
			t.Fatalf("v%d: %s not created with the default partitions", v, name)
		}
		if v >= 5 && (rt.NumPartitions != 2 || rt.ReplicationFactor != 1 || len(rt.Configs) == 0) {
			t.Fatalf("v%d: %+v", v, rt)
		}
		if v >= 7 && metadata.UUID(rt.TopicID) != top.ID() {
			t.Fatalf("v%d topic id %x", v, rt.TopicID)
		}
		resp = roundTrip[*kmsg.CreateTopicsResponse](c, req)
		wantCode(t, name+" again", resp.Topics[0].ErrorCode, kerr.TopicAlreadyExists)
	}
}

// Every DeleteTopics version deletes by name (by id from v6), and a
// broker with delete.topic.enable=false refuses with the code the version
// knows.
func TestDeleteTopicsEveryVersion(t *testing.T) {
	s, b := startBroker(t, nil)
	c := dial(t, s)
	for v := int16(1); v <= 6; v++ {
		name := "dt" + string(rune('0'+v))
		top := newTopic(t, b, name, 1)
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.Version, req.TimeoutMillis = v, 5000
		if v < 6 {
			req.TopicNames = []string{name, "missing"}
		} else {
			byID := kmsg.NewDeleteTopicsRequestTopic()
			byID.TopicID = top.ID()
			missing := kmsg.NewDeleteTopicsRequestTopic()
			missing.TopicID = metadata.UUID{0xee}
			req.Topics = []kmsg.DeleteTopicsRequestTopic{byID, missing}
		}
		resp := roundTrip[*kmsg.DeleteTopicsResponse](c, req)
		if len(resp.Topics) != 2 {
			t.Fatalf("v%d: %+v", v, resp.Topics)
		}
		wantCode(t, name, resp.Topics[0].ErrorCode, nil)
		if deref(resp.Topics[0].Topic) != name {
			t.Fatalf("v%d: answered %v", v, resp.Topics[0].Topic)
		}
		if v < 6 {
			wantCode(t, "missing", resp.Topics[1].ErrorCode, kerr.UnknownTopicOrPartition)
		} else {
			wantCode(t, "missing id", resp.Topics[1].ErrorCode, kerr.UnknownTopicID)
			if metadata.UUID(resp.Topics[0].TopicID) != top.ID() {
				t.Fatalf("v6 topic id %x", resp.Topics[0].TopicID)
			}
		}
		if _, ok := b.Image().Topic(name); ok {
			t.Fatalf("v%d: %s not deleted", v, name)
		}
	}
	// v6 request errors: name and id together, neither, duplicates.
	newTopic(t, b, "keep", 1)
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 6
	both := kmsg.NewDeleteTopicsRequestTopic()
	both.Topic, both.TopicID = kmsg.StringPtr("keep"), metadata.UUID{1}
	dup := kmsg.NewDeleteTopicsRequestTopic()
	dup.Topic = kmsg.StringPtr("keep")
	req.Topics = []kmsg.DeleteTopicsRequestTopic{both, kmsg.NewDeleteTopicsRequestTopic(), dup, dup}
	resp := roundTrip[*kmsg.DeleteTopicsResponse](c, req)
	for _, rt := range resp.Topics {
		wantCode(t, "bad delete", rt.ErrorCode, kerr.InvalidRequest)
	}
	if _, ok := b.Image().Topic("keep"); !ok {
		t.Fatal("keep deleted")
	}
}

func TestDeleteTopicsDisabled(t *testing.T) {
	s, b := startBroker(t, map[string]string{"delete.topic.enable": "false"})
	newTopic(t, b, "stay", 1)
	c := dial(t, s)
	for v := int16(1); v <= 5; v++ {
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.Version, req.TopicNames = v, []string{"stay"}
		resp := roundTrip[*kmsg.DeleteTopicsResponse](c, req)
		want := kerr.TopicDeletionDisabled
		if v < 3 {
			want = kerr.InvalidRequest
		}
		wantCode(t, "stay", resp.Topics[0].ErrorCode, want)
	}
	if _, ok := b.Image().Topic("stay"); !ok {
		t.Fatal("deleted with delete.topic.enable=false")
	}
}

// Every CreatePartitions version grows a topic, honours validate_only and
// refuses shrinking, unknown topics and bad assignments.
func TestCreatePartitionsEveryVersion(t *testing.T) {
	s, b := startBroker(t, nil)
	top := newTopic(t, b, "grow", 1)
	c := dial(t, s)
	cp := func(v int16, validate bool, topics ...kmsg.CreatePartitionsRequestTopic) *kmsg.CreatePartitionsResponse {
		req := kmsg.NewPtrCreatePartitionsRequest()
		req.Version, req.ValidateOnly, req.TimeoutMillis, req.Topics = v, validate, 5000, topics
		return roundTrip[*kmsg.CreatePartitionsResponse](c, req)
	}
	to := func(name string, count int32, assign ...[]int32) kmsg.CreatePartitionsRequestTopic {
		t := kmsg.NewCreatePartitionsRequestTopic()
		t.Topic, t.Count = name, count
		for _, a := range assign {
			t.Assignment = append(t.Assignment, kmsg.CreatePartitionsRequestTopicAssignment{Replicas: a})
		}
		return t
	}
	count := int32(1)
	for v := int16(0); v <= 3; v++ {
		resp := cp(v, true, to("grow", count+1))
		wantCode(t, "validate", resp.Topics[0].ErrorCode, nil)
		if tp, _ := b.Image().Topic("grow"); tp.NumPartitions() != count {
			t.Fatalf("v%d validate_only grew the topic", v)
		}
		resp = cp(v, false, to("grow", count+1, []int32{1}), to("nope", 3), to("grow", count))
		wantCode(t, "grow", resp.Topics[0].ErrorCode, kerr.InvalidRequest) // named twice
		resp = cp(v, false, to("grow", count+1, []int32{1}), to("nope", 3))
		wantCode(t, "grow", resp.Topics[0].ErrorCode, nil)
		wantCode(t, "nope", resp.Topics[1].ErrorCode, kerr.UnknownTopicOrPartition)
		count++
		if tp, _ := b.Image().Topic("grow"); tp.NumPartitions() != count || b.Replica(top.ID(), count-1) == nil {
			t.Fatalf("v%d: not grown to %d", v, count)
		}
		for _, bad := range []struct {
			topic kmsg.CreatePartitionsRequestTopic
			want  *kerr.Error
		}{
			{to("grow", count-1), kerr.InvalidPartitions},
			{to("grow", count), kerr.InvalidPartitions},
			{to("grow", count+2, []int32{1}), kerr.InvalidReplicaAssignment},
			{to("grow", count+1, []int32{9}), kerr.InvalidReplicaAssignment},
			{to("grow", count+1, []int32{1, 1}), kerr.InvalidReplicaAssignment},
			{to("grow", 1<<30), kerr.PolicyViolation},
		} {
			resp := cp(v, false, bad.topic)
			wantCode(t, "bad grow", resp.Topics[0].ErrorCode, bad.want)
			if resp.Topics[0].ErrorMessage == nil {
				t.Fatalf("v%d: no message for %v", v, bad.want)
			}
		}
	}
}

// DescribeConfigs at every version: topic configs with synonyms (v1+),
// documentation and types (v3+); this broker's configs; the empty
// cluster-default broker resource; other brokers and types refused.
func TestDescribeConfigsEveryVersion(t *testing.T) {
	s, b := startBroker(t, map[string]string{"log.retention.hours": "24"})
	newTopic(t, b, "dc", 1)
	propose(t, b, func(img *metadata.Image) ([]metadata.Record, error) {
		return []metadata.Record{metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, ResourceName: "dc", Name: "segment.ms", Value: "1000"}}, nil
	})
	c := dial(t, s)
	res := func(typ kmsg.ConfigResourceType, name string, keys ...string) kmsg.DescribeConfigsRequestResource {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName, r.ConfigNames = typ, name, keys
		return r
	}
	for v := int16(1); v <= 4; v++ {
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.Version, req.IncludeSynonyms, req.IncludeDocumentation = v, true, true
		req.Resources = []kmsg.DescribeConfigsRequestResource{
			res(kmsg.ConfigResourceTypeTopic, "dc", "segment.ms", "retention.ms"),
			res(kmsg.ConfigResourceTypeTopic, "dc"),
			res(kmsg.ConfigResourceTypeBroker, "1", "log.retention.hours", "num.partitions"),
			res(kmsg.ConfigResourceTypeBroker, ""),
			res(kmsg.ConfigResourceTypeBroker, "2"),
			res(kmsg.ConfigResourceTypeTopic, "missing"),
			res(kmsg.ConfigResourceTypeTopic, "bad name"),
			res(kmsg.ConfigResourceTypeBrokerLogger, "1"),
		}
		resp := roundTrip[*kmsg.DescribeConfigsResponse](c, req)
		if len(resp.Resources) != 8 {
			t.Fatalf("v%d: %d resources", v, len(resp.Resources))
		}
		topic := resp.Resources[0]
		wantCode(t, "topic", topic.ErrorCode, nil)
		if len(topic.Configs) != 2 {
			t.Fatalf("v%d: filtered configs %+v", v, topic.Configs)
		}
		seg, ret := topic.Configs[0], topic.Configs[1]
		if seg.Name != "segment.ms" {
			seg, ret = ret, seg
		}
		if deref(seg.Value) != "1000" || seg.Source != kmsg.ConfigSourceDynamicTopicConfig || seg.ReadOnly {
			t.Fatalf("v%d segment.ms %+v", v, seg)
		}
		if deref(ret.Value) != "86400000" || ret.Source != kmsg.ConfigSourceStaticBrokerConfig {
			t.Fatalf("v%d retention.ms %+v", v, ret)
		}
		if len(ret.ConfigSynonyms) == 0 || ret.ConfigSynonyms[0].Name != "log.retention.hours" || deref(ret.ConfigSynonyms[0].Value) != "24" {
			t.Fatalf("v%d retention.ms synonyms %+v", v, ret.ConfigSynonyms)
		}
		if v >= 3 && (seg.ConfigType != kmsg.ConfigTypeLong || seg.Documentation == nil) {
			t.Fatalf("v%d type %v doc %v", v, seg.ConfigType, seg.Documentation)
		}
		if len(resp.Resources[1].Configs) < 10 {
			t.Fatalf("v%d: all topic configs: %d", v, len(resp.Resources[1].Configs))
		}
		broker := resp.Resources[2]
		if broker.ErrorCode != 0 || len(broker.Configs) != 2 {
			t.Fatalf("v%d broker: %+v", v, broker)
		}
		for _, bc := range broker.Configs {
			if !bc.ReadOnly {
				t.Fatalf("v%d broker config %s not read-only", v, bc.Name)
			}
			if bc.Name == "log.retention.hours" && (deref(bc.Value) != "24" || bc.Source != kmsg.ConfigSourceStaticBrokerConfig) {
				t.Fatalf("v%d log.retention.hours %+v", v, bc)
			}
		}
		if d := resp.Resources[3]; d.ErrorCode != 0 || len(d.Configs) != 0 {
			t.Fatalf("v%d cluster default: %+v", v, d)
		}
		wantCode(t, "other broker", resp.Resources[4].ErrorCode, kerr.InvalidRequest)
		wantCode(t, "missing", resp.Resources[5].ErrorCode, kerr.UnknownTopicOrPartition)
		wantCode(t, "bad name", resp.Resources[6].ErrorCode, kerr.InvalidTopicException)
		wantCode(t, "logger", resp.Resources[7].ErrorCode, kerr.InvalidRequest)
	}
	// Without synonyms and documentation.
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version = 4
	req.Resources = []kmsg.DescribeConfigsRequestResource{res(kmsg.ConfigResourceTypeTopic, "dc", "retention.ms")}
	resp := roundTrip[*kmsg.DescribeConfigsResponse](c, req)
	if cfg := resp.Resources[0].Configs[0]; len(cfg.ConfigSynonyms) != 0 || cfg.Documentation != nil {
		t.Fatalf("unasked synonyms or documentation: %+v", cfg)
	}
}

// AlterConfigs at every version replaces a topic's overrides, validates
// them, honours validate_only, and refuses broker changes.
func TestAlterConfigsEveryVersion(t *testing.T) {
	s, b := startBroker(t, nil)
	newTopic(t, b, "ac", 1)
	c := dial(t, s)
	res := func(typ kmsg.ConfigResourceType, name string, kv ...string) kmsg.AlterConfigsRequestResource {
		r := kmsg.NewAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = typ, name
		for i := 0; i+1 < len(kv); i += 2 {
			r.Configs = append(r.Configs, kmsg.AlterConfigsRequestResourceConfig{Name: kv[i], Value: kmsg.StringPtr(kv[i+1])})
		}
		return r
	}
	for v := int16(0); v <= 2; v++ {
		before := b.Image().Config(metadata.TopicResource("ac"))
		req := kmsg.NewPtrAlterConfigsRequest()
		req.Version, req.ValidateOnly = v, true
		req.Resources = []kmsg.AlterConfigsRequestResource{res(kmsg.ConfigResourceTypeTopic, "ac", "retention.ms", "5")}
		resp := roundTrip[*kmsg.AlterConfigsResponse](c, req)
		wantCode(t, "validate", resp.Resources[0].ErrorCode, nil)
		if got := b.Image().Config(metadata.TopicResource("ac")); !maps.Equal(got, before) {
			t.Fatalf("v%d validate_only changed configs to %v", v, got)
		}
		value := "10" + string(rune('0'+v))
		req = kmsg.NewPtrAlterConfigsRequest()
		req.Version = v
		req.Resources = []kmsg.AlterConfigsRequestResource{
			res(kmsg.ConfigResourceTypeTopic, "ac", "retention.ms", value, "segment.ms", value),
			res(kmsg.ConfigResourceTypeTopic, "missing", "retention.ms", "1"),
			res(kmsg.ConfigResourceTypeTopic, "ac2"),
			res(kmsg.ConfigResourceTypeBroker, "1", "num.partitions", "3"),
			res(kmsg.ConfigResourceTypeBroker, ""),
			res(kmsg.ConfigResourceTypeBroker, "5"),
		}
		resp = roundTrip[*kmsg.AlterConfigsResponse](c, req)
		want := []*kerr.Error{nil, kerr.UnknownTopicOrPartition, kerr.UnknownTopicOrPartition, kerr.InvalidRequest, nil, kerr.InvalidRequest}
		for i, r := range resp.Resources {
			wantCode(t, r.ResourceName, r.ErrorCode, want[i])
		}
		if got := b.Image().Config(metadata.TopicResource("ac")); !maps.Equal(got, map[string]string{"retention.ms": value, "segment.ms": value}) {
			t.Fatalf("v%d: configs %v", v, got)
		}
		if msg := deref(resp.Resources[3].ErrorMessage); !strings.Contains(msg, "Cannot update these configs dynamically") {
			t.Fatalf("v%d broker message %q", v, msg)
		}
	}
	// Replacing drops what is left out; bad values and names are refused.
	req := kmsg.NewPtrAlterConfigsRequest()
	req.Resources = []kmsg.AlterConfigsRequestResource{res(kmsg.ConfigResourceTypeTopic, "ac", "segment.ms", "7")}
	resp := roundTrip[*kmsg.AlterConfigsResponse](c, req)
	wantCode(t, "replace", resp.Resources[0].ErrorCode, nil)
	if got := b.Image().Config(metadata.TopicResource("ac")); !maps.Equal(got, map[string]string{"segment.ms": "7"}) {
		t.Fatalf("replaced configs %v", got)
	}
	for _, kv := range [][]string{{"segment.ms", "0"}, {"nope", "1"}, {"cleanup.policy", "sometimes"}} {
		req.Resources = []kmsg.AlterConfigsRequestResource{res(kmsg.ConfigResourceTypeTopic, "ac", kv...)}
		resp = roundTrip[*kmsg.AlterConfigsResponse](c, req)
		wantCode(t, kv[0], resp.Resources[0].ErrorCode, kerr.InvalidConfig)
	}
	req.Resources = []kmsg.AlterConfigsRequestResource{res(kmsg.ConfigResourceTypeTopic, "ac"), res(kmsg.ConfigResourceTypeTopic, "ac")}
	resp = roundTrip[*kmsg.AlterConfigsResponse](c, req)
	wantCode(t, "duplicate resource", resp.Resources[0].ErrorCode, kerr.InvalidRequest)
	if got := b.Image().Config(metadata.TopicResource("ac")); !maps.Equal(got, map[string]string{"segment.ms": "7"}) {
		t.Fatalf("refused changes applied: %v", got)
	}
}

// IncrementalAlterConfigs at every version: SET, DELETE, APPEND, SUBTRACT,
// validate_only, bad input.
func TestIncrementalAlterConfigsEveryVersion(t *testing.T) {
	s, b := startBroker(t, nil)
	newTopic(t, b, "ia", 1)
	c := dial(t, s)
	op := func(o kmsg.IncrementalAlterConfigOp, name string, value *string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
		return kmsg.IncrementalAlterConfigsRequestResourceConfig{Op: o, Name: name, Value: value}
	}
	alter := func(v int16, validate bool, typ kmsg.ConfigResourceType, name string, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) kmsg.IncrementalAlterConfigsResponseResource {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.Version, req.ValidateOnly = v, validate
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName, r.Configs = typ, name, ops
		req.Resources = append(req.Resources, r)
		return roundTrip[*kmsg.IncrementalAlterConfigsResponse](c, req).Resources[0]
	}
	configs := func() map[string]string { return b.Image().Config(metadata.TopicResource("ia")) }
	topic := kmsg.ConfigResourceTypeTopic
	for v := int16(0); v <= 1; v++ {
		r := alter(v, true, topic, "ia", op(kmsg.IncrementalAlterConfigOpSet, "retention.ms", kmsg.StringPtr("9")))
		wantCode(t, "validate", r.ErrorCode, nil)
		if len(configs()) != 0 {
			t.Fatalf("v%d validate_only changed %v", v, configs())
		}
		r = alter(v, false, topic, "ia",
			op(kmsg.IncrementalAlterConfigOpSet, "retention.ms", kmsg.StringPtr("9")),
			op(kmsg.IncrementalAlterConfigOpAppend, "cleanup.policy", kmsg.StringPtr("compact")))
		wantCode(t, "set+append", r.ErrorCode, nil)
		if !maps.Equal(configs(), map[string]string{"retention.ms": "9", "cleanup.policy": "delete,compact"}) {
			t.Fatalf("v%d: %v", v, configs())
		}
		r = alter(v, false, topic, "ia",
			op(kmsg.IncrementalAlterConfigOpDelete, "retention.ms", nil),
			op(kmsg.IncrementalAlterConfigOpSubtract, "cleanup.policy", kmsg.StringPtr("delete")))
		wantCode(t, "delete+subtract", r.ErrorCode, nil)
		if !maps.Equal(configs(), map[string]string{"cleanup.policy": "compact"}) {
			t.Fatalf("v%d: %v", v, configs())
		}
		for _, bad := range []struct {
			ops  []kmsg.IncrementalAlterConfigsRequestResourceConfig
			want *kerr.Error
		}{
			{[]kmsg.IncrementalAlterConfigsRequestResourceConfig{op(kmsg.IncrementalAlterConfigOpSet, "retention.ms", kmsg.StringPtr("x"))}, kerr.InvalidConfig},
			{[]kmsg.IncrementalAlterConfigsRequestResourceConfig{op(kmsg.IncrementalAlterConfigOpSet, "retention.ms", nil)}, kerr.InvalidConfig},
			{[]kmsg.IncrementalAlterConfigsRequestResourceConfig{op(kmsg.IncrementalAlterConfigOpSet, "unknown.config", kmsg.StringPtr("1"))}, kerr.InvalidConfig},
			{[]kmsg.IncrementalAlterConfigsRequestResourceConfig{op(kmsg.IncrementalAlterConfigOpAppend, "retention.ms", kmsg.StringPtr("1"))}, kerr.InvalidConfig},
			{[]kmsg.IncrementalAlterConfigsRequestResourceConfig{op(9, "retention.ms", kmsg.StringPtr("1"))}, kerr.InvalidRequest},
			{[]kmsg.IncrementalAlterConfigsRequestResourceConfig{op(kmsg.IncrementalAlterConfigOpDelete, "segment.ms", nil), op(kmsg.IncrementalAlterConfigOpDelete, "segment.ms", nil)}, kerr.InvalidRequest},
		} {
			r := alter(v, false, topic, "ia", bad.ops...)
			wantCode(t, "bad op", r.ErrorCode, bad.want)
		}
		wantCode(t, "missing topic", alter(v, false, topic, "nope").ErrorCode, kerr.UnknownTopicOrPartition)
		wantCode(t, "broker", alter(v, false, kmsg.ConfigResourceTypeBroker, "1",
			op(kmsg.IncrementalAlterConfigOpSet, "log.retention.ms", kmsg.StringPtr("1"))).ErrorCode, kerr.InvalidRequest)
		if !maps.Equal(configs(), map[string]string{"cleanup.policy": "compact"}) {
			t.Fatalf("v%d: refused changes applied: %v", v, configs())
		}
		alter(v, false, topic, "ia", op(kmsg.IncrementalAlterConfigOpDelete, "cleanup.policy", nil))
	}
}

// DescribeCluster at every version.
func TestDescribeClusterEveryVersion(t *testing.T) {
	s, b := startBroker(t, nil)
	c := dial(t, s)
	host, port := brokerAddr(t, b)
	for v := int16(0); v <= 1; v++ {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.Version, req.EndpointType = v, 1
		resp := roundTrip[*kmsg.DescribeClusterResponse](c, req)
		wantCode(t, "describe cluster", resp.ErrorCode, nil)
		if resp.ClusterID != b.Image().ClusterID() || resp.ControllerID != 1 || len(resp.Brokers) != 1 ||
			resp.Brokers[0].Host != host || resp.Brokers[0].Port != port || resp.ClusterAuthorizedOperations != authorizedOpsOmitted {
			t.Fatalf("v%d: %+v", v, resp)
		}
	}
	req := kmsg.NewPtrDescribeClusterRequest()
	req.Version, req.EndpointType, req.IncludeClusterAuthorizedOperations = 1, 2, true
	resp := roundTrip[*kmsg.DescribeClusterResponse](c, req)
	wantCode(t, "controllers", resp.ErrorCode, kerr.UnsupportedEndpointType)
	// kadm describes the cluster through Metadata and DescribeCluster alike.
	adm := newAdmin(t, s)
	brokers, err := adm.ListBrokers(testCtx(t))
	if err != nil || len(brokers) != 1 || brokers[0].Host != host {
		t.Fatalf("kadm brokers: %v %+v", err, brokers)
	}
}

// stuckBroker is a broker whose proposals never apply: with block it waits
// for the proposal's deadline, else it fails at once, without building.
type stuckBroker struct {
	*fakeBroker
	block bool
}

func (b stuckBroker) Metadata(ctx context.Context, _ metadata.Request) (metadata.Result, error) {
	if b.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return nil, errors.New("no quorum")
}

func (b stuckBroker) ProducerID(ctx context.Context) (int64, error) {
	if b.block {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	return 0, errors.New("no quorum")
}

// startStuck serves the real API table over a stuckBroker.
func startStuck(t *testing.T, block bool) (*Server, *fakeBroker) {
	t.Helper()
	_, fb := startBroker(t, nil)
	h, err := NewBrokerHandler(BrokerHandlerConfig{Broker: stuckBroker{fb, block}, System: fb.system})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	stuck, err := NewServer(TestConfig(), h)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = stuck.Serve(ln) }()
	t.Cleanup(func() { _ = stuck.Close() })
	waitFor(t, func() bool { return stuck.Addr() != nil })
	return stuck, fb
}

// Proposals that do not apply: admin requests answer every topic or
// resource with REQUEST_TIMED_OUT past their timeout, or with the error;
// Metadata answers a topic it could not create with LEADER_NOT_AVAILABLE.
func TestAdminProposalsNotApplied(t *testing.T) {
	s, fb := startStuck(t, true)
	newTopic(t, fb, "exists", 1)
	c := dial(t, s)
	ct := createTopicsReq(7, false)
	ct.TimeoutMillis = 20
	ct.Topics = []kmsg.CreateTopicsRequestTopic{plainTopic("late", 1, 1), plainTopic("late2", 1, 1)}
	for _, rt := range roundTrip[*kmsg.CreateTopicsResponse](c, ct).Topics {
		wantCode(t, rt.Topic, rt.ErrorCode, kerr.RequestTimedOut)
	}
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.Version, dt.TimeoutMillis, dt.TopicNames = 5, 20, []string{"exists"}
	wantCode(t, "delete", roundTrip[*kmsg.DeleteTopicsResponse](c, dt).Topics[0].ErrorCode, kerr.RequestTimedOut)
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.TimeoutMillis = 20
	cp.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "exists", Count: 2}}
	wantCode(t, "grow", roundTrip[*kmsg.CreatePartitionsResponse](c, cp).Topics[0].ErrorCode, kerr.RequestTimedOut)

	s, fb = startStuck(t, false)
	newTopic(t, fb, "exists", 1)
	c = dial(t, s)
	ia := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, "exists"
	r.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: kmsg.StringPtr("1")}}
	ia.Resources = append(ia.Resources, r, r)
	ia.Resources[1].ResourceName = "exists2"
	resp := roundTrip[*kmsg.IncrementalAlterConfigsResponse](c, ia)
	wantCode(t, "alter", resp.Resources[0].ErrorCode, kerr.UnknownServerError)
	wantCode(t, "alter", resp.Resources[1].ErrorCode, kerr.UnknownServerError)
	md := roundTrip[*kmsg.MetadataResponse](c, metadataTopics(12, true, "exists", "new"))
	wantCode(t, "exists", md.Topics[0].ErrorCode, nil)
	wantCode(t, "new", md.Topics[1].ErrorCode, kerr.LeaderNotAvailable)
	ip := roundTrip[*kmsg.InitProducerIDResponse](c, initPIDReq(4))
	wantCode(t, "init producer id", ip.ErrorCode, kerr.CoordinatorLoadInProgress)
}
