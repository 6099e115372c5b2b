package bounds

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirmq/weir/internal/harness"
)

// cgroupMemoryRoot is the cgroup v1 memory controller.
const cgroupMemoryRoot = "/sys/fs/cgroup/memory"

// cappedServe returns harness options that start `weir serve` with args
// under a memory cap of limit bytes: in a cgroup v1 memory group of its
// own (created here, removed at cleanup, after the harness has killed the
// process), or failing that under RLIMIT_AS. The child joins the cgroup
// before it execs weir, so all of its memory is counted. It skips the test
// when neither can be applied.
func cappedServe(t *testing.T, limit int64, args ...string) harness.Options {
	t.Helper()
	weir := harness.MustBuildWeir(t)
	// The Go runtime's soft limit, below the cap, makes the collector work
	// harder before the cap is reached, as an operator would set it.
	env := []string{"GOMEMLIMIT=" + strconv.FormatInt(limit*3/4, 10)}
	dir, err := newMemoryCgroup(t, limit)
	if err == nil {
		return harness.Options{
			Path: "/bin/sh",
			Args: append([]string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, dir, weir, "serve"}, args...),
			Env:  env, Name: "weir-serve", ReadyLine: `weir serving node \d+ on`,
		}
	}
	t.Logf("no memory cgroup (%v); capping the address space instead", err)
	if _, _, code := harness.Run(t, harness.Options{Path: "/bin/sh", Args: []string{"-c", "ulimit -v 1048576"}}); code != 0 {
		t.Skip("neither a memory cgroup nor RLIMIT_AS can be applied")
	}
	return harness.Options{
		Path: "/bin/sh",
		Args: append([]string{"-c", fmt.Sprintf(`ulimit -v %d && exec "$@"`, limit/1024), "sh", weir, "serve"}, args...),
		Env:  env, Name: "weir-serve", ReadyLine: `weir serving node \d+ on`,
	}
}

// newMemoryCgroup creates a memory cgroup capped at limit bytes (swap
// included where the kernel accounts it) and removes it at cleanup.
func newMemoryCgroup(t *testing.T, limit int64) (string, error) {
	if _, err := os.Stat(filepath.Join(cgroupMemoryRoot, "memory.limit_in_bytes")); err != nil {
		return "", err
	}
	dir := filepath.Join(cgroupMemoryRoot, fmt.Sprintf("weir-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	t.Cleanup(func() {
		// The harness's cleanup (registered later, so run earlier) has
		// killed and reaped the process; the kernel may take a moment to
		// empty the group.
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := os.Remove(dir)
			if err == nil || errors.Is(err, os.ErrNotExist) {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("remove cgroup %s: %v", dir, err)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	v := strconv.FormatInt(limit, 10)
	if err := os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), []byte(v), 0o644); err != nil {
		return "", err
	}
	if sw := filepath.Join(dir, "memory.memsw.limit_in_bytes"); fileExists(sw) {
		if err := os.WriteFile(sw, []byte(v), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// peakRSS returns a process's VmHWM (its resident set's high-water mark)
// in bytes.
func peakRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}
