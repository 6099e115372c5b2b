package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/internal/cli"
	"github.com/weirmq/weir/internal/harness"
)

// startPropsServe starts `weir serve` with a server.properties holding
// props and returns its address.
func startPropsServe(t *testing.T, props string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(path, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := harness.FreeAddr(t)
	startServe(t, "--config", path, "--data", t.TempDir(), "--listen", addr)
	return addr
}

// mustFail runs a weir command line that must exit with code and print
// nothing on stdout, and returns its stderr.
func mustFail(t *testing.T, code int, args ...string) string {
	t.Helper()
	got, stdout, stderr := runCmd(t, args...)
	if got != code || stdout != "" || stderr == "" {
		t.Fatalf("weir %s: exit %d, stdout %q, stderr %q; want %d and a message", strings.Join(args, " "), got, stdout, stderr, code)
	}
	return stderr
}

// decodeJSON decodes a command's --format json output into v, which must
// be the whole output: one document.
func decodeJSON(t *testing.T, out string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, out)
	}
	if dec.More() {
		t.Fatalf("more than one JSON document:\n%s", out)
	}
}

// partitionCount asks the broker how many partitions topic has, with a
// Metadata request of its own (kadm's helpers may answer from the client's
// metadata cache).
func partitionCount(ctx context.Context, t *testing.T, cl *kgo.Client, topic string) int {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = []kmsg.MetadataRequestTopic{rt}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("metadata of %s: %+v", topic, resp.Topics)
	}
	return len(resp.Topics[0].Partitions)
}

