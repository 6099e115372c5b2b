package main

import (
	"errors"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirmq/weir/internal/cli"
)

// startKfake starts a one-broker kfake cluster holding topics of
// partitions partitions each and returns its --brokers value.
func startKfake(t *testing.T, partitions int32, topics ...string) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return strings.Join(c.ListenAddrs(), ",")
}

// mustRun runs a weir command line that must succeed and returns its
// stdout.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("weir %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout
}

// topicLineRE matches the topic line of kafka-topics.sh --describe.
var topicLineRE = regexp.MustCompile(`^Topic: (\S+)\tTopicId: [A-Za-z0-9_-]{22}\tPartitionCount: (\d+)\tReplicationFactor: (\d+)\tConfigs: (.*)$`)

// partitionLineRE matches a partition line with a leader in the replicas
// and the ISR, as a healthy one-broker cluster shows, and its offsets.
var partitionLineRE = regexp.MustCompile(`^\tTopic: (\S+)\tPartition: (\d+)\tLeader: (\d+)\tReplicas: (\d+)\tIsr: (\d+)\tStartOffset: (\d+)\tHighWatermark: (\d+)$`)

// configLineRE matches a config line of kafka-configs.sh --describe --all.
var configLineRE = regexp.MustCompile(`^  ([a-z0-9.]+)=(.*) sensitive=(true|false) synonyms=\{(.*)\}$`)

// describeConfigs checks the description of a healthy topic of a
// one-broker cluster (its partitions empty, unless offsets is given: each
// partition's "start/high watermark"), and returns its Configs field and
// the config lines' values and synonyms by name.
func describeConfigs(t *testing.T, out, topic string, partitions int, offsets ...string) (string, map[string][2]string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	header := slices.Index(lines, "All configs for topic "+topic+" are:")
	if header != partitions+1 {
		t.Fatalf("describe %s: config header at line %d, want %d:\n%s", topic, header, partitions+1, out)
	}
	m := topicLineRE.FindStringSubmatch(lines[0])
	if m == nil || m[1] != topic || m[2] != strconv.Itoa(partitions) || m[3] != "1" {
		t.Fatalf("describe %s: topic line %q", topic, lines[0])
	}
	for i, l := range lines[1:header] {
		p := partitionLineRE.FindStringSubmatch(l)
		want := "0/0"
		if offsets != nil {
			want = offsets[i]
		}
		if p == nil || p[1] != topic || p[2] != strconv.Itoa(i) || p[3] != p[4] || p[4] != p[5] || p[6]+"/"+p[7] != want {
			t.Errorf("describe %s: partition line %q, want offsets %s", topic, l, want)
		}
	}
	configs := map[string][2]string{}
	for _, l := range lines[header+1:] {
		c := configLineRE.FindStringSubmatch(l)
		if c == nil || c[3] != "false" {
			t.Fatalf("describe %s: config line %q", topic, l)
		}
		configs[c[1]] = [2]string{c[2], c[4]}
	}
	return m[4], configs
}

func TestTopicsLifecycle(t *testing.T) {
	b := startKfake(t, 1, "seeded")

	out := mustRun(t, "topics", "create", "--brokers", b, "--topic", "orders", "--partitions", "3",
		"--replication-factor", "1", "--config", "retention.ms=1000", "--config", "cleanup.policy=compact")
	if out != "Created topic orders.\n" {
		t.Errorf("create printed %q", out)
	}
	if out := mustRun(t, "topics", "list", "--brokers", b); out != "orders\nseeded\n" {
		t.Errorf("list printed %q", out)
	}
	out = mustRun(t, "topics", "describe", "--brokers", b, "--topic", "orders")
	if got, all := describeConfigs(t, out, "orders", 3); got != "cleanup.policy=compact,retention.ms=1000" || all["retention.ms"][0] != "1000" {
		t.Errorf("configs %q (retention.ms line %q), want the two overrides sorted", got, all["retention.ms"])
	}

	out = mustRun(t, "topics", "alter-config", "--brokers", b, "--topic", "orders",
		"--config", "retention.ms=2000", "--delete-config", "cleanup.policy")
	if out != "Completed updating config for topic orders.\n" {
		t.Errorf("alter-config printed %q", out)
	}
	out = mustRun(t, "topics", "describe", "--brokers", b, "--topic", "orders")
	if got, _ := describeConfigs(t, out, "orders", 3); got != "retention.ms=2000" {
		t.Errorf("configs after alter %q, want retention.ms=2000", got)
	}

	// Without --topic: every topic, in name order.
	out = mustRun(t, "topics", "describe", "--brokers", b)
	i := strings.Index(out, "Topic: seeded\t")
	if !strings.HasPrefix(out, "Topic: orders\t") || i < 0 {
		t.Fatalf("describe all:\n%s", out)
	}
	describeConfigs(t, out[:i], "orders", 3)
	if got, _ := describeConfigs(t, out[i:], "seeded", 1); got != "" {
		t.Errorf("seeded topic has configs %q", got)
	}

	if out := mustRun(t, "topics", "delete", "--brokers", b, "--topic", "orders"); out != "" {
		t.Errorf("delete printed %q", out)
	}
	if out := mustRun(t, "topics", "list", "--brokers", b); out != "seeded\n" {
		t.Errorf("list after delete printed %q", out)
	}
}

