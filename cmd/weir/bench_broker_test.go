package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchBrokerReferencesOnly runs `weir bench broker --no-weir` with tiny
// counts (weir itself needs this binary, which a test cannot be; package
// brokerbench's tests run a real weir serve): the report goes to stdout and
// to --out.
func TestBenchBrokerReferencesOnly(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report.md")
	code, stdout, stderr := runCmd(t, "bench", "broker", "--no-weir", "--reps", "1", "--records", "200",
		"--small-records", "300", "--latency-records", "10", "--tmp", t.TempDir(), "--out", out)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"| goal | measurement |", "| (a) | produce 1 KiB records", "| (f) | broker RSS", "(kfake DataDir)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	file, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(file) != stdout {
		t.Errorf("--out file differs from stdout:\n%s\n---\n%s", file, stdout)
	}
	if !strings.Contains(stderr, "msg=measured") {
		t.Errorf("no progress lines on stderr:\n%s", stderr)
	}
}

func TestBenchBrokerRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--reps", "0"},
		{"--weir-env", "NOEQUALS"},
		{"extra"},
	} {
		code, _, stderr := runCmd(t, append([]string{"bench", "broker"}, args...)...)
		if code != 2 {
			t.Errorf("weir bench broker %v: exit %d, want 2; stderr:\n%s", args, code, stderr)
		}
	}
}