// TestTopicsOnServe runs add-partitions, describe and list against a real
// weir serve whose server.properties sets log.retention.hours, so topic
// configs show each source: the topic's override, the broker's static
// config and the defaults. Every command takes the broker from
// WEIR_BROKERS.
func TestTopicsOnServe(t *testing.T) {
	addr := startPropsServe(t, "log.retention.hours=1\n")
	t.Setenv(cli.BrokersEnv, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newTestClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)

	t.Run("add-partitions", func(t *testing.T) {
		mustRun(t, "topics", "create", "--topic", "grown", "--partitions", "2")
		// A commit creates __consumer_offsets, which must not grow.
		commit := kadm.Offsets{}
		commit.Add(kadm.Offset{Topic: "grown", Partition: 0, At: 0})
		if err := adm.CommitAllOffsets(ctx, "committer", commit); err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"2", "1"} {
			stderr := mustFail(t, 1, "topics", "add-partitions", "--topic", "grown", "--partitions", n)
			if !strings.Contains(stderr, `topic "grown" already has 2 partitions: --partitions is the new total and must be more than 2`) {
				t.Errorf("--partitions %s: %q", n, stderr)
			}
		}
		if out := mustRun(t, "topics", "add-partitions", "--topic", "grown", "-n", "1"); out != "Added 1 partition to topic grown (now 3).\n" {
			t.Errorf("-n 1 printed %q", out)
		}
		if n := partitionCount(ctx, t, cl, "grown"); n != 3 {
			t.Fatalf("after -n 1: %d partitions, want 3", n)
		}
		// Flags after the topic, Kafka's --bootstrap-server over WEIR_BROKERS.
		out := mustRun(t, "topics", "add-partitions", "--partitions", "5", "--topic", "grown", "--bootstrap-server", addr)
		if out != "Added 2 partitions to topic grown (now 5).\n" {
			t.Errorf("--partitions 5 printed %q", out)
		}
		if n := partitionCount(ctx, t, cl, "grown"); n != 5 {
			t.Fatalf("after --partitions 5: %d partitions, want 5", n)
		}
		// The new partitions take records.
		r := &kgo.Record{Topic: "grown", Partition: 4, Value: []byte("v")}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil || r.Offset != 0 {
			t.Fatalf("produce to the new partition 4: offset %d, %v", r.Offset, err)
		}

		stderr := mustFail(t, 1, "topics", "add-partitions", "--topic", "missing", "-n", "1")
		if !strings.HasPrefix(stderr, `weir topics: add partitions to topic "missing": UNKNOWN_TOPIC_OR_PARTITION`) ||
			!strings.HasSuffix(stderr, "(no such topic: 'weir topics list' shows the topics there are)\n") {
			t.Errorf("missing topic: %q", stderr)
		}
		stderr = mustFail(t, 1, "topics", "add-partitions", "--topic", "__consumer_offsets", "--num", "1")
		if !strings.Contains(stderr, "INVALID_TOPIC_EXCEPTION: Cannot add partitions to internal topic __consumer_offsets.") {
			t.Errorf("internal topic: %q", stderr)
		}
		for _, args := range [][]string{
			{"--topic", "grown"},
			{"--topic", "grown", "--partitions", "6", "--num", "1"},
			{"--topic", "grown", "-n", "0"},
			{"--topic", "grown", "--partitions", "0"},
			{"--partitions", "6"},
			{"--topic", "grown", "-n", "1", "extra"},
		} {
			mustFail(t, 2, append([]string{"topics", "add-partitions"}, args...)...)
		}
		if n := partitionCount(ctx, t, cl, "grown"); n != 5 {
			t.Errorf("after the refused attempts: %d partitions, want 5", n)
		}
	})

	t.Run("describe", func(t *testing.T) {
		mustRun(t, "topics", "create", "--topic", "described", "--partitions", "2", "--config", "cleanup.policy=compact")
		for i := range 3 {
			r := &kgo.Record{Topic: "described", Partition: 0, Key: []byte{byte('a' + i)}, Value: []byte("v")}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		del := kadm.Offsets{}
		del.Add(kadm.Offset{Topic: "described", Partition: 0, At: 1})
		if resp, err := adm.DeleteRecords(ctx, del); err != nil || resp.Error() != nil {
			t.Fatalf("delete records: %v %v", err, resp.Error())
		}

		out := mustRun(t, "topics", "describe", "--topic", "described")
		overrides, configs := describeConfigs(t, out, "described", 2, "1/3", "0/0")
		if overrides != "cleanup.policy=compact,retention.ms=3600000" {
			t.Errorf("Configs: %q, want the override and the static broker config", overrides)
		}
		for name, want := range map[string][2]string{
			"cleanup.policy": {"compact", "DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact, DEFAULT_CONFIG:log.cleanup.policy=delete"},
			"retention.ms":   {"3600000", "STATIC_BROKER_CONFIG:log.retention.hours=1, DEFAULT_CONFIG:log.retention.hours=168"},
			"segment.bytes":  {"1073741824", "DEFAULT_CONFIG:log.segment.bytes=1073741824"},
		} {
			if configs[name] != want {
				t.Errorf("config %s: %q, want %q", name, configs[name], want)
			}
		}
		every, err := config.NewBroker().ResolveTopic(nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(configs) != len(every) {
			t.Errorf("%d configs described, want every one of weir's %d topic configs:\n%s", len(configs), len(every), out)
		}

		var views []struct {
			Name              string `json:"name"`
			TopicID           string `json:"topic_id"`
			Internal          bool   `json:"internal"`
			PartitionCount    int    `json:"partition_count"`
			ReplicationFactor int    `json:"replication_factor"`
			Configs           []struct {
				Name      string  `json:"name"`
				Value     *string `json:"value"`
				Source    string  `json:"source"`
				Sensitive bool    `json:"sensitive"`
				Synonyms  []struct {
					Name   string  `json:"name"`
					Value  *string `json:"value"`
					Source string  `json:"source"`
				} `json:"synonyms"`
			} `json:"configs"`
			Partitions []struct {
				Partition       int32   `json:"partition"`
				Leader          int32   `json:"leader"`
				LeaderEpoch     int32   `json:"leader_epoch"`
				Replicas        []int32 `json:"replicas"`
				ISR             []int32 `json:"isr"`
				OfflineReplicas []int32 `json:"offline_replicas"`
				StartOffset     int64   `json:"start_offset"`
				HighWatermark   int64   `json:"high_watermark"`
				OffsetsError    string  `json:"offsets_error"`
			} `json:"partitions"`
		}
		decodeJSON(t, mustRun(t, "topics", "describe", "--topic", "described", "--format", "json"), &views)
		if len(views) != 1 {
			t.Fatalf("%d topics described, want 1", len(views))
		}
		v := views[0]
		if v.Name != "described" || len(v.TopicID) != 22 || v.Internal || v.PartitionCount != 2 || v.ReplicationFactor != 1 ||
			len(v.Partitions) != 2 || len(v.Configs) != len(configs) {
			t.Fatalf("described: %+v", v)
		}
		for i, want := range [][2]int64{{1, 3}, {0, 0}} {
			p := v.Partitions[i]
			if p.Partition != int32(i) || p.Leader != 1 || len(p.Replicas) != 1 || p.Replicas[0] != 1 || len(p.ISR) != 1 ||
				p.ISR[0] != 1 || p.OfflineReplicas == nil || len(p.OfflineReplicas) != 0 ||
				p.StartOffset != want[0] || p.HighWatermark != want[1] || p.OffsetsError != "" {
				t.Errorf("partition %d: %+v, want offsets %v", i, p, want)
			}
		}
		for _, c := range v.Configs {
			if c.Name != "retention.ms" {
				continue
			}
			if c.Value == nil || *c.Value != "3600000" || c.Source != "STATIC_BROKER_CONFIG" || c.Sensitive || len(c.Synonyms) != 2 ||
				c.Synonyms[0].Name != "log.retention.hours" || *c.Synonyms[0].Value != "1" || c.Synonyms[0].Source != "STATIC_BROKER_CONFIG" ||
				c.Synonyms[1].Name != "log.retention.hours" || *c.Synonyms[1].Value != "168" || c.Synonyms[1].Source != "DEFAULT_CONFIG" {
				t.Errorf("retention.ms: %+v", c)
			}
		}

		stderr := mustFail(t, 1, "topics", "describe", "--topic", "missing", "--format", "json")
		if !strings.HasPrefix(stderr, `weir topics: describe topic "missing": UNKNOWN_TOPIC_OR_PARTITION`) {
			t.Errorf("missing topic: %q", stderr)
		}
		mustFail(t, 2, "topics", "describe", "--format", "yaml")
	})

	t.Run("list", func(t *testing.T) {
		mustRun(t, "topics", "create", "--topic", "listed", "--partitions", "3")
		type summary struct {
			Name              string `json:"name"`
			TopicID           string `json:"topic_id"`
			Partitions        int    `json:"partitions"`
			ReplicationFactor int    `json:"replication_factor"`
			Internal          bool   `json:"internal"`
		}
		var all []summary
		decodeJSON(t, mustRun(t, "topics", "list", "--format", "json", "--internal"), &all)
		var names []string
		var listed summary
		for _, s := range all {
			names = append(names, s.Name)
			if s.Internal != strings.HasPrefix(s.Name, "__") {
				t.Errorf("%s: internal %v", s.Name, s.Internal)
			}
			if s.Name == "listed" {
				listed = s
			}
		}
		if listed.Partitions != 3 || listed.ReplicationFactor != 1 || len(listed.TopicID) != 22 {
			t.Errorf("listed: %+v", listed)
		}
		if got := strings.Join(names, " "); got != "__consumer_offsets described grown listed" {
			t.Errorf("--internal lists %q", got)
		}
		var plain []summary
		decodeJSON(t, mustRun(t, "topics", "list", "--format", "json"), &plain)
		if len(plain) != 3 || plain[0].Name != "described" {
			t.Errorf("without --internal: %+v", plain)
		}
		if out := mustRun(t, "topics", "list"); out != "described\ngrown\nlisted\n" {
			t.Errorf("text list %q", out)
		}
	})
}