func TestTopicsBrokerErrorsExitOne(t *testing.T) {
	b := startKfake(t, 1, "seeded")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"create", "--topic", "seeded"}, `weir topics: create topic "seeded": TOPIC_ALREADY_EXISTS: `},
		{[]string{"delete", "--topic", "missing"}, `weir topics: delete topic "missing": UNKNOWN_TOPIC_OR_PARTITION: `},
		{[]string{"describe", "--topic", "missing"}, `weir topics: describe topic "missing": UNKNOWN_TOPIC_OR_PARTITION: `},
		{[]string{"alter-config", "--topic", "missing", "--config", "retention.ms=1"}, `weir topics: alter configs of topic "missing": UNKNOWN_TOPIC_OR_PARTITION: `},
	}
	for _, c := range cases {
		args := append([]string{"topics"}, c.args...)
		args = append(args, "--brokers", b)
		code, stdout, stderr := runCmd(t, args...)
		if code != 1 || stdout != "" || !strings.HasPrefix(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("weir %s: exit %d, stdout %q, stderr %q; want 1 and %q...", strings.Join(args, " "), code, stdout, stderr, c.want)
		}
	}
	// The if-(not-)exists flags make those two no-ops.
	mustRun(t, "topics", "create", "--brokers", b, "--topic", "seeded", "--if-not-exists")
	mustRun(t, "topics", "delete", "--brokers", b, "--topic", "missing", "--if-exists")
}

func TestTopicsUnreachableBrokerExitsOne(t *testing.T) {
	code, _, stderr := runCmd(t, "topics", "list", "--brokers", "127.0.0.1:1", "--timeout", "300ms")
	if code != 1 || !strings.HasPrefix(stderr, "weir topics: list topics: ") {
		t.Errorf("exit %d, stderr %q; want 1 and the failure", code, stderr)
	}
}

func TestTopicsUsageErrorsExitTwo(t *testing.T) {
	cases := [][]string{
		{},
		{"no-such-command"},
		{"create"},
		{"create", "--topic", "t", "extra"},
		{"create", "--topic", "t", "--partitions", "0"},
		{"create", "--topic", "t", "--partitions", "-2"},
		{"create", "--topic", "t", "--replication-factor", "0"},
		{"create", "--topic", "t", "--replication-factor", "40000"},
		{"create", "--topic", "t", "--config", "novalue"},
		{"create", "--topic", "t", "--config", "=v"},
		{"create", "--topic", "t", "--config", "a=1", "--config", "a=2"},
		{"create", "--topic", "t", "--brokers", "a:1,,b:2"},
		{"create", "--topic", "t", "--timeout", "0s"},
		{"list", "--no-such-flag"},
		{"list", "extra"},
		{"describe", "extra"},
		{"delete"},
		{"alter-config", "--topic", "t"},
		{"alter-config", "--config", "a=1"},
		{"alter-config", "--topic", "t", "--config", "a=1", "--delete-config", "a"},
		{"alter-config", "--topic", "t", "--delete-config", "a=1"},
	}
	for _, args := range cases {
		args = append([]string{"topics"}, args...)
		code, stdout, stderr := runCmd(t, args...)
		if code != 2 || stdout != "" || stderr == "" {
			t.Errorf("weir %q: exit %d, stdout %q, stderr %q; want 2, usage on stderr", args, code, stdout, stderr)
		}
	}
}

