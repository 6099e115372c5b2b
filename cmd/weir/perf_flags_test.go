package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirmq/weir/bench/perf"
)

// TestPerfProduceKafkaFlags checks the flag names of
// kafka-producer-perf-test.sh beside weir's: --num-records, --producer-props
// (repeated, and Kafka's several values after one flag) and
// --producer.config, with the file under the props and weir's own flags
// over both.
func TestPerfProduceKafkaFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "producer.properties")
	content := "# Kafka's producer config\nacks=1\nlinger.ms=50\ncompression.type=gzip\nbootstrap.servers=file:1\nbuffer.memory=33554432\n"
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args   []string
		check  func(perf.ProducerConfig) bool
		stderr string
	}{
		{[]string{"--num-records", "7", "--producer-props", "acks=0", "linger.ms=9", "batch.size=4096", "--record-size", "10", "--throughput", "100"},
			func(c perf.ProducerConfig) bool {
				return c.Records == 7 && c.Acks == perf.AcksNone && !c.Idempotent && c.Linger == 9*time.Millisecond &&
					c.BatchBytes == 4096 && c.RecordSize == 10 && c.Throughput == 100
			}, ""},
		{[]string{"--records", "7", "--producer-props", "acks=all", "--producer-props", "enable.idempotence=false", "--producer-props", "max.in.flight.requests.per.connection=2"},
			func(c perf.ProducerConfig) bool { return c.Acks == perf.AcksAll && !c.Idempotent && c.MaxInFlight == 2 }, ""},
		{[]string{"--records", "7", "--producer.config", file},
			func(c perf.ProducerConfig) bool {
				return c.Acks == perf.AcksLeader && !c.Idempotent && c.Linger == 50*time.Millisecond &&
					c.Compression == perf.CompressionGzip && strings.Join(c.Brokers, ",") == "file:1"
			}, "weir perf produce: ignoring producer properties weir does not use: buffer.memory\n"},
		{[]string{"--records", "7", "--producer.config", file, "--producer-props", "linger.ms=3", "bootstrap.servers=props:1", "--acks", "all", "--compression", "lz4"},
			func(c perf.ProducerConfig) bool {
				return c.Acks == perf.AcksAll && c.Idempotent && c.Linger == 3*time.Millisecond &&
					c.Compression == perf.CompressionLz4 && strings.Join(c.Brokers, ",") == "props:1"
			}, "weir perf produce: ignoring producer properties weir does not use: buffer.memory\n"},
		{[]string{"--records", "7", "--producer-props", "bootstrap.servers=props:1", "--bootstrap-server", "flag:1"},
			func(c perf.ProducerConfig) bool {
				return strings.Join(c.Brokers, ",") == "flag:1" && c.TopicTimeout == perf.DefaultTopicTimeout
			}, ""},
		{[]string{"--records", "7", "--timeout", "2s"}, func(c perf.ProducerConfig) bool { return c.TopicTimeout == 2*time.Second }, ""},
	}
	for _, c := range cases {
		var stderr bytes.Buffer
		cfg, err := parsePerfProduceFlags(append([]string{"--topic", "t"}, c.args...), &stderr)
		if err != nil || !c.check(cfg) || stderr.String() != c.stderr {
			t.Errorf("flags %q: %+v, %v, stderr %q; want stderr %q", c.args, cfg, err, stderr.String(), c.stderr)
		}
	}
}

// TestPerfConsumeKafkaFlags checks the flag names of
// kafka-consumer-perf-test.sh beside weir's.
func TestPerfConsumeKafkaFlags(t *testing.T) {
	var stderr bytes.Buffer
	cfg, _, err := parsePerfConsumeFlags([]string{"--topic", "t", "--messages", "5", "--group", "g", "--from-latest", "--reporting-interval", "250"}, &stderr)
	if err != nil || cfg.Records != 5 || cfg.Group != "g" || !cfg.FromLatest || cfg.ReportInterval != 250*time.Millisecond {
		t.Errorf("%+v, %v", cfg, err)
	}
	cfg, _, err = parsePerfConsumeFlags([]string{"--topic", "t", "--messages", "5"}, &stderr)
	if err != nil || cfg.FromLatest || cfg.ReportInterval != 5*time.Second {
		t.Errorf("defaults: %+v, %v", cfg, err)
	}
}

