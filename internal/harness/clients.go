package harness

import (
	"os"
	"testing"
)

// RequireClientsEnv names the environment variable that turns a missing
// client program (kcat, a Python client) from a skip into a failure;
// .ci/run sets it to 1.
const RequireClientsEnv = "WEIR_REQUIRE_CLIENTS"

// NeedClient skips the test when err reports the client called name
// missing or unusable, or fails it when RequireClientsEnv is 1. A nil err
// does nothing.
func NeedClient(tb testing.TB, name string, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	if os.Getenv(RequireClientsEnv) == "1" {
		tb.Fatalf("%s is required (%s=1) but not usable: %v", name, RequireClientsEnv, err)
	}
	tb.Skipf("%s not usable, skipping (set %s=1 to fail instead): %v", name, RequireClientsEnv, err)
}
