package config

import (
	"errors"
	"flag"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/weirmq/weir/log"
)

var update = flag.Bool("update", false, "rewrite docs/configs.md from Markdown()")

func TestTableIsConsistent(t *testing.T) {
	for _, table := range [][]Entry{topicTable, brokerTable} {
		if !slices.IsSortedFunc(table, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) }) {
			t.Errorf("table not sorted by name")
		}
		for _, e := range table {
			if e.Doc == "" {
				t.Errorf("%s: no doc", e.Name)
			}
			if !e.NullDefault {
				if err := e.Check(e.Default); err != nil {
					t.Errorf("%s: default %q: %v", e.Name, e.Default, err)
				}
			}
		}
	}
	for _, e := range topicTable {
		if len(e.Synonyms) == 0 {
			t.Errorf("%s: no broker synonym", e.Name)
		}
		for _, s := range e.Synonyms {
			be, ok := LookupBroker(s.Name)
			if !ok {
				t.Errorf("%s: synonym %s not in broker table", e.Name, s.Name)
				continue
			}
			if !be.NullDefault && s.Scale == 1 && be.Default != e.Default && e.Name != "flush.ms" {
				t.Errorf("%s: default %s differs from synonym %s default %s", e.Name, e.Default, s.Name, be.Default)
			}
		}
	}
}

func TestParse(t *testing.T) {
	in := "# a comment\n" +
		"   ! another comment \\\n" +
		"node.id=7\n" +
		"\n" +
		"log.dirs : /data/a,\\\n" +
		"           /data/b\n" +
		"listeners PLAINTEXT://0.0.0.0:9093\n" +
		"advertised.listeners=PLAINTEXT\\://h\\u00e9:9093\\t\n" +
		"log.retention.hours=24\n" +
		"log.retention.hours=48\n" +
		"auto.create.topics.enable = FALSE\n" +
		"controller.quorum.voters=1, 2,3"
	b, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := b.NodeID(); got != 7 {
		t.Errorf("node.id = %d", got)
	}
	if got := b.LogDirs(); !reflect.DeepEqual(got, []string{"/data/a", "/data/b"}) {
		t.Errorf("log.dirs = %q", got)
	}
	if got := b.Listeners(); !reflect.DeepEqual(got, []string{"PLAINTEXT://0.0.0.0:9093"}) {
		t.Errorf("listeners = %q", got)
	}
	if got, _ := b.Value("advertised.listeners"); got != "PLAINTEXT://hé:9093\t" {
		t.Errorf("advertised.listeners = %q", got)
	}
	if got := b.Int("log.retention.hours"); got != 48 {
		t.Errorf("log.retention.hours = %d, want the last value 48", got)
	}
	if b.Bool("auto.create.topics.enable") {
		t.Errorf("auto.create.topics.enable = true")
	}
	if got := b.Voters(); !reflect.DeepEqual(got, []string{"1", "2", "3"}) {
		t.Errorf("voters = %q", got)
	}
	if got := b.Origin("listeners"); got != "server.properties:7" {
		t.Errorf("origin = %q", got)
	}
}

func TestParseEscapes(t *testing.T) {
	b, err := Parse(strings.NewReader(`log.dirs=a\\b\=c\:d\ e\nf\tg\#h`))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Value("log.dirs"); got != "a\\b=c:d e\nf\tg#h" {
		t.Errorf("log.dirs = %q", got)
	}
	// An escaped separator belongs to the key.
	_, err = Parse(strings.NewReader(`log\=dirs=x`))
	if err == nil || !strings.Contains(err.Error(), "log=dirs") {
		t.Errorf("escaped '=' in key: %v", err)
	}
}