func TestTopicsHelp(t *testing.T) {
	for _, args := range [][]string{{"topics", "-h"}, {"help", "topics"}, {"topics", "create", "-h"}} {
		code, _, stderr := runCmd(t, args...)
		if code != 0 || !strings.Contains(stderr, "usage: weir topics") {
			t.Errorf("weir %q: exit %d, stderr %q", args, code, stderr)
		}
	}
	_, _, stderr := runCmd(t, "topics", "-h")
	for _, c := range topicsCommands {
		if !strings.Contains(stderr, c.Name) || !strings.Contains(stderr, c.Summary) {
			t.Errorf("topics usage does not list %q", c.Name)
		}
	}
}

func TestTopicNamesHidesInternalTopics(t *testing.T) {
	topics := kadm.TopicDetails{
		"b":                  {Topic: "b"},
		"__consumer_offsets": {Topic: "__consumer_offsets", IsInternal: true},
		"a":                  {Topic: "a"},
	}
	if got := strings.Join(topicNames(topics, false), " "); got != "a b" {
		t.Errorf("names %q, want a b", got)
	}
	if got := strings.Join(topicNames(topics, true), " "); got != "__consumer_offsets a b" {
		t.Errorf("names with internal %q", got)
	}
}

func TestTopicsDescriptionFormat(t *testing.T) {
	str := func(s string) *string { return &s }
	detail := kadm.TopicDetail{
		Topic: "orders",
		ID:    kadm.TopicID{0xde, 0xad, 0xbe, 0xef, 15: 0xff},
		Partitions: kadm.PartitionDetails{
			1: {Topic: "orders", Partition: 1, Leader: -1, Replicas: []int32{2, 3}, ISR: nil, OfflineReplicas: []int32{2, 3}},
			0: {Topic: "orders", Partition: 0, Leader: 1, LeaderEpoch: 4, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 3}},
		},
	}
	configs := []kadm.Config{
		{Key: "segment.bytes", Value: str("1073741824"), Source: kmsg.ConfigSourceStaticBrokerConfig,
			Synonyms: []kadm.ConfigSynonym{{Key: "log.segment.bytes", Value: str("1073741824"), Source: kmsg.ConfigSourceStaticBrokerConfig},
				{Key: "log.segment.bytes", Value: str("1024"), Source: kmsg.ConfigSourceDefaultConfig}}},
		{Key: "retention.ms", Value: str("604800000"), Source: kmsg.ConfigSourceDefaultConfig},
		{Key: "cleanup.policy", Value: str("compact"), Source: kmsg.ConfigSourceDynamicTopicConfig,
			Synonyms: []kadm.ConfigSynonym{{Key: "cleanup.policy", Value: str("compact"), Source: kmsg.ConfigSourceDynamicTopicConfig}}},
		{Key: "sasl.secret", Value: nil, Sensitive: true, Source: kmsg.ConfigSourceDynamicTopicConfig,
			Synonyms: []kadm.ConfigSynonym{{Key: "sasl.secret", Source: kmsg.ConfigSourceDynamicTopicConfig}}},
	}
	start, end := kadm.ListedOffsets{}, kadm.ListedOffsets{}
	start["orders"] = map[int32]kadm.ListedOffset{0: {Topic: "orders", Partition: 0, Offset: 3},
		1: {Topic: "orders", Partition: 1, Offset: -1, Err: kerr.LeaderNotAvailable}}
	end["orders"] = map[int32]kadm.ListedOffset{0: {Topic: "orders", Partition: 0, Offset: 12}}
	v := newTopicView(detail, configs, start, end)
	want := "Topic: orders\tTopicId: 3q2-7wAAAAAAAAAAAAAA_w\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: cleanup.policy=compact,sasl.secret=null,segment.bytes=1073741824\n" +
		"\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,3\tStartOffset: 3\tHighWatermark: 12\n" +
		"\tTopic: orders\tPartition: 1\tLeader: none\tReplicas: 2,3\tIsr: \tOffline: 2,3\tStartOffset: -1\tHighWatermark: -1\tOffsetsError: LEADER_NOT_AVAILABLE\n" +
		"All configs for topic orders are:\n" +
		"  cleanup.policy=compact sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact}\n" +
		"  retention.ms=604800000 sensitive=false synonyms={}\n" +
		"  sasl.secret=null sensitive=true synonyms={DYNAMIC_TOPIC_CONFIG:sasl.secret=null}\n" +
		"  segment.bytes=1073741824 sensitive=false synonyms={STATIC_BROKER_CONFIG:log.segment.bytes=1073741824, DEFAULT_CONFIG:log.segment.bytes=1024}\n"
	var b strings.Builder
	if err := v.writeText(&b); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != want {
		t.Errorf("description\n%q\nwant\n%q", got, want)
	}
	if p := v.Partitions[0]; p.LeaderEpoch != 4 || p.StartOffset != 3 || p.HighWatermark != 12 || p.OffsetsError != "" {
		t.Errorf("partition 0: %+v", p)
	}
	// A broker without topic ids: no TopicId field, as Kafka's tool; no
	// partitions, no configs.
	v = newTopicView(kadm.TopicDetail{Topic: "empty"}, nil, nil, nil)
	b.Reset()
	if err := v.writeText(&b); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "Topic: empty\tPartitionCount: 0\tReplicationFactor: 0\tConfigs: \nAll configs for topic empty are:\n" {
		t.Errorf("description without id %q", got)
	}
}