// TestPerfUsageErrorsInWeirsWords checks the text of command-line mistakes:
// the command's name once, then the detail, with no package prefix.
func TestPerfUsageErrorsInWeirsWords(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"produce", "--topic", "t", "--records", "10", "--acks", "2"}, `weir perf produce: acks "2", want 0, 1, -1 or all`},
		{[]string{"produce", "--topic", "t", "--records", "0"}, `weir perf produce: 0 records, need at least 1`},
		{[]string{"produce", "--topic", "t", "--records", "10", "--acks", "1", "--idempotent"}, `weir perf produce: the idempotent producer needs acks=all, not acks=1`},
		{[]string{"produce", "--topic", "t", "--records", "10", "--producer-props", "acks=2"}, `weir perf produce: producer property acks "2", want 0, 1, -1 or all`},
		{[]string{"produce", "--topic", "t", "--records", "10", "--producer-props", "acks"}, `weir perf produce: invalid value "acks" for flag --producer-props: "acks" is not NAME=VALUE`},
		{[]string{"produce", "--topic", "t", "--records", "10", "--producer-props", "acks=1", "extra"}, `weir perf produce: unexpected argument "extra": not a NAME=VALUE producer property`},
		{[]string{"produce", "--topic", "t", "--records", "10", "linger.ms=5"}, `weir perf produce: unexpected arguments: linger.ms=5`},
		{[]string{"produce", "--topic", "t", "--records", "10", "--producer.config", "/nonexistent/p.properties"}, `weir perf produce: --producer.config: open /nonexistent/p.properties: no such file or directory`},
		{[]string{"produce", "--topic", "t", "--records", "10", "--timeout", "0s"}, `weir perf produce: --timeout 0s, need more than 0`},
		{[]string{"consume", "--topic", "t", "--records", "1", "--timeout", "0"}, `weir perf consume: timeout 0s, need more than 0`},
	} {
		code, stdout, stderr := runCmd(t, append([]string{"perf"}, c.args...)...)
		// The flag package prints the usage before a bad value's error.
		_, msg, _ := strings.Cut("\n"+stderr, "\nweir perf ")
		if msg, _, _ = strings.Cut(msg, "\n"); code != 2 || stdout != "" || "weir perf "+msg != c.want {
			t.Errorf("weir perf %q: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
}

// consumeWatcher is the stdout of an interrupted `weir perf consume`: it
// cancels the command's context once a progress line reports every record
// there is, as a Ctrl-C would.
type consumeWatcher struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	after  string
	cancel context.CancelFunc
}

func (w *consumeWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if strings.Contains(string(p), w.after) {
		w.cancel()
	}
	return w.buf.Write(p)
}

// TestPerfConsumeProgressAndSummaryOnInterrupt consumes the 100 records of a
// topic, asking for more: progress lines come while it runs, and the
// interrupt prints the header and the summary of the 100 records and fails
// saying how far it got.
func TestPerfConsumeProgressAndSummaryOnInterrupt(t *testing.T) {
	b := startKfake(t, 2, "hundred")
	mustRun(t, "perf", "produce", "--bootstrap-server", b, "--topic", "hundred", "--records", "100", "--record-size", "10")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &consumeWatcher{after: " 100 records in all.", cancel: cancel}
	var stderr bytes.Buffer
	code := run(ctx, []string{"perf", "consume", "--bootstrap-server", b, "--topic", "hundred", "--records", "1000",
		"--timeout", "10m", "--reporting-interval", "1ns"}, out, &stderr)
	if want := "weir perf: consume: interrupted after 100 of 1000 records consumed: context canceled\n"; code != 1 || stderr.String() != want {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, stderr.String(), want)
	}
	ls := lines(out.buf.String())
	if len(ls) < 3 || ls[len(ls)-2] != perf.ConsumerHeader {
		t.Fatalf("stdout:\n%s\nwant progress lines, the header and the summary", out.buf.String())
	}
	for _, l := range ls[:len(ls)-2] {
		if !strings.HasSuffix(l, " records in all.") || !strings.Contains(l, " records consumed, ") {
			t.Errorf("progress line %q", l)
		}
	}
	if sum, err := perf.ParseConsumerSummary(ls[len(ls)-1]); err != nil || sum.Records != 100 {
		t.Errorf("summary %+v, %v; want the 100 records consumed", sum, err)
	}
}
