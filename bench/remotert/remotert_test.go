package remotert

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/weirmq/weir/bench/dist"
)

func TestMain(m *testing.M) {
	MaybeRunChild()
	os.Exit(m.Run())
}

// TestRoundTrip measures each mode and logs a Markdown table. CI-sized by
// default (2,000 sequential round trips, 1 s of concurrency 64);
// WEIR_MEASURE_FULL=1 runs 20,000 and 10 s. It asserts only that every
// echo came back intact.
func TestRoundTrip(t *testing.T) {
	seq, dur := 2000, time.Second
	if os.Getenv("WEIR_MEASURE_FULL") != "" {
		seq, dur = 20000, 10*time.Second
	}
	logLoad(t, "before")
	defer logLoad(t, "after")
	var rows []string
	for _, mode := range []Mode{Local, InProcess, TwoProcesses} {
		res, err := Measure(context.Background(), Options{Mode: mode, Sequential: seq, Concurrency: 64, Duration: dur})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if res.Latency.N != seq || res.PerSecond <= 0 {
			t.Fatalf("%s: %d round trips timed, %.0f/s", mode, res.Latency.N, res.PerSecond)
		}
		rows = append(rows, fmt.Sprintf("| %s | %d B | %s | %s | %.0f | %s | %s |", mode, res.EnvelopeBytes,
			dist.Round(res.Latency.Median), dist.Round(res.Latency.P99), res.PerSecond,
			dist.Round(res.ConcurrentLatency.Median), dist.Round(res.ConcurrentLatency.P99)))
	}
	t.Logf("\n| mode | msgpack body | one at a time: median | p99 | 64 outstanding: round trips/s | median | p99 |\n|---|---|---|---|---|---|---|\n%s",
		strings.Join(rows, "\n"))
}

// logLoad logs the machine's load average: the machine is shared, and the
// figures mean little without it.
func logLoad(t *testing.T, when string) {
	b, err := os.ReadFile("/proc/loadavg")
	if err == nil {
		t.Logf("load average %s: %s", when, strings.TrimSpace(string(b)))
	}
}