func TestWithBrokerMessage(t *testing.T) {
	err := cli.WithBrokerMessage(kerr.TopicAlreadyExists, "Topic 'orders' already exists.")
	if err.Error() != "TOPIC_ALREADY_EXISTS: Topic 'orders' already exists." || !errors.Is(err, kerr.TopicAlreadyExists) {
		t.Errorf("with a message: %q", err)
	}
	if err := cli.WithBrokerMessage(kerr.TopicAlreadyExists, ""); err != kerr.TopicAlreadyExists {
		t.Errorf("without a message: %v, want the code's own error", err)
	}
	other := errors.New("dial failed")
	if err := cli.WithBrokerMessage(other, "ignored"); err != other {
		t.Errorf("not a Kafka code: %v", err)
	}
}

func TestTopicsPartitionGrowth(t *testing.T) {
	for _, c := range []struct {
		total, add       int
		totalSet, addSet bool
		current          int
		want             int
		usage, refused   string
	}{
		{total: 5, totalSet: true, current: 3, want: 5},
		{add: 2, addSet: true, current: 3, want: 5},
		{total: 3, totalSet: true, current: 3, refused: `topic "t" already has 3 partitions: --partitions is the new total and must be more than 3`},
		{total: 2, totalSet: true, current: 3, refused: "partitions cannot be removed"},
		{add: math.MaxInt32, addSet: true, current: 1, refused: "would pass the limit"},
		{usage: "give --partitions N (the new total) or --num N (how many to add)"},
		{total: 5, totalSet: true, add: 1, addSet: true, usage: "not both"},
		{total: 0, totalSet: true, usage: "--partitions 0"},
		{add: 0, addSet: true, usage: "--num 0"},
		{add: -1, addSet: true, usage: "--num -1"},
	} {
		g, err := newPartitionGrowth(c.total, c.totalSet, c.add, c.addSet)
		if c.usage != "" {
			if err == nil || !strings.Contains(err.Error(), c.usage) {
				t.Errorf("%+v: usage error %v, want %q", c, err, c.usage)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		got, err := g.target("t", c.current)
		switch {
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("%+v: %d, %v; want refused with %q", c, got, err, c.refused)
		case c.refused == "" && (err != nil || got != c.want):
			t.Errorf("%+v: %d, %v; want %d", c, got, err, c.want)
		}
	}
}

func TestTopicsConfigViewsSortedWithKafkaSourceNames(t *testing.T) {
	v := "x"
	views := newConfigViews([]kadm.Config{
		{Key: "b", Value: &v, Source: kmsg.ConfigSourceGroupConfig},
		{Key: "a", Source: kmsg.ConfigSourceClientMetricsConfig, Synonyms: []kadm.ConfigSynonym{{Key: "a", Source: kmsg.ConfigSourceDynamicDefaultBrokerConfig}}},
		{Key: "c", Source: kmsg.ConfigSource(42)},
	})
	got := []string{}
	for _, c := range views {
		got = append(got, c.Name+":"+c.Source)
		if c.Synonyms == nil {
			t.Errorf("%s: nil synonyms (JSON null)", c.Name)
		}
	}
	if want := "a:DYNAMIC_CLIENT_METRICS_CONFIG b:DYNAMIC_GROUP_CONFIG c:UNKNOWN"; strings.Join(got, " ") != want {
		t.Errorf("views %q, want %q", got, want)
	}
	if s := views[0].Synonyms[0]; s.Source != "DYNAMIC_DEFAULT_BROKER_CONFIG" || s.Value != nil {
		t.Errorf("synonym %+v", s)
	}
}
