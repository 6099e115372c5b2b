package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirmq/weir/internal/harness"
)

// startServe runs `weir serve` with args and waits for its ready line.
func startServe(t *testing.T, args ...string) *harness.Process {
	t.Helper()
	return harness.Start(t, harness.Options{
		Args:      append([]string{"serve"}, args...),
		Name:      "weir-serve",
		ReadyLine: `weir serving node \d+ on`,
	})
}

// TestServeSIGTERMAndRestart checks a clean shutdown on SIGTERM and SIGINT
// (exit status 0, the clean-shutdown marker left) and that a restart on
// the same directory serves again.
func TestServeSIGTERMAndRestart(t *testing.T) {
	dir := t.TempDir()
	addr := harness.FreeAddr(t)
	for i, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		p := startServe(t, "--data", dir, "--listen", addr)
		if !strings.Contains(p.Stdout(), "on "+addr) {
			t.Fatalf("round %d: ready line %q does not name %s", i, p.Stdout(), addr)
		}
		if err := p.Signal(sig); err != nil {
			t.Fatal(err)
		}
		code, err := p.Wait()
		if err != nil || code != 0 {
			t.Fatalf("round %d: %v: exit %d, %v\n%s", i, sig, code, err, p.Stderr())
		}
		if !strings.Contains(p.Stdout(), "weir stopped") {
			t.Fatalf("round %d: no stop line:\n%s", i, p.Stdout())
		}
		if _, err := os.Stat(filepath.Join(dir, ".kafka_cleanshutdown")); err != nil {
			t.Fatalf("round %d: no clean-shutdown marker: %v", i, err)
		}
	}
}

// TestServeConfigFileAndFlags checks that flags override the
// server.properties file, as docs/DESIGN.md "Defaults" says.
func TestServeConfigFileAndFlags(t *testing.T) {
	dir := t.TempDir()
	fileAddr, flagAddr := harness.FreeAddr(t), harness.FreeAddr(t)
	props := filepath.Join(t.TempDir(), "server.properties")
	content := fmt.Sprintf("node.id=7\nlisteners=PLAINTEXT://%s\nlog.dirs=%s\n", fileAddr, filepath.Join(dir, "from-file"))
	if err := os.WriteFile(props, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, "--config", props, "--listen", flagAddr)
	if out := p.Stdout(); !strings.Contains(out, "node 7 on "+flagAddr) {
		t.Fatalf("ready line %q: want node 7 on the flag's %s", out, flagAddr)
	}
	if _, err := os.Stat(filepath.Join(dir, "from-file")); err != nil {
		t.Fatalf("log.dirs from the file not used: %v", err)
	}
	if _, err := p.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestServeBadConfig checks that bad settings fail before serving.
func TestServeBadConfig(t *testing.T) {
	cases := [][]string{
		{"--node-id", "-3"},
		{"--node-id", "x"},
		{"--log-level", "loud"},
		{"--config", filepath.Join(t.TempDir(), "missing.properties")},
		{"--listen", "127.0.0.1"},
		{"extra-argument"},
	}
	for _, args := range cases {
		_, stderr, code := harness.Run(t, harness.Options{Args: append([]string{"serve", "--data", t.TempDir()}, args...)})
		if code == 0 {
			t.Errorf("weir serve %v: exit 0\n%s", args, stderr)
		}
	}
}
