package brokerbench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirmq/weir/internal/harness"
)

// TestMain removes the weir binary the harness builds.
func TestMain(m *testing.M) { harness.Main(m) }

// smokeConfig is a run with tiny counts: seconds, not a measurement.
func smokeConfig(t *testing.T) Config {
	cfg := DefaultConfig()
	cfg.Reps = 1
	cfg.Records = 300
	cfg.SmallRecords = 500
	cfg.LatencyRecords = 20
	cfg.IdleTopics, cfg.IdlePartitions = 2, 3
	cfg.IdleSettle = 0
	cfg.TempDir = t.TempDir()
	cfg.WeirArgs = []string{"--log-level", "warn"}
	return cfg
}

// TestRunAgainstWeirServe runs every measurement once, with tiny counts,
// against a real `weir serve` and the kfake references: each series gets
// one figure and the report has a value in every cell of every goal row.
func TestRunAgainstWeirServe(t *testing.T) {
	cfg := smokeConfig(t)
	cfg.WeirPath = harness.MustBuildWeir(t)
	res, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows(cfg) {
		for _, k := range []Key{r.weir, r.ref} {
			vs := res.Samples[k]
			if len(vs) != 1 || !(vs[0] > 0) {
				t.Errorf("%v: figures %v, want one positive figure", k, vs)
			}
		}
	}
	var b strings.Builder
	if err := res.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "| (") && strings.Contains(line, "—") && !strings.Contains(line, "| — | — |") {
			t.Errorf("report row with a missing figure: %s", line)
		}
	}
	entries, err := os.ReadDir(cfg.TempDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("data directories left behind: %v", entries)
	}
}

// TestRunReferencesOnly runs the kfake references alone twice: without a
// weir binary, no weir series exists and the goals read n/a.
func TestRunReferencesOnly(t *testing.T) {
	cfg := smokeConfig(t)
	cfg.Reps = 2
	res, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []Key{
		{Throughput, KfakeDataDir, ProduceMiBps}, {Throughput, KfakeDataDir, ConsumeMiBps},
		{Fsync, KfakeSync, ProduceMiBps}, {Latency, KfakeDataDir, P99Ms}, {Small, KfakeDataDir, ProduceRecords},
	}
	for _, k := range want {
		if len(res.Samples[k]) != 2 {
			t.Errorf("%v: figures %v, want 2", k, res.Samples[k])
		}
	}
	for k := range res.Samples {
		if k.Target.isWeir() {
			t.Errorf("weir series %v without a weir binary", k)
		}
	}
	var b strings.Builder
	if err := res.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(b.String(), "| n/a |"); got != 6 {
		t.Errorf("report has %d goals n/a, want 6 (all but the reference's own row):\n%s", got, b.String())
	}
}

func TestStartWeirReportsEarlyExit(t *testing.T) {
	script := filepath.Join(t.TempDir(), "fake-weir")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'no such broker' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := startWeir(t.Context(), script, t.TempDir(), nil, nil, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") || !strings.Contains(err.Error(), "no such broker") {
		t.Fatalf("startWeir of a program that exits: error %v, want the early exit with its output", err)
	}
}

func TestStartWeirTimesOutAndKillsTheGroup(t *testing.T) {
	script := filepath.Join(t.TempDir(), "silent-weir")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsleep 60 &\nwait\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := startWeir(context.Background(), script, t.TempDir(), nil, nil, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "not ready after") {
		t.Fatalf("startWeir of a silent program: error %v, want a readiness timeout", err)
	}
	// The shell waits for its sleep child: startWeir only returns once the
	// whole group was killed, long before the sleep would end.
	if waited := time.Since(start); waited > 30*time.Second {
		t.Fatalf("startWeir returned after %v: the process group was not killed", waited)
	}
}

func TestOrderAlternatesAndSkipsWeirWithoutBinary(t *testing.T) {
	r := &runner{cfg: Config{WeirPath: "/bin/weir"}}
	targets := []Target{Weir, KfakeDataDir}
	if got := r.order(targets, 0); !slices.Equal(got, []Target{Weir, KfakeDataDir}) {
		t.Errorf("rep 0 order %v", got)
	}
	if got := r.order(targets, 1); !slices.Equal(got, []Target{KfakeDataDir, Weir}) {
		t.Errorf("rep 1 order %v", got)
	}
	if !slices.Equal(targets, []Target{Weir, KfakeDataDir}) {
		t.Errorf("order changed its argument: %v", targets)
	}
	r.cfg.WeirPath = ""
	if got := r.order([]Target{WeirFsync, KfakeSync}, 1); !slices.Equal(got, []Target{KfakeSync}) {
		t.Errorf("order without weir binary %v", got)
	}
}

func TestValidateRejectsBadConfigs(t *testing.T) {
	for name, mutate := range map[string]func(*Config){
		"no reps":         func(c *Config) { c.Reps = 0 },
		"no records":      func(c *Config) { c.Records = 0 },
		"negative size":   func(c *Config) { c.SmallRecordSize = -1 },
		"zero rate":       func(c *Config) { c.LatencyRate = 0 },
		"no partitions":   func(c *Config) { c.IdlePartitions = 0 },
		"zero in flight":  func(c *Config) { c.MaxInFlight = 0 },
		"zero timeout":    func(c *Config) { c.StartTimeout = 0 },
		"unknown measure": func(c *Config) { c.Measures = []Measure{Throughput, "d"} },
	} {
		cfg := DefaultConfig()
		mutate(&cfg)
		if err := cfg.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, cfg)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("DefaultConfig: %v", err)
	}
}
