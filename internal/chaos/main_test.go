package chaos

import (
	"os"
	"strconv"
	"testing"

	"github.com/weirmq/weir/internal/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

// Sizes: the CI runs the short versions; the environment variables give
// the full ones (issue 10: 50 kill rounds in the benchmark run).
const roundsEnv = "WEIR_CHAOS_ROUNDS"

// envInt returns the integer in environment variable name, or def when
// it is unset; it fails the test on a malformed value.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}
