package main

import (
	"errors"
	"regexp"
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
// and the ISR, as a healthy one-broker cluster shows.
var partitionLineRE = regexp.MustCompile(`^\tTopic: (\S+)\tPartition: (\d+)\tLeader: (\d+)\tReplicas: (\d+)\tIsr: (\d+)$`)

// describeConfigs checks the description of a healthy topic of a
// one-broker cluster and returns its Configs field.
func describeConfigs(t *testing.T, out, topic string, partitions int) string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != partitions+1 {
		t.Fatalf("describe %s: %d lines, want %d:\n%s", topic, len(lines), partitions+1, out)
	}
	m := topicLineRE.FindStringSubmatch(lines[0])
	if m == nil || m[1] != topic || m[2] != strconv.Itoa(partitions) || m[3] != "1" {
		t.Fatalf("describe %s: topic line %q", topic, lines[0])
	}
	for i, l := range lines[1:] {
		p := partitionLineRE.FindStringSubmatch(l)
		if p == nil || p[1] != topic || p[2] != strconv.Itoa(i) || p[3] != p[4] || p[4] != p[5] {
			t.Errorf("describe %s: partition line %q", topic, l)
		}
	}
	return m[4]
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
	if got := describeConfigs(t, out, "orders", 3); got != "cleanup.policy=compact,retention.ms=1000" {
		t.Errorf("configs %q, want the two overrides sorted", got)
	}

	out = mustRun(t, "topics", "alter-config", "--brokers", b, "--topic", "orders",
		"--config", "retention.ms=2000", "--delete-config", "cleanup.policy")
	if out != "Completed updating config for topic orders.\n" {
		t.Errorf("alter-config printed %q", out)
	}
	out = mustRun(t, "topics", "describe", "--brokers", b, "--topic", "orders")
	if got := describeConfigs(t, out, "orders", 3); got != "retention.ms=2000" {
		t.Errorf("configs after alter %q, want retention.ms=2000", got)
	}

	// Without --topic: every topic, in name order.
	out = mustRun(t, "topics", "describe", "--brokers", b)
	i := strings.Index(out, "Topic: seeded\t")
	if !strings.HasPrefix(out, "Topic: orders\t") || i < 0 {
		t.Fatalf("describe all:\n%s", out)
	}
	describeConfigs(t, out[:i], "orders", 3)
	if got := describeConfigs(t, out[i:], "seeded", 1); got != "" {
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

func TestTopicDescriptionFormat(t *testing.T) {
	str := func(s string) *string { return &s }
	d := topicDescription{
		detail: kadm.TopicDetail{
			Topic: "orders",
			ID:    kadm.TopicID{0xde, 0xad, 0xbe, 0xef, 15: 0xff},
			Partitions: kadm.PartitionDetails{
				1: {Partition: 1, Leader: -1, Replicas: []int32{2, 3}, ISR: nil, OfflineReplicas: []int32{2, 3}},
				0: {Partition: 0, Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 3}},
			},
		},
		configs: []kadm.Config{
			{Key: "segment.bytes", Value: str("1073741824"), Source: kmsg.ConfigSourceStaticBrokerConfig},
			{Key: "retention.ms", Value: str("604800000"), Source: kmsg.ConfigSourceDefaultConfig},
			{Key: "cleanup.policy", Value: str("compact"), Source: kmsg.ConfigSourceDynamicTopicConfig},
			{Key: "sasl.secret", Value: nil, Sensitive: true, Source: kmsg.ConfigSourceDynamicTopicConfig},
		},
	}
	want := "Topic: orders\tTopicId: 3q2-7wAAAAAAAAAAAAAA_w\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: cleanup.policy=compact,sasl.secret=null,segment.bytes=1073741824\n" +
		"\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,3\n" +
		"\tTopic: orders\tPartition: 1\tLeader: none\tReplicas: 2,3\tIsr: \tOffline: 2,3\n"
	if got := d.String(); got != want {
		t.Errorf("description\n%q\nwant\n%q", got, want)
	}
	// A broker without topic ids: no TopicId field, as Kafka's tool.
	d = topicDescription{detail: kadm.TopicDetail{Topic: "empty"}}
	if got := d.String(); got != "Topic: empty\tPartitionCount: 0\tReplicationFactor: 0\tConfigs: \n" {
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
