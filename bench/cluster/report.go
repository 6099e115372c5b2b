package cluster

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/weirmq/weir/bench/dist"
)

// The goals of docs/benchmarks.md's cluster section (issue 10).
const (
	goalLeadership  = 500 * time.Millisecond
	goalKillStall   = time.Second
	goalFrozenStall = 2 * time.Second
	goalRF3Share    = 0.40
	goalVsNATS      = 3.0
	goalStartup     = 10 * time.Second
	goalRSS         = 600e6
	goalMoved       = 2 * time.Second
	goalIdleCPU     = 0.05
)

// WriteMarkdown writes the run's figures as Markdown tables.
func (res *Result) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Load average (/proc/loadavg, 1/5/15 min): %s at the start, %s at the end.\n\n", res.LoadBefore, res.LoadAfter)
	if f := res.Failover; f != nil {
		res.writeFailover(&b, f)
	}
	if t := res.Throughput; t != nil {
		writeThroughput(&b, t)
	}
	if s := res.Scale; s != nil {
		writeScale(&b, s)
	}
	if len(res.Errors) > 0 {
		b.WriteString("### Scenarios that ended early\n\n")
		for _, e := range res.Errors {
			fmt.Fprintf(&b, "- %s\n", e)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sample keeps the measured values of a series and counts the missing
// ones (negative: the step did not finish).
type sample struct {
	vals    []time.Duration
	missing int
	// bounded counts the values that are lower bounds (a wait ran out).
	bounded int
}

func (s *sample) add(d time.Duration) {
	if d < 0 {
		s.missing++
		return
	}
	s.vals = append(s.vals, d)
}

// row is "| what | n | min | median | p99 | max | goal | met |".
func (s sample) row(what string, goal time.Duration) string {
	sum := dist.Of(s.vals)
	cells := sum.Row()
	if sum.N == 0 {
		cells = "| 0 | - | - | - | - |"
	}
	g, met := "", ""
	if goal > 0 {
		g = "p99 < " + goal.String()
		met = "no"
		if sum.N > 0 && sum.P99 < goal && s.missing == 0 {
			met = "yes"
		}
	}
	if s.missing > 0 {
		what += fmt.Sprintf(" (%d missing)", s.missing)
	}
	if s.bounded > 0 {
		what += fmt.Sprintf(" (%d still stalled when the wait ended: counted to its end)", s.bounded)
		met = "no"
	}
	return fmt.Sprintf("| %s %s %s | %s |", what, cells, g, met)
}

func (res *Result) writeFailover(b *strings.Builder, f *FailoverResult) {
	cfg := res.Config
	fmt.Fprintf(b, "### Failover: %d partitions, RF=3, min.insync.replicas=2, acks=all, %s gossip profile\n\n", f.Partitions, cfg.GossipProfile)
	fmt.Fprintf(b, "Each producer sends one %d-byte record to every partition every %v. Times run from the signal; "+
		"\"leadership\" until a survivor's Metadata (polled every %v) shows every partition led by a live node; "+
		"a producer's stall is the longest gap between consecutive acknowledgements of any partition around the failure.\n\n",
		recordBytes, cfg.ProduceEvery, cfg.PollEvery)
	if f.RdkafkaSkipped != "" {
		fmt.Fprintf(b, "librdkafka did not run: %s.\n\n", f.RdkafkaSkipped)
	}
	var clients []string
	for _, r := range f.Rounds {
		for _, s := range r.Stalls {
			if !slices.Contains(clients, s.Client) {
				clients = append(clients, s.Client)
			}
		}
	}
	b.WriteString("| measurement | n | min | median | p99 | max | goal | met |\n|---|---:|---:|---:|---:|---:|---|---|\n")
	for _, sig := range []string{"SIGKILL", "SIGSTOP"} {
		var detected, fenced, leadership, rejoin, balanced sample
		stalls, balanceStalls := map[string]*sample{}, map[string]*sample{}
		any := false
		for _, r := range f.Rounds {
			if r.Signal != sig {
				continue
			}
			any = true
			detected.add(r.Detected)
			fenced.add(r.Fenced)
			leadership.add(r.Leadership)
			rejoin.add(r.Rejoin)
			balanced.add(r.Balanced)
			for _, s := range r.BalanceStalls {
				if balanceStalls[s.Client] == nil {
					balanceStalls[s.Client] = &sample{}
				}
				balanceStalls[s.Client].add(s.Longest)
			}
			for _, s := range r.Stalls {
				if stalls[s.Client] == nil {
					stalls[s.Client] = &sample{}
				}
				stalls[s.Client].add(s.Longest)
				if len(s.Stuck) > 0 {
					stalls[s.Client].bounded++
				}
			}
		}
		if !any {
			continue
		}
		stallGoal, leadGoal := goalKillStall, goalLeadership
		if sig == "SIGSTOP" {
			stallGoal, leadGoal = goalFrozenStall, 0
		}
		fmt.Fprintln(b, detected.row(sig+": gossip declares the victim dead (survivors' logs)", 0))
		fmt.Fprintln(b, fenced.row(sig+": controller fences the victim (its log)", 0))
		fmt.Fprintln(b, leadership.row(sig+": every partition led by a live node", leadGoal))
		for _, c := range clients {
			if s := stalls[c]; s != nil {
				fmt.Fprintln(b, s.row(sig+": "+c+" producer stall", stallGoal))
			}
		}
		what := "restart"
		if sig == "SIGSTOP" {
			what = "SIGCONT"
		}
		fmt.Fprintln(b, rejoin.row(sig+": "+what+" until every ISR is full again", 0))
		fmt.Fprintln(b, balanced.row(sig+": full ISRs until every partition is led by its preferred replica again", 0))
		for _, c := range clients {
			if s := balanceStalls[c]; s != nil {
				fmt.Fprintln(b, s.row(sig+": "+c+" producer stall while leaderships move back", 0))
			}
		}
	}
	if n := res.NATSFailover; n != nil {
		var election, stall sample
		for _, r := range n.Rounds {
			election.add(r.Election)
			stall.add(r.Stall)
		}
		fmt.Fprintln(b, election.row("reference: "+n.Version+" JetStream R3 stream leader SIGKILLed: new stream leader", 0))
		fmt.Fprintln(b, stall.row("reference: the same, nats.go publisher stall", 0))
	}
	b.WriteString("\n")
	res.writeNATSRatios(b, f, clients)
	b.WriteString("Rounds:\n\n| # | signal | victim | led | controller | detected | fenced | leadership |")
	for _, c := range clients {
		fmt.Fprintf(b, " %s stall (partitions >= 100 ms) |", c)
	}
	b.WriteString(" franz-go Metadata requests | rejoin | balanced | problems |\n|---:|---|---:|---:|---|---:|---:|---:|")
	for range clients {
		b.WriteString("---:|")
	}
	b.WriteString("---|---:|---:|---|\n")
	for i, r := range f.Rounds {
		fmt.Fprintf(b, "| %d | %s | %d | %d | %v | %s | %s | %s |", i+1, r.Signal, r.Victim, r.Led, yesNo(r.Controller),
			ms(r.Detected), ms(r.Fenced), ms(r.Leadership))
		for _, c := range clients {
			cell := "-"
			for _, s := range r.Stalls {
				if s.Client == c {
					cell = fmt.Sprintf("%s (%d) from %s", ms(s.Longest), s.Stalled, signedMs(s.From))
					if len(s.Stuck) > 0 {
						cell = fmt.Sprintf(">= %s (%d, %d still stalled)", ms(s.Longest), s.Stalled, len(s.Stuck))
					}
				}
			}
			fmt.Fprintf(b, " %s |", cell)
		}
		var meta []string
		for _, d := range r.FranzMetadata {
			meta = append(meta, ms(d))
		}
		fmt.Fprintf(b, " %s | %s | %s | %s |\n", strings.Join(meta, ", "), ms(r.Rejoin), ms(r.Balanced), strings.Join(r.Problems, "; "))
	}
	b.WriteString("\n")
	if len(f.Clients) > 0 {
		b.WriteString("| producer | records acknowledged | failed | not buffered (client full) |\n|---|---:|---:|---:|\n")
		for _, c := range f.Clients {
			fmt.Fprintf(b, "| %s | %d | %d | %d |\n", c.Client, c.Acked, c.Failed, c.Dropped)
		}
		b.WriteString("\n")
	}
	if n := res.NATSFailover; n != nil {
		fmt.Fprintf(b, "NATS rounds (the stream leader's server SIGKILLed; the publisher, one synchronous publish every %v, "+
			"talks to a surviving server; %d publishes returned an error and were retried):\n\n", cfg.ProduceEvery, n.Failed)
		b.WriteString("| # | server | new stream leader | publisher stall | problems |\n|---:|---:|---:|---:|---|\n")
		for i, r := range n.Rounds {
			fmt.Fprintf(b, "| %d | n%d | %s | %s | %s |\n", i+1, r.Victim+1, ms(r.Election), ms(r.Stall), strings.Join(r.Problems, "; "))
		}
		b.WriteString("\n")
	}
	for _, p := range f.Problems {
		fmt.Fprintf(b, "- problem: %s\n", p)
	}
}

// writeNATSRatios compares the weir producers' median SIGKILL stalls with
// the NATS publisher's.
func (res *Result) writeNATSRatios(b *strings.Builder, f *FailoverResult, clients []string) {
	n := res.NATSFailover
	if n == nil {
		return
	}
	var ns sample
	for _, r := range n.Rounds {
		ns.add(r.Stall)
	}
	natsMed := dist.Of(ns.vals).Median
	if natsMed <= 0 {
		return
	}
	for _, c := range clients {
		var s sample
		for _, r := range f.Rounds {
			if r.Signal != "SIGKILL" {
				continue
			}
			for _, st := range r.Stalls {
				if st.Client == c {
					s.add(st.Longest)
				}
			}
		}
		if med := dist.Of(s.vals).Median; med > 0 {
			fmt.Fprintf(b, "- %s: median SIGKILL stall %s, %.2fx the NATS median (%s); NATS / weir = %.1fx.\n",
				c, ms(med), float64(med)/float64(natsMed), ms(natsMed), float64(natsMed)/float64(med))
		}
	}
	b.WriteString("\n")
}

func writeThroughput(b *strings.Builder, t *ThroughputResult) {
	fmt.Fprintf(b, "### Replicated throughput: %d-byte records, %d partitions per topic\n\n", t.RecordSize, t.Partitions)
	fmt.Fprintf(b, "weir: `bench/perf` (franz-go; linger 5 ms, 1 MiB batches), %d records a run, on the failover scenario's cluster. "+
		"NATS: %s, 3 server processes, an R3 file stream, nats.go async publish (4,000 acks outstanding), %d records a run. "+
		"Runs interleaved, order rotating.\n\n", t.Records, t.NATSVersion, t.NATSRecords)
	b.WriteString("| target | MiB/s per run | median MiB/s | weir CPU ms/MiB | bench process CPU ms/MiB |\n|---|---|---:|---:|---:|\n")
	med := map[string]float64{}
	for _, target := range []string{TargetAllRF3, TargetOneRF1, TargetNATS} {
		var mibs []float64
		var cl, self []time.Duration
		for _, r := range t.Runs {
			if r.Target == target {
				mibs = append(mibs, r.MiBps)
				cl = append(cl, r.ClusterCPU)
				self = append(self, r.SelfCPU)
			}
		}
		if len(mibs) == 0 {
			continue
		}
		med[target] = medianFloat(mibs)
		var runs []string
		for _, m := range mibs {
			runs = append(runs, fmt.Sprintf("%.1f", m))
		}
		fmt.Fprintf(b, "| %s | %s | %.1f | %.2f | %.2f |\n", target, strings.Join(runs, ", "), med[target],
			msf(dist.Of(cl).Median), msf(dist.Of(self).Median))
	}
	b.WriteString("\n| ratio | value | goal | met |\n|---|---:|---|---|\n")
	if a, o := med[TargetAllRF3], med[TargetOneRF1]; a > 0 && o > 0 {
		fmt.Fprintf(b, "| acks=all RF=3 / acks=1 RF=1 | %.2f | >= %.2f | %s |\n", a/o, goalRF3Share, yesNo(a/o >= goalRF3Share))
	}
	if a, n := med[TargetAllRF3], med[TargetNATS]; a > 0 && n > 0 {
		fmt.Fprintf(b, "| weir acks=all RF=3 / NATS R3 | %.2fx | >= %.0fx | %s |\n", a/n, goalVsNATS, yesNo(a/n >= goalVsNATS))
	}
	b.WriteString("\n")
}

func writeScale(b *strings.Builder, s *ScaleResult) {
	want := s.Topics * s.PartitionsPerTopic
	fmt.Fprintf(b, "### Scale: %d topics x %d partitions = %d partitions, RF=3\n\n", s.Topics, s.PartitionsPerTopic, want)
	b.WriteString("| measurement | value | goal | met |\n|---|---|---|---|\n")
	durRow := func(what string, d, goal time.Duration) {
		g, met := "", ""
		if goal > 0 {
			g, met = "< "+goal.String(), yesNo(d >= 0 && d < goal)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", what, ms(d), g, met)
	}
	durRow("CreateTopics until every partition has a leader", s.Created, 0)
	durRow("CreateTopics until every ISR is full", s.CreatedInSync, 0)
	if len(s.LeadersAfterCreate) > 0 {
		var l []string
		for _, n := range s.LeadersAfterCreate {
			l = append(l, fmt.Sprint(n))
		}
		fmt.Fprintf(b, "| partitions led by node 1, 2, ... after the creation | %s |  |  |\n", strings.Join(l, ", "))
	}
	durRow("cold start (all nodes killed, all started): every partition led, newer leader epoch", s.ColdLed, goalStartup)
	durRow("cold start: a record acknowledged (acks=all) on every partition", s.ColdWritable, 0)
	durRow("cold start: every ISR full", s.ColdInSync, 0)
	fmt.Fprintf(b, "| RSS per node after creation (MB) | %s | < %.0f | %s |\n", mbList(s.RSS), goalRSS/1e6, yesNo(allBelow(s.RSS, goalRSS)))
	fmt.Fprintf(b, "| RSS per node after the cold start (MB) | %s | < %.0f | %s |\n", mbList(s.RSSAfterCold), goalRSS/1e6, yesNo(allBelow(s.RSSAfterCold, goalRSS)))
	var cpu []string
	idleMet := len(s.IdleCPU) > 0
	for _, c := range s.IdleCPU {
		cpu = append(cpu, fmt.Sprintf("%.1f%%", 100*c))
		idleMet = idleMet && c < goalIdleCPU
	}
	fmt.Fprintf(b, "| idle CPU per node over %v (share of a core) | %s | < %.0f%% | %s |\n", s.IdleWindow, strings.Join(cpu, ", "), 100*goalIdleCPU, yesNo(idleMet))
	durRow(fmt.Sprintf("SIGKILL of node %d (led %d): gossip declares it dead", s.Victim, s.Led), s.Detected, 0)
	durRow("SIGKILL: controller fences it", s.Fenced, 0)
	durRow("SIGKILL: every partition led by a live node", s.Moved, goalMoved)
	durRow("restart until every ISR is full again", s.Rejoin, 0)
	b.WriteString("\n")
	for _, p := range s.Problems {
		fmt.Fprintf(b, "- problem: %s\n", p)
	}
	if len(s.Problems) > 0 {
		b.WriteString("\n")
	}
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// ms prints a duration rounded as the measurements resolve it, "-" when
// negative (not measured).
func ms(d time.Duration) string {
	if d < 0 {
		return "-"
	}
	return dist.Round(d).String()
}

// signedMs is d rounded, with its sign.
func signedMs(d time.Duration) string {
	if d < 0 {
		return "-" + dist.Round(-d).String()
	}
	return "+" + dist.Round(d).String()
}

// msf is d in milliseconds.
func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func mbList(rss []int64) string {
	var s []string
	for _, r := range rss {
		s = append(s, fmt.Sprintf("%.0f", float64(r)/1e6))
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ", ")
}

func allBelow(rss []int64, limit float64) bool {
	if len(rss) == 0 {
		return false
	}
	for _, r := range rss {
		if float64(r) >= limit {
			return false
		}
	}
	return true
}

func medianFloat(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}
