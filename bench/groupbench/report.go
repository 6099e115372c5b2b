package groupbench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Goals of the consumer group benchmarks (docs/benchmarks.md).
const (
	goalCommitsPerSecond = 10000
	goalRebalanceAfter   = time.Second
)

// median returns the median of xs (the mean of the middle two when even).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// figure returns the median over the repetitions of f of target t's
// measurement, and whether t was measured.
func (r *Result) figure(t Target, f func(Measurement) float64) (float64, bool) {
	var xs []float64
	for _, rep := range r.Reps {
		if m, ok := rep[t]; ok {
			xs = append(xs, f(m))
		}
	}
	return median(xs), len(xs) > 0
}

// WriteMarkdown writes the report: one table row per figure with the
// medians of weir and kfake, their ratio, and the goal where there is
// one.
func (r *Result) WriteMarkdown(w io.Writer) error {
	c := r.Config
	var b strings.Builder
	fmt.Fprintf(&b, "%d repetitions; (a) %d groups x %d partitions, %d commits per group over %d clients; (b) %d members, eager range balancer; weir's group.initial.rebalance.delay.ms %d.\n\n",
		c.Reps, c.Groups, c.PartitionsPerGroup, c.CommitRounds, c.Clients, c.Members, c.InitialRebalanceDelay.Milliseconds())
	b.WriteString("| figure (median) | weir | kfake | weir/kfake | goal |\n|---|---:|---:|---:|---|\n")
	rows := []struct {
		name string
		f    func(Measurement) float64
		goal string
	}{
		{"(a) commit requests/s", func(m Measurement) float64 { return m.Commits.RequestsPerSecond() }, fmt.Sprintf("weir >= %d", goalCommitsPerSecond)},
		{"(a) partition offsets committed/s", func(m Measurement) float64 { return m.Commits.OffsetsPerSecond() }, ""},
		{"(b) last join -> Stable, ms", func(m Measurement) float64 { return float64(m.Rebalance.SinceLastJoin.Milliseconds()) }, ""},
		{"(b) end of the initial rebalance delay -> Stable, ms", func(m Measurement) float64 { return float64(m.Rebalance.AfterDelay.Milliseconds()) },
			fmt.Sprintf("weir < %d", goalRebalanceAfter.Milliseconds())},
	}
	for _, row := range rows {
		wv, wok := r.figure(Weir, row.f)
		kv, kok := r.figure(Kfake, row.f)
		ratio := "-"
		if wok && kok && kv != 0 {
			ratio = fmt.Sprintf("%.2f", wv/kv)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", row.name, cell(wv, wok), cell(kv, kok), ratio, row.goal)
	}
	b.WriteString("\nThe delay's end follows Kafka's rule (a window of group.initial.rebalance.delay.ms from the first join, extended by another while members keep joining); for kfake, which has no delay, both (b) rows run from the last join.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// cell formats a figure, "-" when not measured.
func cell(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.0f", v)
}
