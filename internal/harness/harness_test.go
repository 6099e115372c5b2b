package harness_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weirmq/weir/internal/harness"
)

// helperEnv makes the test binary act as a child program (see helper).
const helperEnv = "HARNESS_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode))
	}
	harness.Main(m)
}

// helper is the child program the tests start by running their own binary.
func helper(mode string) int {
	switch mode {
	case "listen":
		// Listen, announce it, answer SIGUSR1 with a line, exit 0 on SIGTERM.
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGUSR1)
		l, err := net.Listen("tcp", os.Getenv("HELPER_ADDR"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		fmt.Println("listening on", l.Addr())
		for s := range sigs {
			if s == syscall.SIGUSR1 {
				fmt.Println("got usr1")
				continue
			}
			fmt.Println("stopping")
			return 0
		}
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		time.Sleep(time.Hour) // the child's own lifetime, not a wait in a test
	}
	return 1
}

// helperOptions runs the test binary itself as a helper child.
func helperOptions(t *testing.T, mode string, env ...string) harness.Options {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return harness.Options{Path: exe, Name: "helper-" + mode, Env: append(env, helperEnv+"="+mode)}
}

// withReady sets the ReadyLine of opts.
func withReady(opts harness.Options, pattern string) harness.Options {
	opts.ReadyLine = pattern
	return opts
}

// shell runs script with /bin/sh.
func shell(script string) harness.Options {
	return harness.Options{Path: "/bin/sh", Args: []string{"-c", script}, Name: "sh"}
}

func TestBuildWeirOnce(t *testing.T) {
	a := harness.MustBuildWeir(t)
	b, err := harness.BuildWeir()
	if err != nil || a != b {
		t.Fatalf("second BuildWeir = %q, %v; want %q", b, err, a)
	}
	fi, err := os.Stat(a)
	if err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("built binary %s: %v, mode %v", a, err, fi.Mode())
	}
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "weir")); err != nil {
		t.Errorf("ModuleRoot %s has no cmd/weir: %v", root, err)
	}
}

func TestWeirVersion(t *testing.T) {
	stdout, stderr, code := harness.Run(t, harness.Options{Args: []string{"version"}})
	if code != 0 || stderr != "" {
		t.Fatalf("weir version: exit %d, stderr %q", code, stderr)
	}
	want := runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	if !strings.HasPrefix(stdout, "weir ") || !strings.Contains(stdout, want) {
		t.Errorf("weir version printed %q, want \"weir <version> %s...\"", stdout, want)
	}
}

func TestWeirUnknownCommand(t *testing.T) {
	stdout, stderr, code := harness.Run(t, harness.Options{Args: []string{"no-such-command"}})
	if code != 2 || stdout != "" || !strings.Contains(stderr, "unknown command") || !strings.Contains(stderr, "version") {
		t.Errorf("weir no-such-command: exit %d, stdout %q, stderr %q; want 2, nothing, usage", code, stdout, stderr)
	}
}

func TestKillLeavesNoProcess(t *testing.T) {
	p := harness.Start(t, withReady(shell(`sleep 60 & echo "grandchild $!"; echo ready; wait`), "^ready$"))
	grandchild := grandchildPid(t, p)
	for _, pid := range []int{p.Pid(), grandchild} {
		if processGone(pid) {
			t.Fatalf("pid %d is not running before Kill", pid)
		}
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if code, _ := p.Wait(); code != 128+int(syscall.SIGKILL) {
		t.Errorf("exit status after Kill = %d, want %d", code, 128+int(syscall.SIGKILL))
	}
	waitGone(t, p.Pid(), grandchild)
}

func TestCleanupLeavesNoProcess(t *testing.T) {
	var pids []int
	t.Run("start", func(t *testing.T) {
		p := harness.Start(t, withReady(shell(`sleep 60 & echo "grandchild $!"; echo ready; wait`), "ready"))
		pids = []int{p.Pid(), grandchildPid(t, p)}
	})
	if len(pids) != 2 {
		t.Fatal("subtest did not start the processes")
	}
	waitGone(t, pids...)
}

func TestReadyTimeoutIncludesOutput(t *testing.T) {
	p, err := harness.Spawn(t, withReady(shell(`echo starting up; echo some warning >&2; exec sleep 60`), "never printed"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"starting up", "some warning"} {
		if _, err := p.WaitForLine(t.Context(), line); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	err = p.WaitReady(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitReady = %v, want a deadline error", err)
	}
	for _, want := range []string{"never printed", "starting up", "some warning", "running"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("WaitReady error lacks %q:\n%v", want, err)
		}
	}
}

func TestExitBeforeReady(t *testing.T) {
	p, err := harness.Spawn(t, withReady(shell(`echo bad config >&2; exit 3`), "ready"))
	if err != nil {
		t.Fatal(err)
	}
	err = p.WaitReady(t.Context())
	if !errors.Is(err, harness.ErrExited) {
		t.Fatalf("WaitReady = %v, want ErrExited", err)
	}
	for _, want := range []string{"bad config", "status 3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("WaitReady error lacks %q:\n%v", want, err)
		}
	}
	if code, err := p.Wait(); code != 3 || err != nil {
		t.Errorf("Wait = %d, %v; want 3, nil", code, err)
	}
	if err := p.Signal(syscall.SIGTERM); !errors.Is(err, harness.ErrExited) {
		t.Errorf("Signal after exit = %v, want ErrExited", err)
	}
}

func TestReadyAddrSignalAndStop(t *testing.T) {
	addr := harness.FreeAddr(t)
	opts := helperOptions(t, "listen", "HELPER_ADDR="+addr)
	opts.ReadyAddr = addr
	opts.ReadyLine = `^listening on `
	p := harness.Start(t, opts)

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("ready, but dial %s: %v", addr, err)
	}
	conn.Close()

	mark := p.Mark()
	if err := p.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	if _, err := p.WaitForLineAfter(t.Context(), mark, "^got usr1$"); err != nil {
		t.Fatal(err)
	}
	code, err := p.Stop(time.Minute)
	if code != 0 || err != nil {
		t.Fatalf("Stop = %d, %v; want 0, nil", code, err)
	}
	if !strings.HasSuffix(p.Stdout(), "stopping\n") {
		t.Errorf("stdout = %q, want it to end with the SIGTERM handler's line", p.Stdout())
	}
}

