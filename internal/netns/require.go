package netns

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// TB is the part of testing.TB that New and Require use; a *testing.T
// is one. The package does not import testing, so programs that are not
// tests (bench/failover) may use Open.
type TB interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	Cleanup(func())
}

// RequireEnv names the environment variable that turns a missing
// capability (not root, no ip or nft) from a skip into a failure; .ci/run
// sets it to 1.
const RequireEnv = "WEIR_REQUIRE_NETNS"

// Tools are the programs the package runs, found on the PATH.
var tools = []string{"ip", "nft"}

// Available reports nil when this process can build networks: it runs as
// root and ip and nft are on the PATH. Otherwise its error says what is
// missing.
func Available() error {
	var errs []error
	if os.Geteuid() != 0 {
		errs = append(errs, fmt.Errorf("not root (euid %d): network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN", os.Geteuid()))
	}
	for _, t := range tools {
		if _, err := exec.LookPath(t); err != nil {
			errs = append(errs, fmt.Errorf("%s not found: %w", t, err))
		}
	}
	return errors.Join(errs...)
}

// Require skips the test when Available reports a problem, or fails it
// when RequireEnv is 1.
func Require(tb TB) {
	tb.Helper()
	err := Available()
	if err == nil {
		return
	}
	if os.Getenv(RequireEnv) == "1" {
		tb.Fatalf("network namespaces are required (%s=1) but unusable: %v", RequireEnv, err)
	}
	tb.Skipf("network namespace test skipped: %v (run as root with ip and nft, or set %s=1 to fail instead)", err, RequireEnv)
}
