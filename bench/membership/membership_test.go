package membership

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirmq/weir/bench/dist"
)

func TestMain(m *testing.M) {
	MaybeRunChild()
	os.Exit(m.Run())
}

// measureCase is one row of the report.
type measureCase struct {
	profile Profile
	signal  syscall.Signal
	load    string
	rounds  int
}

// cases is the CI-sized matrix, or with WEIR_MEASURE_FULL=1 the recorded
// one (WEIR_MEASURE_ROUNDS rounds each, default 20; the LAN-default
// reference gets a quarter of them). WEIR_MEASURE_LOADS overrides the
// loads of the full run (comma-separated; "idle" for none).
func cases(t *testing.T) []measureCase {
	if os.Getenv("WEIR_MEASURE_FULL") == "" {
		return []measureCase{
			{Fast, syscall.SIGKILL, "", 2},
			{Fast, syscall.SIGSTOP, "", 1},
			{Fast, syscall.SIGKILL, "spin", 1},
			{Relaxed, syscall.SIGKILL, "", 1},
		}
	}
	rounds := 20
	if s := os.Getenv("WEIR_MEASURE_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("WEIR_MEASURE_ROUNDS=%q", s)
		}
		rounds = n
	}
	loads := []string{"", "produce"}
	if s := os.Getenv("WEIR_MEASURE_LOADS"); s != "" {
		loads = nil
		for _, l := range strings.Split(s, ",") {
			if l == "idle" {
				l = ""
			}
			loads = append(loads, l)
		}
	}
	var cs []measureCase
	for _, p := range []Profile{Fast, Relaxed} {
		for _, load := range loads {
			for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGSTOP} {
				cs = append(cs, measureCase{p, sig, load, rounds})
			}
		}
	}
	cs = append(cs, measureCase{LAN, syscall.SIGKILL, "", max(1, rounds/4)})
	return cs
}

// TestDeadDetection measures how long memberlist takes to declare a
// SIGKILLed or SIGSTOPped node dead, per profile and load, and logs a
// Markdown table. It asserts only that every victim was declared dead by
// both observers (Measure fails a round otherwise), never a time.
func TestDeadDetection(t *testing.T) {
	logLoad(t, "before")
	defer logLoad(t, "after")
	var rows []string
	for _, c := range cases(t) {
		load := c.load
		if load == "" {
			load = "idle"
		}
		res, err := Measure(context.Background(), Options{
			Profile: c.profile, Signal: c.signal, Load: c.load, Rounds: c.rounds, Logf: t.Logf,
		})
		if err != nil {
			t.Fatalf("%s %s %s: %v", c.profile.Name, SignalName(c.signal), load, err)
		}
		if len(res.Rounds) != c.rounds {
			t.Fatalf("%d rounds measured, want %d", len(res.Rounds), c.rounds)
		}
		for _, l := range res.SuspicionLines {
			t.Logf("false suspicion: %s", l)
		}
		cores := ""
		if c.load != "" {
			cores = fmt.Sprintf(" (%.2f cores)", res.LoadCores)
		}
		for _, obs := range []struct {
			name string
			d    []time.Duration
		}{{"first", res.First()}, {"both", res.All()}} {
			fp := " | |"
			if obs.name == "both" {
				fp = fmt.Sprintf(" %d | %d |", res.FalseSuspicions, res.FalseDead+res.EarlyDead)
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s%s | %s %s%s",
				c.profile.Name, SignalName(c.signal), load, cores, obs.name, dist.Of(obs.d).Row(), fp))
		}
	}
	t.Logf("\n| profile | signal | load | observer | n | min | median | p99 | max | false suspicions | false dead |\n|---|---|---|---|---|---|---|---|---|---|---|\n%s",
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
