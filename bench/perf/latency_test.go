package perf

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestHistogramPercentilesOfKnownLatencies(t *testing.T) {
	var h Histogram
	for ms := 1000; ms >= 1; ms-- { // order must not matter
		h.Record(time.Duration(ms) * time.Millisecond)
	}
	// Kafka's rule: the latency at index floor(p*n) of the sorted ones.
	want := map[float64]int64{0: 1, 0.5: 501, 0.95: 951, 0.99: 991, 0.999: 1000, 1: 1000}
	for p, ms := range want {
		if got := h.Percentile(p); got != ms {
			t.Errorf("Percentile(%v) = %d ms, want %d", p, got, ms)
		}
	}
	if h.Count() != 1000 || h.Mean() != 500500*time.Microsecond || h.Max() != time.Second {
		t.Errorf("count %d mean %v max %v, want 1000, 500.5ms, 1s", h.Count(), h.Mean(), h.Max())
	}
}

func TestHistogramSmallAndEdgeValues(t *testing.T) {
	var h Histogram
	if h.Percentile(0.5) != 0 || h.Mean() != 0 || h.Max() != 0 || h.Count() != 0 {
		t.Fatal("an empty histogram reports non-zero figures")
	}
	h.Record(-time.Second)            // counts as 0
	h.Record(900 * time.Microsecond)  // 0 ms, as Kafka's whole-millisecond latencies
	h.Record(1999 * time.Microsecond) // 1 ms
	h.Record(2 * time.Hour)           // far past the dense buckets
	if got := []int64{h.Percentile(0), h.Percentile(0.25), h.Percentile(0.5), h.Percentile(0.75), h.Percentile(0.99)}; !slices.Equal(got, []int64{0, 0, 1, 7200000, 7200000}) {
		t.Errorf("percentiles %v, want [0 0 1 7200000 7200000]", got)
	}
	if h.Max() != 2*time.Hour {
		t.Errorf("max %v, want 2h", h.Max())
	}
	if want := (2*time.Hour + 2899*time.Microsecond) / 4; h.Mean() != want {
		t.Errorf("mean %v, want %v", h.Mean(), want)
	}
}

// TestHistogramMatchesSortedSamples checks the histogram against Kafka's
// own method, sorting every latency, on random data spanning the dense and
// the sparse buckets.
func TestHistogramMatchesSortedSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 7, 100, 12345} {
		var h, a, b Histogram
		ms := make([]int64, n)
		for i := range ms {
			d := time.Duration(rng.ExpFloat64() * float64(50*time.Millisecond))
			if rng.IntN(50) == 0 {
				d += time.Duration(rng.IntN(20000)) * time.Millisecond
			}
			h.Record(d)
			if i%2 == 0 {
				a.Record(d)
			} else {
				b.Record(d)
			}
			ms[i] = int64(d / time.Millisecond)
		}
		slices.Sort(ms)
		a.Merge(&b)
		for _, p := range []float64{0, 0.01, 0.5, 0.9, 0.95, 0.99, 0.999, 0.9999} {
			want := ms[int(p*float64(n))]
			if got := h.Percentile(p); got != want {
				t.Errorf("n=%d: Percentile(%v) = %d, sorted samples say %d", n, p, got, want)
			}
			if got := a.Percentile(p); got != want {
				t.Errorf("n=%d: merged Percentile(%v) = %d, sorted samples say %d", n, p, got, want)
			}
		}
		if a.Count() != h.Count() || a.Max() != h.Max() || a.Mean() != h.Mean() {
			t.Errorf("n=%d: merged histogram differs: %d/%v/%v vs %d/%v/%v", n, a.Count(), a.Max(), a.Mean(), h.Count(), h.Max(), h.Mean())
		}
	}
}

func TestProduceStatsWindows(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	s := newProduceStats(t0, 5*time.Second)
	at := func(d time.Duration) time.Time { return t0.Add(d) }

	if _, ok := s.acked(2*time.Millisecond, 100, at(time.Second)); ok {
		t.Fatal("a window closed after 1s of a 5s interval")
	}
	if _, ok := s.acked(10*time.Millisecond, 100, at(4999*time.Millisecond)); ok {
		t.Fatal("a window closed before its interval")
	}
	w, ok := s.acked(6*time.Millisecond, 100, at(5*time.Second))
	if !ok {
		t.Fatal("no window after the interval")
	}
	want := WindowSummary{Records: 3, Bytes: 300, Elapsed: 5 * time.Second, AvgLatency: 6 * time.Millisecond, MaxLatency: 10 * time.Millisecond}
	if w != want {
		t.Errorf("window %+v, want %+v", w, want)
	}
	// The next window starts at the closing acknowledgement.
	if _, ok := s.acked(time.Millisecond, 50, at(9*time.Second)); ok {
		t.Fatal("second window closed early")
	}
	w, ok = s.acked(3*time.Millisecond, 50, at(10*time.Second))
	if want := (WindowSummary{Records: 2, Bytes: 100, Elapsed: 5 * time.Second, AvgLatency: 2 * time.Millisecond, MaxLatency: 3 * time.Millisecond}); !ok || w != want {
		t.Errorf("second window %+v (%v), want %+v", w, ok, want)
	}

	boom := errors.New("boom")
	s.failedRecord(boom)
	s.failedRecord(errors.New("later"))
	r := s.result(at(11 * time.Second))
	if r.Records != 5 || r.Bytes != 400 || r.Elapsed != 11*time.Second || r.Failed != 2 || r.FirstError != boom {
		t.Errorf("result %+v", r)
	}
	if r.Latency.Count() != 5 || r.Latency.Max() != 10*time.Millisecond {
		t.Errorf("result latency count %d max %v", r.Latency.Count(), r.Latency.Max())
	}
	// The result is a snapshot: later acknowledgements do not change it.
	s.acked(time.Minute, 1, at(12*time.Second))
	if r.Latency.Count() != 5 || r.Latency.Max() != 10*time.Millisecond {
		t.Error("result latency changed after a later acknowledgement")
	}
}

func TestProduceStatsWithoutWindows(t *testing.T) {
	t0 := time.Unix(0, 0)
	s := newProduceStats(t0, 0)
	for i := range 100 {
		if _, ok := s.acked(time.Millisecond, 1, t0.Add(time.Duration(i)*time.Hour)); ok {
			t.Fatal("interval 0 closed a window")
		}
	}
}
