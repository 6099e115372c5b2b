package harness

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sync"
	"testing"
)

// BinEnv names an environment variable that, when set, gives the path of a
// weir binary to use instead of building one.
const BinEnv = "WEIR_BIN"

// build holds the result of the one build of weir per test binary.
var build struct {
	once sync.Once
	dir  string // temporary directory holding the binary; "" when none
	path string
	err  error
}

// BuildWeir builds ./cmd/weir of the module holding the working directory
// into a temporary directory, once per test binary, and returns the binary's
// path. Later calls return the same path (or the same error). When the test
// binary was built with -race, so is weir. When $WEIR_BIN is set, its value
// is returned and nothing is built. It is safe for concurrent use.
func BuildWeir() (string, error) {
	build.once.Do(func() {
		if p := os.Getenv(BinEnv); p != "" {
			build.path = p
			return
		}
		build.dir, build.path, build.err = buildWeir()
	})
	return build.path, build.err
}

// MustBuildWeir is BuildWeir for a test: it fails tb when the build fails.
func MustBuildWeir(tb testing.TB) string {
	tb.Helper()
	path, err := BuildWeir()
	if err != nil {
		tb.Fatal(err)
	}
	return path
}

// Cleanup removes the binary built by BuildWeir. Call it once, after the
// tests ran (Main does); BuildWeir must not be called afterwards.
func Cleanup() {
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
}

// Main runs the tests of m, then Cleanup. Use it as the body of TestMain;
// the test binary exits with the status of m.Run.
func Main(m *testing.M) {
	defer Cleanup()
	m.Run()
}

// ModuleRoot returns the directory holding go.mod, found by walking up from
// the working directory.
func ModuleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("harness: working directory: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("harness: look for go.mod: %w", err)
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("harness: no go.mod in %s or any parent", wd)
		}
	}
}

// buildWeir runs go build ./cmd/weir into a new temporary directory.
func buildWeir() (dir, path string, err error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", "", err
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", "", fmt.Errorf("harness: build weir: %w", err)
	}
	dir, err = os.MkdirTemp("", "weir-harness-")
	if err != nil {
		return "", "", fmt.Errorf("harness: build weir: %w", err)
	}
	path = filepath.Join(dir, "weir")
	args := []string{"build", "-o", path}
	if raceEnabled() {
		args = append(args, "-race")
	}
	cmd := exec.Command(goTool, append(args, "./cmd/weir")...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", "", fmt.Errorf("harness: go build ./cmd/weir in %s: %w\n%s", root, err, out)
	}
	return dir, path, nil
}

// raceEnabled reports whether the running binary was built with -race.
func raceEnabled() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" && s.Value == "true" {
			return true
		}
	}
	return false
}
