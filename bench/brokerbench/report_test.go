package brokerbench

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		got, ok := median(c.in)
		if !ok || got != c.want {
			t.Errorf("median(%v) = %v, %v; want %v", c.in, got, ok, c.want)
		}
	}
	if _, ok := median(nil); ok {
		t.Error("median of nothing reported a value")
	}
}

func TestPairedRange(t *testing.T) {
	lo, hi := pairedRange([]float64{10, 30, 12}, []float64{10, 10, 0})
	if lo != 1 || hi != 3 {
		t.Errorf("pairedRange = %v-%v, want 1-3 (the zero reference skipped)", lo, hi)
	}
	if lo, _ := pairedRange([]float64{1}, nil); !math.IsNaN(lo) {
		t.Errorf("pairedRange without pairs = %v, want NaN", lo)
	}
}

// TestReportRowsAndGoals checks the summary rows' figures, ratios and
// goal verdicts from known samples.
func TestReportRowsAndGoals(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Reps = 3
	res := &Result{Config: cfg, Samples: map[Key][]float64{
		{Throughput, Weir, ProduceMiBps}:         {500, 520, 480},
		{Throughput, KfakeDataDir, ProduceMiBps}: {400, 400, 400},
		{Throughput, Weir, ConsumeMiBps}:         {600, 600, 600},
		{Fsync, WeirFsync, ProduceMiBps}:         {300, 310, 320},
		{Fsync, KfakeSync, ProduceMiBps}:         {290, 290, 290},
		{Latency, Weir, P99Ms}:                   {4, 5, 12},
		{Latency, KfakeDataDir, P99Ms}:           {8, 8, 8},
		{Small, Weir, ProduceRecords}:            {1.6e6, 1.5e6, 1.7e6},
		{Small, KfakeDataDir, ProduceRecords}:    {1e6, 1e6, 1e6},
		{Memory, Weir, RSSMB}:                    {60, 61, 62},
		{Memory, Weir, RSSBaselineMB}:            {20, 20, 20},
	}}
	var b strings.Builder
	if err := res.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"| (a) | produce 1 KiB records, acks=1, no fsync (MiB/s) | 500 | 400 (kfake DataDir) | 1.25x | 1.20-1.30 | >= 1.25x | yes |",
		"| 310 | 290 (kfake DataDir+SyncWrites) | 1.07x | 1.03-1.10 | >= 1.25x | no |",
		"| 5 | 8 (kfake DataDir) | 0.62x | 0.50-1.50 | < 10 | yes |",
		"| 600 | 500 (weir produce (a)) | 1.20x | 1.15-1.25 | >= 1.50x | no |",
		"| — | 400 (kfake produce (a)) | — | — | — | — |",
		"| 1600000 | 1000000 (kfake DataDir) | 1.60x | 1.50-1.70 | >= 1500000 | yes |",
		"| 61 | 20 (weir without topics) | 3.05x | 3.00-3.10 | < 100 | yes |",
		"| (a) | weir | produce MiB/s | 500 | 500 | 520 | 480 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestParseVmRSS(t *testing.T) {
	status := "Name:\tweir\nVmPeak:\t  900000 kB\nVmRSS:\t   12345 kB\nRssAnon:\t 1 kB\n"
	got, err := parseVmRSS([]byte(status))
	if err != nil || got != 12345*1024 {
		t.Errorf("parseVmRSS = %d, %v; want %d", got, err, 12345*1024)
	}
	for _, bad := range []string{"Name:\tweir\n", "VmRSS:\t 12 MB\n", "VmRSS:\t x kB\n"} {
		if _, err := parseVmRSS([]byte(bad)); err == nil {
			t.Errorf("parseVmRSS(%q) accepted it", bad)
		}
	}
}

func TestParseStatCPU(t *testing.T) {
	stat := "4242 (weir serve (x)) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 75 0 0 20 0 12 0 100 0 0\n"
	got, err := parseStatCPU([]byte(stat))
	if want := 3250 * time.Millisecond; err != nil || got != want {
		t.Errorf("parseStatCPU = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"4242 weir S 1", "4242 (weir) S 1 2 3", "4242 (weir) S 1 4242 4242 0 -1 4194560 900 0 0 0 x 75 0"} {
		if _, err := parseStatCPU([]byte(bad)); err == nil {
			t.Errorf("parseStatCPU(%q) accepted it", bad)
		}
	}
}
