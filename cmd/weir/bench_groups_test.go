package main

import (
	"strings"
	"testing"
)

// TestBenchGroupsKfakeOnly runs `weir bench groups` with tiny counts
// against kfake alone (the weir side is covered by bench/groupbench's
// smoke test) and checks the report's rows.
func TestBenchGroupsKfakeOnly(t *testing.T) {
	out := mustRun(t, "bench", "groups", "--no-weir", "--reps", "1", "--groups", "2", "--partitions-per-group", "2",
		"--commits", "3", "--clients", "1", "--members", "2", "--tmp", t.TempDir())
	for _, want := range []string{"Command: `weir bench groups", "| (a) commit requests/s | - |", "| (b) last join -> Stable, ms | - |"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestBenchGroupsUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{{"--reps", "0"}, {"--members", "0"}, {"extra"}} {
		code, stdout, _ := runCmd(t, append([]string{"bench", "groups"}, args...)...)
		if code != 2 || stdout != "" {
			t.Errorf("weir bench groups %q: exit %d, stdout %q; want 2", args, code, stdout)
		}
	}
}