func TestStopEscalatesToKill(t *testing.T) {
	p := harness.Start(t, withReady(helperOptions(t, "ignore-term"), "^ready$"))
	code, err := p.Stop(100 * time.Millisecond)
	if code != 128+int(syscall.SIGKILL) || err != nil {
		t.Fatalf("Stop = %d, %v; want %d, nil", code, err, 128+int(syscall.SIGKILL))
	}
}

func TestOnLineSeesEveryLineInOrder(t *testing.T) {
	const n = 2000
	var (
		mu    sync.Mutex
		lines []string
	)
	opts := shell(fmt.Sprintf(`i=0; while [ $i -lt %d ]; do echo "n=$i"; echo "err=$i" >&2; i=$((i+1)); done; printf last`, n))
	opts.OnLine = func(l string) {
		mu.Lock()
		lines = append(lines, l)
		mu.Unlock()
	}
	p := harness.Start(t, opts)
	if _, err := p.WaitForLine(t.Context(), fmt.Sprintf("^err=%d$", n-1)); err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(); code != 0 || err != nil {
		t.Fatalf("Wait = %d, %v", code, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != n+1 || lines[n] != "last" {
		t.Fatalf("OnLine saw %d lines ending %q, want %d ending \"last\"", len(lines), lines[len(lines)-1], n+1)
	}
	for i := range n {
		if lines[i] != "n="+strconv.Itoa(i) {
			t.Fatalf("OnLine line %d = %q", i, lines[i])
		}
	}
	if want := strings.Join(lines, "\n"); p.Stdout() != want {
		t.Errorf("Stdout() differs from the lines OnLine saw")
	}
	if got := p.Mark(); got != 2*n+1 {
		t.Errorf("Mark() = %d, want %d", got, 2*n+1)
	}
	if _, err := p.WaitForLineAfter(t.Context(), p.Mark(), "n="); !errors.Is(err, harness.ErrExited) {
		t.Errorf("WaitForLineAfter the end = %v, want ErrExited", err)
	}
}

func TestEnvAndDir(t *testing.T) {
	dir := t.TempDir()
	opts := shell(`echo "$HARNESS_X"; pwd`)
	opts.Env = []string{"HARNESS_X=one", "HARNESS_X=two"}
	opts.Dir = dir
	stdout, _, code := harness.Run(t, opts)
	if want := "two\n" + dir + "\n"; code != 0 || stdout != want {
		t.Errorf("got %q (exit %d), want %q", stdout, code, want)
	}
}

func TestLogFile(t *testing.T) {
	p := harness.Start(t, shell(`echo to-stdout; echo to-stderr >&2`))
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("to-stdout\n")) || !bytes.Contains(b, []byte("to-stderr\n")) {
		t.Errorf("log file holds %q", b)
	}
}

func TestReadyAddrMustBeLoopback(t *testing.T) {
	opts := shell(`exit 0`)
	opts.ReadyAddr = "192.0.2.1:9092"
	if _, err := harness.Spawn(t, opts); err == nil {
		t.Fatal("Spawn accepted a non-loopback ReadyAddr")
	}
}

func TestFreePorts(t *testing.T) {
	ports := harness.FreePorts(t, 8)
	seen := map[int]bool{}
	for _, port := range ports {
		if port <= 0 || seen[port] {
			t.Fatalf("FreePorts = %v: not distinct positive ports", ports)
		}
		seen[port] = true
		l, err := net.Listen("tcp", harness.Addr(port))
		if err != nil {
			t.Fatalf("port %d is not free: %v", port, err)
		}
		l.Close()
	}
}

// grandchildPid reads the pid the shell scripts print as "grandchild PID".
func grandchildPid(t *testing.T, p *harness.Process) int {
	t.Helper()
	line, err := p.WaitForLine(t.Context(), `^grandchild [0-9]+$`)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(line, "grandchild "))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// processGone reports whether pid has ended: it does not exist, or it is a
// zombie that nobody has reaped yet (init here may not reap).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command name, which is in parentheses.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}

// waitGone polls until every pid has ended, failing after a generous bound.
func waitGone(t *testing.T, pids ...int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for _, pid := range pids {
		for !processGone(pid) {
			select {
			case <-tick.C:
			case <-ctx.Done():
				t.Fatalf("pid %d still running", pid)
			}
		}
	}
}
