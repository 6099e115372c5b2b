package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirmq/weir/bench/perf"
)

// progressLineRE matches a progress line of kafka-producer-perf-test.sh.
var progressLineRE = regexp.MustCompile(`^[0-9]+ records sent, [0-9]+\.[0-9] records/sec \([0-9]+\.[0-9]{2} MB/sec\), [0-9]+\.[0-9] ms avg latency, [0-9]+\.[0-9] ms max latency\.$`)

// lines splits output into its lines.
func lines(out string) []string {
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// consumerProgressLineRE matches a progress line of weir perf consume.
var consumerProgressLineRE = regexp.MustCompile(`^[0-9]+ records consumed, [0-9]+\.[0-9] records/sec \([0-9]+\.[0-9]{2} MB/sec\), [0-9]+ records in all\.$`)

// withoutProgress returns ls without its leading consumer progress lines,
// failing the test if one is not in the progress format.
func withoutProgress(t *testing.T, ls []string) []string {
	t.Helper()
	for len(ls) > 0 && strings.HasSuffix(ls[0], " records in all.") {
		if !consumerProgressLineRE.MatchString(ls[0]) {
			t.Errorf("progress line %q is not in the consumer's progress format", ls[0])
		}
		ls = ls[1:]
	}
	return ls
}

func TestPerfProduceThenConsume(t *testing.T) {
	b := startKfake(t, 2, "perf")

	out := mustRun(t, "perf", "produce", "--brokers", b, "--topic", "perf", "--records", "2000", "--record-size", "64",
		"--reporting-interval", "1ms", "--acks", "1", "--compression", "lz4", "--linger", "0")
	ls := lines(out)
	sum, err := perf.ParseProducerSummary(ls[len(ls)-1])
	if err != nil {
		t.Fatalf("last line: %v\n%s", err, out)
	}
	if sum.Records != 2000 || sum.RecordsPerSec <= 0 || sum.P50Ms > sum.P95Ms || sum.P95Ms > sum.P99Ms || sum.P99Ms > sum.P999Ms ||
		float64(sum.P999Ms) > sum.MaxLatencyMs {
		t.Errorf("summary %+v", sum)
	}
	for _, l := range ls[:len(ls)-1] {
		if !progressLineRE.MatchString(l) {
			t.Errorf("progress line %q is not in Kafka's format", l)
		}
	}

	// A consumer that runs past its reporting interval (5 s) also prints
	// progress lines first, as on a loaded machine.
	out = mustRun(t, "perf", "consume", "--brokers", b, "--topic", "perf", "--records", "2000")
	ls = withoutProgress(t, lines(out))
	if len(ls) != 2 || ls[0] != perf.ConsumerHeader {
		t.Fatalf("consume printed:\n%s", out)
	}
	got, err := perf.ParseConsumerSummary(ls[1])
	if err != nil {
		t.Fatal(err)
	}
	if got.Records != 2000 || got.MB != 0.1221 || got.RebalanceMs != 0 || got.End.Before(got.Start) { // 2000*64 B = 0.1221 MiB
		t.Errorf("consumer summary %+v", got)
	}

	out = mustRun(t, "perf", "consume", "--brokers", b, "--topic", "perf", "--records", "2000", "--group", "g", "--hide-header")
	if ls = withoutProgress(t, lines(out)); len(ls) != 1 {
		t.Fatalf("consume --hide-header printed:\n%s", out)
	}
	if got, err := perf.ParseConsumerSummary(ls[0]); err != nil || got.Records != 2000 {
		t.Errorf("group consumer summary %+v, %v", got, err)
	}
}

func TestPerfProduceFlags(t *testing.T) {
	base := []string{"--topic", "t", "--records", "10"}
	cases := []struct {
		args  []string
		check func(perf.ProducerConfig) bool
	}{
		{nil, func(c perf.ProducerConfig) bool {
			d := perf.DefaultProducerConfig()
			return c.Acks == perf.AcksAll && c.Idempotent && c.Linger == d.Linger && c.BatchBytes == d.BatchBytes &&
				c.Throughput < 0 && c.Compression == perf.CompressionNone && c.RecordSize == d.RecordSize &&
				c.Brokers[0] == perf.DefaultBroker && c.Topic == "t" && c.Records == 10
		}},
		{[]string{"--acks", "1"}, func(c perf.ProducerConfig) bool { return c.Acks == perf.AcksLeader && !c.Idempotent }},
		{[]string{"--acks", "0"}, func(c perf.ProducerConfig) bool { return c.Acks == perf.AcksNone && !c.Idempotent }},
		{[]string{"--acks", "-1"}, func(c perf.ProducerConfig) bool { return c.Acks == perf.AcksAll && c.Idempotent }},
		{[]string{"--acks", "all", "--idempotent=false"}, func(c perf.ProducerConfig) bool { return c.Acks == perf.AcksAll && !c.Idempotent }},
		{[]string{"--linger", "7"}, func(c perf.ProducerConfig) bool { return c.Linger == 7*time.Millisecond }},
		{[]string{"--linger", "1.5s"}, func(c perf.ProducerConfig) bool { return c.Linger == 1500*time.Millisecond }},
		{[]string{"--brokers", "a:1, b:2"}, func(c perf.ProducerConfig) bool { return strings.Join(c.Brokers, " ") == "a:1 b:2" }},
		{[]string{"--throughput", "5000", "--batch-bytes", "16384", "--compression", "ZSTD", "--record-size", "100", "--reporting-interval", "0"},
			func(c perf.ProducerConfig) bool {
				return c.Throughput == 5000 && c.BatchBytes == 16384 && c.Compression == perf.CompressionZstd && c.RecordSize == 100 && c.ReportInterval == 0
			}},
	}
	for _, c := range cases {
		var stderr bytes.Buffer
		cfg, err := parsePerfProduceFlags(append(append([]string{}, base...), c.args...), &stderr)
		if err != nil || !c.check(cfg) {
			t.Errorf("flags %q: %+v, %v", c.args, cfg, err)
		}
	}
}

func TestPerfConsumeFlags(t *testing.T) {
	var stderr bytes.Buffer
	cfg, hide, err := parsePerfConsumeFlags([]string{"--topic", "t", "--records", "5", "--timeout", "2500", "--group", "g", "--hide-header"}, &stderr)
	if err != nil || cfg.Timeout != 2500*time.Millisecond || cfg.Group != "g" || !hide || cfg.Records != 5 || cfg.Topic != "t" {
		t.Errorf("%+v, %v, %v", cfg, hide, err)
	}
	cfg, hide, err = parsePerfConsumeFlags([]string{"--topic", "t", "--records", "5"}, &stderr)
	if err != nil || cfg.Timeout != 10*time.Second || cfg.Group != "" || hide {
		t.Errorf("defaults: %+v, %v, %v", cfg, hide, err)
	}
}

func TestPerfUsageErrorsExitTwo(t *testing.T) {
	cases := [][]string{
		{"perf"},
		{"perf", "no-such-command"},
		{"perf", "produce"},
		{"perf", "produce", "--topic", "t"},
		{"perf", "produce", "--records", "10"},
		{"perf", "produce", "--topic", "t", "--records", "0"},
		{"perf", "produce", "--topic", "t", "--records", "10", "extra"},
		{"perf", "produce", "--topic", "t", "--records", "10", "--acks", "2"},
		{"perf", "produce", "--topic", "t", "--records", "10", "--acks", "1", "--idempotent"},
		{"perf", "produce", "--topic", "t", "--records", "10", "--compression", "brotli"},
		{"perf", "produce", "--topic", "t", "--records", "10", "--throughput", "0"},
		{"perf", "produce", "--topic", "t", "--records", "10", "--linger", "-1"},
		{"perf", "produce", "--topic", "t", "--records", "10", "--linger", "soon"},
		{"perf", "produce", "--topic", "t", "--records", "10", "--batch-bytes", "0"},
		{"perf", "produce", "--topic", "t", "--records", "10", "--record-size", "-1"},
		{"perf", "produce", "--topic", "t", "--records", "10", "--max-in-flight", "0", "--acks", "1"},
		{"perf", "produce", "--topic", "t", "--records", "10", "--brokers", ""},
		{"perf", "consume", "--topic", "t"},
		{"perf", "consume", "--records", "1"},
		{"perf", "consume", "--topic", "t", "--records", "1", "--timeout", "0"},
		{"perf", "consume", "--topic", "t", "--records", "1", "--no-such-flag"},
	}
	for _, args := range cases {
		code, stdout, stderr := runCmd(t, args...)
		if code != 2 || stdout != "" || stderr == "" {
			t.Errorf("weir %q: exit %d, stdout %q, stderr %q; want 2, usage on stderr", args, code, stdout, stderr)
		}
	}
}

// TestPerfUnknownTopicExitsOne runs both commands on a topic that does not
// exist on a broker that does not auto-create topics (kfake's default): a
// failure in weir's words that says how to create the topic.
func TestPerfUnknownTopicExitsOne(t *testing.T) {
	b := startKfake(t, 1, "exists")
	for cmd, want := range map[string]string{
		"produce": "weir perf: produce: topic missing does not exist and the broker does not auto-create topics; create it with 'weir topics create --topic missing'\n",
		"consume": "weir perf: consume: topic missing does not exist; create it with 'weir topics create --topic missing'\n",
	} {
		code, stdout, stderr := runCmd(t, "perf", cmd, "--bootstrap-server", b, "--topic", "missing", "--records", "5")
		if code != 1 || stdout != "" || stderr != want {
			t.Errorf("perf %s to a missing topic: exit %d, stdout %q, stderr %q; want 1 and %q", cmd, code, stdout, stderr, want)
		}
	}
}

func TestPerfConsumeTimeoutPrintsSummaryAndFails(t *testing.T) {
	b := startKfake(t, 1, "short")
	mustRun(t, "perf", "produce", "--brokers", b, "--topic", "short", "--records", "10", "--record-size", "10")
	code, stdout, stderr := runCmd(t, "perf", "consume", "--brokers", b, "--topic", "short", "--records", "11", "--timeout", "300ms")
	if code != 1 || !strings.Contains(stderr, "timed out waiting for records: 10 of 11 records consumed") {
		t.Fatalf("exit %d, stderr %q; want 1 and the timeout", code, stderr)
	}
	ls := lines(stdout)
	if len(ls) != 2 {
		t.Fatalf("stdout:\n%s", stdout)
	}
	if got, err := perf.ParseConsumerSummary(ls[1]); err != nil || got.Records != 10 {
		t.Errorf("summary %+v, %v; want the 10 records consumed", got, err)
	}
}

// cancelOnWrite buffers a command's stdout and cancels its context at the
// first line, as an interrupt in the middle of a run would.
type cancelOnWrite struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	cancel context.CancelFunc
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cancel()
	return w.buf.Write(p)
}

func TestPerfProduceReturnsWhenCancelled(t *testing.T) {
	b := startKfake(t, 1, "endless")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &cancelOnWrite{cancel: cancel}
	var stderr bytes.Buffer
	code := run(ctx, []string{"perf", "produce", "--brokers", b, "--topic", "endless", "--records", "1000000000000",
		"--throughput", "1000", "--reporting-interval", "1ms"}, out, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "context canceled") {
		t.Errorf("exit %d, stderr %q; want 1 and the cancellation", code, stderr.String())
	}
	ls := lines(out.buf.String())
	if _, err := perf.ParseProducerSummary(ls[len(ls)-1]); err != nil {
		t.Errorf("no summary of the records sent before the cancel: %v", err)
	}
}
