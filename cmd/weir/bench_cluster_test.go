package main

import (
	"strings"
	"testing"
)

// TestBenchClusterRejectsBadFlags: `weir bench cluster` checks its counts
// and scenarios before it starts any node (package bench/cluster's tests
// run the scenarios against real weir serve processes).
func TestBenchClusterRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--kills", "-1"},
		{"--partitions", "0"},
		{"--measure", "nonsense"},
		{"--reps", "0"},
		{"--weir-env", "NOEQUALS"},
		{"extra"},
	} {
		code, stdout, stderr := runCmd(t, append([]string{"bench", "cluster"}, args...)...)
		if code != 2 || stdout != "" {
			t.Errorf("weir bench cluster %v: exit %d, stdout %q, want 2; stderr:\n%s", args, code, stdout, stderr)
		}
	}
}

// TestBenchClusterHelpNamesTheScenarios: the usage lists the flags that
// size the recorded run.
func TestBenchClusterHelpNamesTheScenarios(t *testing.T) {
	code, _, stderr := runCmd(t, "bench", "cluster", "-h")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	for _, want := range []string{"usage: weir bench cluster", "--kills int", "(default 20)", "--stops", "--measure", "nats-failover", "--scale-topics"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("usage lacks %q:\n%s", want, stderr)
		}
	}
}
