package membership

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weirmq/weir/internal/leakcheck"
)

// leakWait is how long TestMain lets goroutines end after the tests:
// memberlist's goroutines outlive Shutdown by design, a probe in flight
// until the end of its (awareness-stretched) probe interval, a push/pull
// until its TCP timeout. goleak.VerifyTestMain waits well under a second.
const leakWait = 20 * time.Second

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		deadline := time.Now().Add(leakWait)
		for {
			err := goleak.Find(leakcheck.Options()...)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				fmt.Fprintf(os.Stderr, "goleak: goroutines left %s after the tests: %v\n", leakWait, err)
				code = 1
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	os.Exit(code)
}