func TestParseDefaults(t *testing.T) {
	b, err := Parse(strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	if b.NodeID() != 1 || b.LogDirs()[0] != "./weir-data" || b.Listeners()[0] != "PLAINTEXT://127.0.0.1:9092" {
		t.Errorf("defaults: node %d dirs %q listeners %q", b.NodeID(), b.LogDirs(), b.Listeners())
	}
	if got := b.AdvertisedListeners(); !reflect.DeepEqual(got, b.Listeners()) {
		t.Errorf("advertised.listeners falls back to listeners: %q", got)
	}
	checks := map[string]int64{
		"num.partitions": 1, "socket.request.max.bytes": 104857600, "offsets.topic.num.partitions": 50,
		"replica.lag.time.max.ms": 10000, "broker.session.timeout.ms": 1500,
		"group.initial.rebalance.delay.ms": 3000, "producer.id.expiration.ms": 86400000,
		"offsets.retention.minutes": 10080, "log.retention.check.interval.ms": 300000,
		"log.flush.offset.checkpoint.interval.ms": 60000, "message.max.bytes": 1048588,
	}
	for name, want := range checks {
		if got := b.Int(name); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
	if !b.Bool("auto.create.topics.enable") {
		t.Errorf("auto.create.topics.enable = false")
	}
	if got := b.Int("log.retention.ms"); got != 0 {
		t.Errorf("unset log.retention.ms = %d", got)
	}
	if got := b.DefaultReplicationFactor(1); got != 1 {
		t.Errorf("default.replication.factor with 1 voter = %d", got)
	}
	if got := b.OffsetsTopicReplicationFactor(5); got != 3 {
		t.Errorf("offsets.topic.replication.factor with 5 voters = %d", got)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"node.id=1\n# c\nno.such.config=3\n", "server.properties:3: config: invalid config: Unknown broker config no.such.config"},
		{"num.partitions=0", "Invalid value 0 for configuration num.partitions: Value must be at least 1"},
		{"num.partitions=many", "Invalid value many for configuration num.partitions: Not a number of type INT"},
		{"message.max.bytes=4294967296", "Not a number of type INT"},
		{"auto.create.topics.enable=yes", "Expected value to be either true or false"},
		{"log.cleanup.policy=compact,shred", "String must be one of: compact, delete"},
		{"log.cleaner.min.cleanable.ratio=1.5", "Value must be in the range [0, 1]"},
		{"retention.ms=5", "Unknown broker config retention.ms"},
	} {
		_, err := Parse(strings.NewReader(tc.in))
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestOverride(t *testing.T) {
	b, err := Parse(strings.NewReader("node.id=3\nlog.dirs=/file\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Override("log.dirs", "/flag"); err != nil {
		t.Fatal(err)
	}
	if got := b.LogDirs(); !reflect.DeepEqual(got, []string{"/flag"}) || b.Origin("log.dirs") != "override" {
		t.Errorf("log.dirs = %q from %s", got, b.Origin("log.dirs"))
	}
	if b.NodeID() != 3 {
		t.Errorf("node.id = %d", b.NodeID())
	}
	if err := b.Override("node.id", "-2"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("node.id=-2: %v", err)
	}
	if err := b.Override("nope", "1"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("unknown: %v", err)
	}
}

func resolveOne(t *testing.T, b *Broker, overrides map[string]string, name string) Resolved {
	t.Helper()
	rs, err := b.ResolveTopic(overrides)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("%s not resolved", name)
	return Resolved{}
}

func TestRetentionSynonymPrecedence(t *testing.T) {
	for _, tc := range []struct {
		file      string
		overrides map[string]string
		value     string
		source    Source
		synonyms  []string
	}{
		{"", nil, "604800000", SourceDefault, []string{"log.retention.hours=168/DEFAULT_CONFIG"}},
		{"log.retention.hours=1", nil, "3600000", SourceStaticBroker,
			[]string{"log.retention.hours=1/STATIC_BROKER_CONFIG", "log.retention.hours=168/DEFAULT_CONFIG"}},
		{"log.retention.hours=1\nlog.retention.minutes=2", nil, "120000", SourceStaticBroker,
			[]string{"log.retention.minutes=2/STATIC_BROKER_CONFIG", "log.retention.hours=1/STATIC_BROKER_CONFIG", "log.retention.hours=168/DEFAULT_CONFIG"}},
		{"log.retention.hours=1\nlog.retention.minutes=2\nlog.retention.ms=3", nil, "3", SourceStaticBroker,
			[]string{"log.retention.ms=3/STATIC_BROKER_CONFIG", "log.retention.minutes=2/STATIC_BROKER_CONFIG", "log.retention.hours=1/STATIC_BROKER_CONFIG", "log.retention.hours=168/DEFAULT_CONFIG"}},
		{"log.retention.ms=3", map[string]string{"retention.ms": "99"}, "99", SourceDynamicTopic,
			[]string{"retention.ms=99/DYNAMIC_TOPIC_CONFIG", "log.retention.ms=3/STATIC_BROKER_CONFIG", "log.retention.hours=168/DEFAULT_CONFIG"}},
		{"log.retention.hours=-1", nil, "-1", SourceStaticBroker,
			[]string{"log.retention.hours=-1/STATIC_BROKER_CONFIG", "log.retention.hours=168/DEFAULT_CONFIG"}},
	} {
		b, err := Parse(strings.NewReader(tc.file))
		if err != nil {
			t.Fatal(err)
		}
		r := resolveOne(t, b, tc.overrides, "retention.ms")
		var syns []string
		for _, s := range r.Synonyms {
			syns = append(syns, s.Name+"="+s.Value+"/"+s.Source.String())
		}
		if r.Value != tc.value || r.Source != tc.source || !reflect.DeepEqual(syns, tc.synonyms) {
			t.Errorf("%q %v: got %s %s %q, want %s %s %q", tc.file, tc.overrides, r.Value, r.Source, syns, tc.value, tc.source, tc.synonyms)
		}
	}
}

func TestResolveSources(t *testing.T) {
	b, err := Parse(strings.NewReader("log.segment.bytes=1048576\nlog.roll.hours=2\nlog.cleanup.policy=compact, delete\n"))
	if err != nil {
		t.Fatal(err)
	}
	overrides := map[string]string{"min.insync.replicas": "2", "flush.messages": "1"}
	for _, tc := range []struct {
		name, value string
		source      Source
	}{
		{"min.insync.replicas", "2", SourceDynamicTopic},
		{"flush.messages", "1", SourceDynamicTopic},
		{"segment.bytes", "1048576", SourceStaticBroker},
		{"segment.ms", "7200000", SourceStaticBroker},
		{"cleanup.policy", "compact,delete", SourceStaticBroker},
		{"max.message.bytes", "1048588", SourceDefault},
		{"flush.ms", "9223372036854775807", SourceDefault},
		{"compression.type", "producer", SourceDefault},
		{"unclean.leader.election.enable", "false", SourceDefault},
	} {
		r := resolveOne(t, b, overrides, tc.name)
		if r.Value != tc.value || r.Source != tc.source || r.ReadOnly || r.Sensitive || r.Null {
			t.Errorf("%s = %q %s (ro %v), want %q %s", tc.name, r.Value, r.Source, r.ReadOnly, tc.value, tc.source)
		}
	}
	r := resolveOne(t, b, overrides, "flush.ms")
	if len(r.Synonyms) != 1 || r.Synonyms[0].Name != "log.flush.scheduler.interval.ms" {
		t.Errorf("flush.ms synonyms = %+v", r.Synonyms)
	}
	if _, err := b.ResolveTopic(map[string]string{"retention.ms": "x"}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("invalid override: %v", err)
	}
}

func TestDescribeBroker(t *testing.T) {
	b, err := Parse(strings.NewReader("num.partitions=3\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Resolved{}
	for _, r := range b.Describe() {
		got[r.Name] = r
	}
	if r := got["num.partitions"]; r.Value != "3" || r.Source != SourceStaticBroker || len(r.Synonyms) != 2 || !r.ReadOnly {
		t.Errorf("num.partitions = %+v", r)
	}
	if r := got["log.retention.ms"]; !r.Null || len(r.Synonyms) != 0 {
		t.Errorf("log.retention.ms = %+v", r)
	}
	if r := got["replica.lag.time.max.ms"]; r.Value != "10000" || r.Source != SourceDefault {
		t.Errorf("replica.lag.time.max.ms = %+v", r)
	}
}

// TestBrokerRack checks that a server.properties may set broker.rack (the
// node reports it in Metadata and DescribeCluster), unset by default.
func TestBrokerRack(t *testing.T) {
	if v, ok := NewBroker().Value("broker.rack"); ok || v != "" {
		t.Errorf("default broker.rack %q, set %v", v, ok)
	}
	b, err := Parse(strings.NewReader("broker.rack=rack-a\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := b.Value("broker.rack"); !ok || v != "rack-a" {
		t.Errorf("broker.rack %q, set %v", v, ok)
	}
}

func TestValidateTopicConfigs(t *testing.T) {
	for _, tc := range []struct {
		configs map[string]string
		want    string // "" for valid
	}{
		{nil, ""},
		{map[string]string{"cleanup.policy": "compact", "flush.messages": "1", "retention.ms": "-1"}, ""},
		{map[string]string{"cleanup.policy": "delete,compact", "min.cleanable.dirty.ratio": "0.1"}, ""},
		{map[string]string{"retention.ms": "-2"}, "Invalid value -2 for configuration retention.ms: Value must be at least -1"},
		{map[string]string{"log.retention.ms": "1"}, "Unknown topic config name: log.retention.ms"},
		{map[string]string{"cleanup.policy": "shred"}, "String must be one of: compact, delete"},
		{map[string]string{"compression.type": "brotli"}, "String must be one of"},
		{map[string]string{"flush.messages": "0"}, "Value must be at least 1"},
		{map[string]string{"segment.bytes": "3000000000"}, "Not a number of type INT"},
		{map[string]string{"min.cleanable.dirty.ratio": "2"}, "Value must be in the range [0, 1]"},
		{map[string]string{"segment.index.bytes": "8"}, "segment.index.bytes 8 below 32"},
		{map[string]string{"cleanup.policy": ""}, "cleanup.policy needs delete, compact or both"},
	} {
		err := ValidateTopicConfigs(tc.configs)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.configs, err)
		case tc.want != "" && (!errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: got %v, want %q", tc.configs, err, tc.want)
		}
	}
}

func TestToLogConfigDefaults(t *testing.T) {
	rs, err := NewBroker().ResolveTopic(nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ToLogConfig(rs)
	if err != nil {
		t.Fatal(err)
	}
	if want := log.DefaultConfig(); c != want {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
}

func TestToLogConfigCompactGroupCommit(t *testing.T) {
	b, err := Parse(strings.NewReader("log.segment.bytes=1048576\nlog.cleaner.min.compaction.lag.ms=5\n"))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := b.ResolveTopic(map[string]string{"cleanup.policy": "compact", "flush.messages": "1", "retention.bytes": "1000"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ToLogConfig(rs)
	if err != nil {
		t.Fatal(err)
	}
	want := log.DefaultConfig()
	want.CleanupDelete, want.CleanupCompact = false, true
	want.FlushMessages = 1
	want.SegmentBytes = 1 << 20
	want.MinCompactionLagMs = 5
	want.RetentionBytes = 1000
	if c != want || !c.GroupCommit() || c.FlushMs != math.MaxInt64 {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
	if _, err := ToLogConfig([]Resolved{{Name: "segment.bytes", Type: TypeInt, Value: "10"}}); !errors.Is(err, ErrInvalidConfig) || !errors.Is(err, log.ErrInvalidConfig) {
		t.Errorf("segment.bytes=10: %v", err)
	}
}

func TestDocs(t *testing.T) {
	const path = "../../docs/configs.md"
	want := Markdown()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("docs/configs.md is stale; run: go test ./cluster/config -run TestDocs -update")
	}
}
