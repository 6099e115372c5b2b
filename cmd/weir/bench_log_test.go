package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/weirmq/weir/bench/logbench"
)

// readyDirRE finds the data directory in the ready line.
var readyDirRE = regexp.MustCompile(`^ready dir=("(?:[^"\\]|\\.)*") `)

// readyDir returns the data directory the ready line of out names.
func readyDir(t *testing.T, out string) string {
	t.Helper()
	m := readyDirRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no ready line with a dir in:\n%s", out)
	}
	dir, err := strconv.Unquote(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// gone reports whether path does not exist.
func gone(path string) bool {
	_, err := os.Stat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// benchLogQuick is a run of a few appends.
var benchLogQuick = []string{"bench", "log", "--partitions", "2", "--writers", "2", "--record-size", "100", "--batches", "6", "--reporting-interval", "0"}

// TestBenchLogRemovesItsData checks where a run's data goes and that it is
// removed afterwards: a temporary directory by default, a new --dir, an
// empty --dir (left empty); kept with --keep; and a --dir that holds
// something is refused without --keep, untouched.
func TestBenchLogRemovesItsData(t *testing.T) {
	quick := func(extra ...string) []string { return append(append([]string{}, benchLogQuick...), extra...) }

	out := mustRun(t, quick()...)
	if dir := readyDir(t, out); !strings.HasPrefix(dir, os.TempDir()) || !gone(dir) {
		t.Errorf("temporary directory %s: want it under %s and removed", dir, os.TempDir())
	}

	fresh := filepath.Join(t.TempDir(), "fresh")
	mustRun(t, quick("--dir", fresh)...)
	if !gone(fresh) {
		t.Errorf("--dir %s made by the run: not removed", fresh)
	}

	empty := t.TempDir()
	mustRun(t, quick("--dir", empty)...)
	if entries, err := os.ReadDir(empty); err != nil || len(entries) != 0 {
		t.Errorf("empty --dir %s: %v, %v; want it there and empty again", empty, entries, err)
	}

	kept := filepath.Join(t.TempDir(), "kept")
	mustRun(t, quick("--dir", kept, "--keep")...)
	if _, err := os.Stat(filepath.Join(kept, logbench.Topic+"-0")); err != nil {
		t.Errorf("--dir %s --keep: partition directory not kept: %v", kept, err)
	}
	code, stdout, stderr := runCmd(t, quick("--dir", kept)...)
	if code != 2 || stdout != "" || !strings.Contains(stderr, "is not empty") || gone(filepath.Join(kept, logbench.Topic+"-0")) {
		t.Errorf("non-empty --dir without --keep: exit %d, stdout %q, stderr %q; want 2, refused, the data untouched", code, stdout, stderr)
	}
	mustRun(t, quick("--dir", kept, "--keep")...) // appends to the kept data

	code, stdout, stderr = runCmd(t, quick("--keep")...)
	dir := readyDir(t, stdout)
	t.Cleanup(func() { os.RemoveAll(dir) })
	if code != 0 || gone(dir) || !strings.Contains(stderr, "the data is kept in "+dir) {
		t.Errorf("--keep without --dir: exit %d, %s exists %t, stderr %q; want the directory kept and named", code, dir, !gone(dir), stderr)
	}
}

// progressCanceller is the stdout of `weir bench log`: it cancels the run
// at the first progress line, as a Ctrl-C would.
type progressCanceller struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	cancel context.CancelFunc
}

func (w *progressCanceller) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.HasPrefix(p, []byte(logbench.ProgressPrefix+" ")) {
		w.cancel()
	}
	return w.buf.Write(p)
}

// TestBenchLogReportsProgressAndCleansUpOnInterrupt runs for ten minutes
// unless interrupted, and is interrupted at its first progress line: it
// prints the summary, exits 0 and removes its temporary data.
func TestBenchLogReportsProgressAndCleansUpOnInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &progressCanceller{cancel: cancel}
	var stderr bytes.Buffer
	code := run(ctx, []string{"bench", "log", "--partitions", "2", "--writers", "2", "--record-size", "100",
		"--duration", "10m", "--reporting-interval", "1ms"}, out, &stderr)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
	}
	ls := lines(out.buf.String())
	if len(ls) < 3 || !strings.HasPrefix(ls[1], logbench.ProgressPrefix+" seconds=") {
		t.Fatalf("stdout:\n%s\nwant the ready line, progress lines and the summary", out.buf.String())
	}
	parseSummary(t, ls[len(ls)-1])
	if dir := readyDir(t, ls[0]); !gone(dir) {
		t.Errorf("temporary directory %s not removed after the interrupt", dir)
	}
}

// TestBenchUsageErrorsInWeirsWords checks the text of the benchmarks'
// invalid settings: the command's name once, then the detail, with no
// package prefix ("weir bench log: logbench: invalid config: ..." before).
func TestBenchUsageErrorsInWeirsWords(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "log", "--writers", "0"}, "weir bench log: 0 writers, need at least 1"},
		{[]string{"bench", "log", "--segment-bytes", "10"}, "weir bench log: segment bytes 10 not in [14, 2147483647]"},
		{[]string{"bench", "broker", "--reps", "0"}, "weir bench broker: 0 repetitions, need at least 1"},
		{[]string{"bench", "groups", "--reps", "0"}, "weir bench groups: reps 0, want at least 1"},
	} {
		code, stdout, stderr := runCmd(t, c.args...)
		if first, _, _ := strings.Cut(stderr, "\n"); code != 2 || stdout != "" || first != c.want {
			t.Errorf("weir %q: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
}
