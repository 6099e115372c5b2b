package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weirmq/weir/internal/harness"
)

// readmeSection returns the command lines of the README's section heading:
// its indented code lines, in order, without the indentation.
func readmeSection(t *testing.T, heading string) []string {
	t.Helper()
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "## "):
			in = l == "## "+heading
		case in && strings.HasPrefix(l, "    "):
			lines = append(lines, strings.TrimPrefix(l, "    "))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		t.Fatalf("README.md has no section %q with commands", heading)
	}
	return lines
}

// TestReadmeFirstFiveMinutes runs the commands of the README's "First five
// minutes" as a new user would type them, in a fresh directory holding the
// weir binary: `go build` is the harness's build, and `./weir serve` runs on
// a free port with WEIR_BROKERS pointing the other commands at it. Each
// command must succeed, the consumer must print the produced records and
// the group must end with no lag.
func TestReadmeFirstFiveMinutes(t *testing.T) {
	lines := readmeSection(t, "First five minutes")
	dir := t.TempDir()
	if err := os.Symlink(harness.MustBuildWeir(t), filepath.Join(dir, "weir")); err != nil {
		t.Fatal(err)
	}
	addr := harness.FreeAddr(t)
	var outputs []string
	served := false
	for _, line := range lines {
		switch {
		case strings.HasPrefix(line, "go build ./cmd/weir"):
			continue
		case strings.HasPrefix(line, "./weir serve"):
			args := append(strings.Fields(line)[1:], "--listen", addr, "--data", filepath.Join(dir, "weir-data"))
			harness.Start(t, harness.Options{Args: args, Name: "weir-serve", ReadyLine: `weir serving node \d+ on`})
			served = true
			continue
		case !strings.HasPrefix(line, "./weir ") && !strings.Contains(line, "| ./weir "):
			t.Fatalf("README command %q is neither the build, ./weir serve nor a ./weir command", line)
		}
		if !served {
			t.Fatalf("README runs %q before ./weir serve", line)
		}
		cmd := exec.Command("bash", "-e", "-o", "pipefail", "-c", line)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "WEIR_BROKERS="+addr)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("README command %q: %v\n%s", line, err, out)
		}
		outputs = append(outputs, string(out))
	}
	all := strings.Join(outputs, "\n")
	for _, v := range []string{"one", "two", "three"} {
		if !regexp.MustCompile(`(?m)^` + v + `$`).MatchString(all) {
			t.Errorf("the README's commands never print the record %q:\n%s", v, all)
		}
	}
	// kafka-consumer-groups.sh's table: the lag column of every partition
	// of the topic is 0 once the consumer committed.
	last := outputs[len(outputs)-1]
	rows := regexp.MustCompile(`(?m)^\S+\s+demo\s+\d+\s+\d+\s+\d+\s+(\S+)`).FindAllStringSubmatch(last, -1)
	if len(rows) == 0 {
		t.Fatalf("the README's last command shows no partition of demo:\n%s", last)
	}
	for _, r := range rows {
		if r[1] != "0" {
			t.Errorf("lag %s after consuming everything:\n%s", r[1], last)
		}
	}
}
