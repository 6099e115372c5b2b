package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirmq/weir/bench/perf"
	"github.com/weirmq/weir/internal/harness"
)

// TestPerfProduceAutoCreatesTopic runs `weir perf produce` to a topic that
// does not exist on a real `weir serve` with auto.create.topics.enable at
// its default, true: the broker creates the topic, as for Kafka's
// kafka-producer-perf-test.sh, and `weir perf consume` reads the records
// back. The broker list comes from WEIR_BROKERS and Kafka's flag names are
// used.
func TestPerfProduceAutoCreatesTopic(t *testing.T) {
	addr := harness.FreeAddr(t)
	startServe(t, "--data", t.TempDir(), "--listen", addr)
	t.Setenv("WEIR_BROKERS", addr)
	out := mustRun(t, "perf", "produce", "--topic", "fresh", "--num-records", "200", "--record-size", "10", "--reporting-interval", "0")
	if sum, err := perf.ParseProducerSummary(strings.TrimSpace(out)); err != nil || sum.Records != 200 {
		t.Fatalf("produce to a new topic printed %q: %+v, %v", out, sum, err)
	}
	out = mustRun(t, "perf", "consume", "--topic", "fresh", "--messages", "200", "--hide-header", "--reporting-interval", "0")
	if sum, err := perf.ParseConsumerSummary(strings.TrimSpace(out)); err != nil || sum.Records != 200 {
		t.Fatalf("consume printed %q: %+v, %v", out, sum, err)
	}
}

// TestPerfProduceWithoutAutoCreate runs `weir perf produce` to a missing
// topic on a `weir serve` whose config file sets
// auto.create.topics.enable=false: it fails before sending, in weir's
// words, and the topic is not created.
func TestPerfProduceWithoutAutoCreate(t *testing.T) {
	addr := harness.FreeAddr(t)
	props := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(props, []byte("auto.create.topics.enable=false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	startServe(t, "--config", props, "--data", t.TempDir(), "--listen", addr)
	code, stdout, stderr := runCmd(t, "perf", "produce", "--bootstrap-server", addr, "--topic", "fresh", "--records", "10")
	want := "weir perf: produce: topic fresh does not exist and the broker does not auto-create topics; create it with 'weir topics create --topic fresh'\n"
	if code != 1 || stdout != "" || stderr != want {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 1 and %q", code, stdout, stderr, want)
	}
	if code, _, stderr := runCmd(t, "perf", "consume", "--bootstrap-server", addr, "--topic", "fresh", "--records", "1"); code != 1 ||
		!strings.Contains(stderr, "topic fresh does not exist;") {
		t.Errorf("after the refused produce: consume exit %d, stderr %q; want the topic still missing", code, stderr)
	}
}
