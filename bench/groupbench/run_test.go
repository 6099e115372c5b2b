package groupbench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weirmq/weir/internal/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

// TestSmoke runs both measurements with tiny counts against kfake and
// `weir serve` and checks that every figure is there.
func TestSmoke(t *testing.T) {
	path := harness.MustBuildWeir(t)
	cfg := DefaultConfig()
	cfg.WeirPath = path
	cfg.WeirArgs = []string{"--log-level", "warn"}
	cfg.Reps, cfg.Groups, cfg.PartitionsPerGroup, cfg.CommitRounds, cfg.Clients, cfg.Members = 1, 3, 2, 5, 2, 3
	cfg.InitialRebalanceDelay = 100 * time.Millisecond
	cfg.TempDir = t.TempDir()
	cfg.MeasureTimeout = time.Minute
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Reps) != 1 {
		t.Fatalf("%d repetitions, want 1", len(res.Reps))
	}
	for _, target := range []Target{Weir, Kfake} {
		m, ok := res.Reps[0][target]
		switch {
		case !ok:
			t.Errorf("%s not measured", target)
		case m.Commits.Requests != 15 || m.Commits.Offsets != 30 || m.Commits.Elapsed <= 0:
			t.Errorf("%s commits %+v, want 15 requests of 2 offsets", target, m.Commits)
		case m.Rebalance.SinceLastJoin <= 0 || m.Rebalance.AfterDelay <= 0 || m.Rebalance.AfterDelay > m.Rebalance.SinceLastJoin:
			t.Errorf("%s rebalance %+v", target, m.Rebalance)
		}
	}
	var b bytes.Buffer
	if err := res.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	t.Logf("report:\n%s", out)
	if n := strings.Count(out, "\n| ("); n != 4 || strings.Contains(out, "| - |") {
		t.Errorf("report has %d figure rows (want 4) or a missing figure:\n%s", n, out)
	}
}

func TestValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	for _, mutate := range []func(*Config){
		func(c *Config) { c.Reps = 0 },
		func(c *Config) { c.Groups = 0 },
		func(c *Config) { c.PartitionsPerGroup = 0 },
		func(c *Config) { c.CommitRounds = 0 },
		func(c *Config) { c.Clients = 0 },
		func(c *Config) { c.Members = 0 },
		func(c *Config) { c.InitialRebalanceDelay = -1 },
		func(c *Config) { c.PollInterval = 0 },
		func(c *Config) { c.StartTimeout = 0 },
	} {
		c := DefaultConfig()
		mutate(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("config %+v validated", c)
		}
	}
}

func TestDelayedJoinEnd(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms ...int) []time.Time {
		var ts []time.Time
		for _, m := range ms {
			ts = append(ts, t0.Add(time.Duration(m)*time.Millisecond))
		}
		return ts
	}
	const d = 3 * time.Second
	for _, c := range []struct {
		joins []time.Time
		delay time.Duration
		want  int // ms after t0
	}{
		{at(0), d, 3000},                   // alone: one window
		{at(0, 10, 50), d, 6000},           // joins in the first window: one more
		{at(0, 2999, 3001), d, 9000},       // a join in the second window: a third
		{at(0, 3000), d, 6000},             // a join at the window's end counts in it
		{at(0, 4000), d, 3000},             // a join after the end starts no window
		{at(0, 10), 0, 0},                  // no delay
		{at(5, 10, 20), time.Second, 2005}, // from the first join
	} {
		if got := delayedJoinEnd(c.joins, c.delay); !got.Equal(t0.Add(time.Duration(c.want) * time.Millisecond)) {
			t.Errorf("delayedJoinEnd(%v, %v) = +%v, want +%dms", c.joins, c.delay, got.Sub(t0), c.want)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(c.xs); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}
