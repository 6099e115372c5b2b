package brokerbench

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
)

// goalKind is how a row's goal is checked.
type goalKind int

const (
	noGoal       goalKind = iota
	ratioAtLeast          // weir/reference >= bound
	valueBelow            // weir < bound
	valueAtLeast          // weir >= bound
)

// row is one line of the summary table: a weir figure beside its
// reference from the same run.
type row struct {
	goal     string // the goal's letter, as in docs/benchmarks.md
	label    string
	weir     Key
	ref      Key
	refLabel string
	kind     goalKind
	bound    float64
}

// rows returns the summary table's rows for c.
func rows(c Config) []row {
	kib := sizeLabel(c.RecordSize)
	return []row{
		{"a", fmt.Sprintf("produce %s records, acks=1, no fsync (MiB/s)", kib),
			Key{Throughput, Weir, ProduceMiBps}, Key{Throughput, KfakeDataDir, ProduceMiBps}, string(KfakeDataDir), ratioAtLeast, 1.25},
		{"b", fmt.Sprintf("produce %s records, acks=1, fsync before the ack (MiB/s)", kib),
			Key{Fsync, WeirFsync, ProduceMiBps}, Key{Fsync, KfakeSync, ProduceMiBps}, string(KfakeSync), ratioAtLeast, 1.25},
		{"c", fmt.Sprintf("p99 produce latency, %s records at %.0f records/s, acks=all (ms)", kib, c.LatencyRate),
			Key{Latency, Weir, P99Ms}, Key{Latency, KfakeDataDir, P99Ms}, string(KfakeDataDir), valueBelow, 10},
		{"d", "consume vs produce on the same broker (MiB/s; reference: its produce run)",
			Key{Throughput, Weir, ConsumeMiBps}, Key{Throughput, Weir, ProduceMiBps}, "weir produce (a)", ratioAtLeast, 1.5},
		{"d", "the same on the reference (MiB/s)",
			Key{Throughput, KfakeDataDir, ConsumeMiBps}, Key{Throughput, KfakeDataDir, ProduceMiBps}, "kfake produce (a)", noGoal, 0},
		{"a", "CPU time per MiB produced, client and broker together (ms/MiB)",
			Key{Throughput, Weir, ProduceCPU}, Key{Throughput, KfakeDataDir, ProduceCPU}, string(KfakeDataDir), noGoal, 0},
		{"d", "CPU time per MiB consumed, client and broker together (ms/MiB)",
			Key{Throughput, Weir, ConsumeCPU}, Key{Throughput, KfakeDataDir, ConsumeCPU}, string(KfakeDataDir), noGoal, 0},
		{"e", fmt.Sprintf("produce %s records, acks=1, no fsync (records/s)", sizeLabel(c.SmallRecordSize)),
			Key{Small, Weir, ProduceRecords}, Key{Small, KfakeDataDir, ProduceRecords}, string(KfakeDataDir), valueAtLeast, 1.5e6},
		{"f", fmt.Sprintf("broker RSS with %d idle partitions (MB; reference: no topics)", c.IdleTopics*c.IdlePartitions),
			Key{Memory, Weir, RSSMB}, Key{Memory, Weir, RSSBaselineMB}, "weir without topics", valueBelow, 100},
	}
}

