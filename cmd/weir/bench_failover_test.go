package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/weirmq/weir/bench/failover"
	"github.com/weirmq/weir/internal/harness"
)

// TestBenchFailoverRejectsBadFlags: `weir bench failover` checks its
// settings before it starts any node.
func TestBenchFailoverRejectsBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--acks", "2"}, "acks"},
		{[]string{"--acks", "1", "--idempotent"}, "idempotent"},
		{[]string{"--fault", "partition", "--brokers", "127.0.0.1:1", "--stop-cmd", "true", "--start-cmd", "true"}, "not on an external one"},
		{[]string{"--fault", "partition", "--partition-time", "0s"}, "partition time"},
		{[]string{"--fault", "leader,leader"}, "twice"},
		{[]string{"--rf", "4"}, "replication factor"},
		{[]string{"--min-insync", "4"}, "min.insync.replicas"},
		{[]string{"--rounds", "0"}, "rounds"},
		{[]string{"extra"}, "unexpected"},
		{[]string{"--preset", "kafka"}, "no preset"},
		{[]string{"--client-defaults", "--client-tuned"}, "exclude each other"},
		{[]string{"--compare", "redpanda"}, "no --compare"},
		{[]string{"--client", "sarama"}, "want franz-go or librdkafka"},
		{[]string{"--preset", "seed", "--rf", "5"}, "replication factor"},
	} {
		code, stdout, stderr := runCmd(t, append([]string{"bench", "failover"}, c.args...)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("weir bench failover %v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
}

// TestBenchFailoverHelp: the usage names the flags and faults.
func TestBenchFailoverHelp(t *testing.T) {
	code, _, stderr := runCmd(t, "bench", "failover", "-h")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	for _, want := range []string{"usage: weir bench failover", "--nodes", "--topics", "--partitions int", "(default 30)", "--rf", "--min-insync",
		"--acks", "--idempotent", "--rate", "(default 500)", "--records", "(default 2000)", "--rounds", "(default 8)", "--fault",
		"controller", "rolling", "--unclean", "--out", "./weir-bench/", "--json", "--preset", "--sync", "--fsync", "--client-tuned", "--client-defaults", "--compare", "--client string", "librdkafka", "--python",
		"client-disconnect", "--latency", "--loss", "--fault-time", "--fault-latency", "--fault-loss", "--consumers"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("usage lacks %q:\n%s", want, stderr)
		}
	}
}

// TestBenchFailoverLibrdkafka: one leader kill with the librdkafka
// producer (confluent-kafka under /usr/bin/python3) at acks=all loses
// nothing, and the report names librdkafka. Skipped when confluent-kafka
// is missing, unless WEIR_REQUIRE_CLIENTS=1.
func TestBenchFailoverLibrdkafka(t *testing.T) {
	harness.NeedClient(t, "confluent-kafka", failover.RdkafkaAvailable("/usr/bin/python3"))
	p, err := harness.Spawn(t, harness.Options{Args: []string{"bench", "failover", "--client", "librdkafka", "--rounds", "1",
		"--fault", "leader", "--partitions", "3", "--records", "300", "--rate", "300", "--gossip-profile", "relaxed",
		"--drain-quiet", "3s", "--tmp", t.TempDir(), "--out", t.TempDir(), "--json"}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(3 * time.Minute): // a bound, not a wait
		_ = p.Kill()
		t.Fatalf("still running after 3 minutes; stderr:\n%s", p.Stderr())
	}
	if code, err := p.Wait(); code != 0 || err != nil {
		t.Fatalf("exit %d, %v; stderr:\n%s", code, err, p.Stderr())
	}
	var doc struct {
		Settings struct {
			Producer []string `json:"producer"`
		} `json:"settings"`
		Scenarios []struct {
			Rounds []map[string]any `json:"rounds"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal([]byte(p.Stdout()), &doc); err != nil {
		t.Fatalf("stdout is not the JSON: %v\n%s", err, p.Stdout())
	}
	if len(doc.Settings.Producer) == 0 || !strings.HasPrefix(doc.Settings.Producer[0], "librdkafka ") {
		t.Errorf("producer settings %v do not name librdkafka", doc.Settings.Producer)
	}
	if len(doc.Scenarios) != 1 || len(doc.Scenarios[0].Rounds) != 1 {
		t.Fatalf("want one round:\n%s", p.Stdout())
	}
	if rd := doc.Scenarios[0].Rounds[0]; rd["lost"] != 0.0 || rd["acked"] == 0.0 || rd["sent"] != 300.0 {
		t.Errorf("sent %v, acked %v, lost %v at acks=all", rd["sent"], rd["acked"], rd["lost"])
	}
}
