package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirmq/weir/bench/logbench"
	"github.com/weirmq/weir/internal/harness"
)

func TestBenchLogPrintsSummary(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCmd(t, "bench", "log", "--dir", dir, "--partitions", "2", "--writers", "3",
		"--record-size", "100", "--batch-bytes", "400", "--batches", "12", "--fsync", "--report-synced")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 14 || !strings.HasPrefix(lines[0], "ready ") {
		t.Fatalf("want a ready line, 12 synced lines and a summary, got:\n%s", stdout)
	}
	for _, l := range lines[1:13] {
		if _, err := logbench.ParseSynced(l); err != nil {
			t.Error(err)
		}
	}
	fields := parseSummary(t, lines[13])
	for key, want := range map[string]float64{"batches": 12, "records": 48} {
		if fields[key] != want {
			t.Errorf("summary %s=%v, want %v", key, fields[key], want)
		}
	}
	for _, key := range []string{"bytes", "seconds", "MiB/s", "batches/s", "fsync_rounds", "appends/round"} {
		if v, ok := fields[key]; !ok || v <= 0 {
			t.Errorf("summary %s=%v, want a positive figure", key, v)
		}
	}
	if p50, p99, top := fields["p50_ms"], fields["p99_ms"], fields["max_ms"]; p50 < 0 || p99 < p50 || top < p99 {
		t.Errorf("summary latencies p50 %v, p99 %v, max %v ms: want 0 <= p50 <= p99 <= max", p50, p99, top)
	}
}

// parseSummary splits the summary line into its key=value figures.
func parseSummary(t *testing.T, line string) map[string]float64 {
	t.Helper()
	words := strings.Fields(line)
	if len(words) == 0 || words[0] != logbench.SummaryPrefix {
		t.Fatalf("summary line %q does not start with %q", line, logbench.SummaryPrefix)
	}
	fields := map[string]float64{}
	for _, w := range words[1:] {
		key, val, ok := strings.Cut(w, "=")
		v, err := strconv.ParseFloat(val, 64)
		if !ok || err != nil {
			t.Fatalf("summary line %q: bad field %q", line, w)
		}
		fields[key] = v
	}
	return fields
}

func TestBenchUsage(t *testing.T) {
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"bench"}, 2, "usage: weir bench <command>"},
		{[]string{"bench", "-h"}, 0, "usage: weir bench <command>"},
		{[]string{"help", "bench"}, 0, "log"},
		{[]string{"bench", "nope"}, 2, `unknown bench command "nope"`},
		{[]string{"bench", "lgo"}, 2, `unknown bench command "lgo": did you mean "log"?`},
		{[]string{"bench", "log"}, 2, "--dir is required"},
		{[]string{"bench", "log", "-h"}, 0, "usage: weir bench log"},
		{[]string{"bench", "log", "--dir", "x", "--report-synced"}, 2, "needs fsync"},
		{[]string{"bench", "log", "--dir", "x", "--writers", "0"}, 2, "0 writers"},
		{[]string{"bench", "log", "--dir", "x", "extra"}, 2, "unexpected arguments: extra"},
		{[]string{"bench", "log", "--no-such-flag"}, 2, "no-such-flag"},
		{[]string{"bench", "log", "--dir", "x", "--writer", "2"}, 2, "unknown flag --writer: did you mean --writers?"},
	} {
		code, stdout, stderr := runCmd(t, c.args...)
		if code != c.code || stdout != "" || !strings.Contains(stderr, c.stderr) {
			t.Errorf("weir %q: exit %d, stdout %q, stderr %q; want exit %d, no stdout, stderr with %q",
				c.args, code, stdout, stderr, c.code, c.stderr)
		}
	}
}

// TestBenchLogStopsCleanlyOnSIGTERM runs `weir bench log` as a process,
// stops it with SIGTERM once it is ready, and checks that it printed its
// summary and left the directory shut down cleanly.
func TestBenchLogStopsCleanlyOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	p := harness.Start(t, harness.Options{
		Args:      []string{"bench", "log", "--dir", dir, "--partitions", "2", "--writers", "2", "--record-size", "100", "--duration", "10m"},
		ReadyLine: "^ready ",
	})
	code, err := p.Stop(time.Minute) // a bound, not a wait: the child stops at once
	if code != 0 || err != nil {
		t.Fatalf("after SIGTERM: exit %d, %v; stderr:\n%s", code, err, p.Stderr())
	}
	lines := strings.Split(strings.TrimSuffix(p.Stdout(), "\n"), "\n")
	parseSummary(t, lines[len(lines)-1])
	code, stdout, stderr := runCmd(t, "bench", "log", "--dir", dir, "--partitions", "2", "--batches", "1")
	if code != 0 || !strings.Contains(stdout, "clean_shutdown=true") {
		t.Errorf("rerun after SIGTERM: exit %d, stdout %q, stderr %q; want clean_shutdown=true", code, stdout, stderr)
	}
}