// WriteMarkdown writes the summary table (medians over the repetitions and
// their ratios, with each goal) and the table of every repetition's
// figures.
func (res *Result) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	c := res.Config
	fmt.Fprintf(&b, "Medians of %d repetitions (interleaved; ratio = weir / reference, both medians; "+
		"per-rep = the range of the ratios paired within each repetition).\n\n", c.Reps)
	b.WriteString("| goal | measurement | weir | reference | ratio | per-rep ratios | target | met |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---|---|\n")
	for _, r := range rows(c) {
		res.writeRow(&b, r)
	}
	b.WriteString("\nEvery repetition's figures:\n\n")
	res.writeSamples(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRow writes one summary row.
func (res *Result) writeRow(b *strings.Builder, r row) {
	weir, okW := median(res.Samples[r.weir])
	ref, okR := median(res.Samples[r.ref])
	ratio, lo, hi := math.NaN(), math.NaN(), math.NaN()
	if okW && okR && ref != 0 {
		ratio = weir / ref
		lo, hi = pairedRange(res.Samples[r.weir], res.Samples[r.ref])
	}
	fmt.Fprintf(b, "| (%s) | %s | %s | %s (%s) | %s | %s | %s | %s |\n",
		r.goal, r.label, figure(weir, okW), figure(ref, okR), r.refLabel,
		ratioText(ratio), rangeText(lo, hi), goalText(r), metText(r, weir, okW, ratio))
}

// writeSamples writes one line per series with its value in every
// repetition.
func (res *Result) writeSamples(b *strings.Builder) {
	b.WriteString("| measurement | target | figure | median |")
	for i := range res.Config.Reps {
		fmt.Fprintf(b, " rep %d |", i+1)
	}
	b.WriteString("\n|---|---|---|---:|")
	b.WriteString(strings.Repeat("---:|", res.Config.Reps))
	b.WriteString("\n")
	keys := slices.SortedFunc(maps.Keys(res.Samples), func(x, y Key) int {
		return strings.Compare(fmt.Sprint(x.Measure, x.Target, x.Metric), fmt.Sprint(y.Measure, y.Target, y.Metric))
	})
	for _, k := range keys {
		vs := res.Samples[k]
		m, ok := median(vs)
		fmt.Fprintf(b, "| (%s) | %s | %s | %s |", k.Measure, k.Target, k.Metric, figure(m, ok))
		for _, v := range vs {
			fmt.Fprintf(b, " %s |", figure(v, true))
		}
		b.WriteString("\n")
	}
}

// Medians returns the median of every series.
func (res *Result) Medians() map[Key]float64 {
	out := make(map[Key]float64, len(res.Samples))
	for k, vs := range res.Samples {
		if m, ok := median(vs); ok {
			out[k] = m
		}
	}
	return out
}

// median returns the median of vs, false when vs is empty.
func median(vs []float64) (float64, bool) {
	if len(vs) == 0 {
		return 0, false
	}
	s := slices.Sorted(slices.Values(vs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2], true
	}
	return (s[n/2-1] + s[n/2]) / 2, true
}

// pairedRange returns the smallest and largest ratio weir[i]/ref[i].
func pairedRange(weir, ref []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for i := range min(len(weir), len(ref)) {
		if ref[i] == 0 {
			continue
		}
		r := weir[i] / ref[i]
		lo, hi = min(lo, r), max(hi, r)
	}
	if math.IsInf(lo, 1) {
		return math.NaN(), math.NaN()
	}
	return lo, hi
}

// figure formats a median or sample: integers above 100, else three
// significant digits; "—" when missing.
func figure(v float64, ok bool) string {
	switch {
	case !ok || math.IsNaN(v):
		return "—"
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func ratioText(r float64) string {
	if math.IsNaN(r) {
		return "—"
	}
	return fmt.Sprintf("%.2fx", r)
}

func rangeText(lo, hi float64) string {
	if math.IsNaN(lo) {
		return "—"
	}
	return fmt.Sprintf("%.2f-%.2f", lo, hi)
}

// goalText states r's goal.
func goalText(r row) string {
	switch r.kind {
	case ratioAtLeast:
		return fmt.Sprintf(">= %.2fx", r.bound)
	case valueBelow:
		return fmt.Sprintf("< %s", figure(r.bound, true))
	case valueAtLeast:
		return fmt.Sprintf(">= %s", figure(r.bound, true))
	}
	return "—"
}

// metText says whether the medians meet r's goal.
func metText(r row, weir float64, okW bool, ratio float64) string {
	var met bool
	switch r.kind {
	case noGoal:
		return "—"
	case ratioAtLeast:
		if math.IsNaN(ratio) {
			return "n/a"
		}
		met = ratio >= r.bound
	case valueBelow, valueAtLeast:
		if !okW {
			return "n/a"
		}
		met = weir < r.bound
		if r.kind == valueAtLeast {
			met = weir >= r.bound
		}
	}
	if met {
		return "yes"
	}
	return "no"
}

// sizeLabel names a record size: "1 KiB" or "100 B".
func sizeLabel(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}
