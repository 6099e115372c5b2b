package failover

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/weirmq/weir/bench/dist"
)

// columns are the table's headers, one per Round field shown.
var columns = []string{"fault", "round", "victims", "sent", "acked", "failed", "lost", "missed", "dup", "reord", "deposed_acks",
	"leader_ms", "prod_stall_ms", "p50_ms", "p99_ms", "max_ms", "cons_stall_ms", "rebalance_ms",
	"NOT_LEADER", "FETCH_SESSION", "COORD_LOADING", "NOT_COORD", "commit_fail"}

// row is one round's table cells.
func (rd Round) row(f Fault) []string {
	cells := []string{string(f), fmt.Sprint(rd.Round), victimsText(rd.Victims), fmt.Sprint(rd.Sent), fmt.Sprint(rd.Acked),
		fmt.Sprint(rd.Failed), fmt.Sprint(rd.Lost), fmt.Sprint(rd.ConsumerMissed), fmt.Sprint(rd.Duplicated), fmt.Sprint(rd.Reordered),
		countText(rd.deposedAcks()), msText(rd.LeaderElectedMs), msText(rd.MaxProduceStallMs), msText(rd.P50SendMs), msText(rd.P99SendMs), msText(rd.MaxSendMs),
		msText(rd.MaxConsumerStallMs), msText(rd.RebalanceMs)}
	for _, e := range NamedErrors {
		cells = append(cells, fmt.Sprint(rd.ClientErrors[e]))
	}
	return append(cells, fmt.Sprint(rd.CommitFailures))
}

// deposedAcks is the acknowledgements of a leader the others had moved
// on from: acked_by_isolated in a partition round, acked_by_paused in a
// pause round, -1 elsewhere (not measured).
func (rd Round) deposedAcks() int {
	if rd.AckedByIsolated >= 0 {
		return rd.AckedByIsolated
	}
	return rd.AckedByPaused
}

func countText(n int) string {
	if n < 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func victimsText(v []int32) string {
	if len(v) == 0 {
		return "-"
	}
	var s []string
	for _, id := range v {
		s = append(s, fmt.Sprint(id))
	}
	return strings.Join(s, "+")
}

func msText(ms float64) string {
	switch {
	case ms < 0:
		return "-"
	case ms < 10:
		return fmt.Sprintf("%.1f", ms)
	}
	return fmt.Sprintf("%.0f", ms)
}

// WriteTable prints the seed-style table: one line per round, a summary
// line per scenario.
func (res *Result) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(columns, "\t")+"\t")
	for _, sc := range res.Scenarios {
		for _, rd := range sc.Rounds {
			fmt.Fprintln(tw, strings.Join(rd.row(sc.Fault), "\t")+"\t")
		}
	}
	res.NATS.writeRows(tw)
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, sc := range res.Scenarios {
		fmt.Fprintln(w, sc.Summary().String())
	}
	res.NATS.writeSummaries(w)
	return nil
}

// Summary is a scenario's totals and distributions over its rounds.
type Summary struct {
	Fault                                      Fault
	Rounds, Sent, Acked, Failed                int
	Lost, Duplicated, Reordered, Problems      int
	LeaderElected, ProduceStall, ConsumerStall dist.Summary
}

// Summary sums and summarises the scenario's rounds.
func (sc *Scenario) Summary() Summary {
	s := Summary{Fault: sc.Fault, Rounds: len(sc.Rounds)}
	var led, ps, cs []time.Duration
	for _, rd := range sc.Rounds {
		s.Sent += rd.Sent
		s.Acked += rd.Acked
		s.Failed += rd.Failed
		s.Lost += rd.Lost
		s.Duplicated += rd.Duplicated
		s.Reordered += rd.Reordered
		s.Problems += len(rd.Problems)
		add := func(d *[]time.Duration, ms float64) {
			if ms >= 0 {
				*d = append(*d, time.Duration(ms*1e6))
			}
		}
		add(&led, rd.LeaderElectedMs)
		add(&ps, rd.MaxProduceStallMs)
		add(&cs, rd.MaxConsumerStallMs)
	}
	s.LeaderElected, s.ProduceStall, s.ConsumerStall = dist.Of(led), dist.Of(ps), dist.Of(cs)
	return s
}

// String is the summary on one line.
func (s Summary) String() string {
	return fmt.Sprintf("%s: %d rounds, sent %d, acked %d, failed %d, lost %d, duplicated %d, reordered %d; new leader %s; produce stall %s; consumer stall %s; %d problems",
		s.Fault, s.Rounds, s.Sent, s.Acked, s.Failed, s.Lost, s.Duplicated, s.Reordered, s.LeaderElected, s.ProduceStall, s.ConsumerStall, s.Problems)
}

// jsonSummary is Summary with its distributions in milliseconds.
type jsonSummary struct {
	Fault         Fault          `json:"fault"`
	Rounds        int            `json:"rounds"`
	Sent          int            `json:"sent"`
	Acked         int            `json:"acked"`
	Failed        int            `json:"failed"`
	Lost          int            `json:"lost"`
	Duplicated    int            `json:"duplicated"`
	Reordered     int            `json:"reordered"`
	LeaderElected map[string]any `json:"leader_elected_ms"`
	ProduceStall  map[string]any `json:"max_produce_stall_ms"`
	ConsumerStall map[string]any `json:"max_consumer_stall_ms"`
	Problems      int            `json:"problems"`
}

func distJSON(d dist.Summary) map[string]any {
	return map[string]any{"n": d.N, "min": millis(d.Min), "median": millis(d.Median), "p99": millis(d.P99), "max": millis(d.Max)}
}

// WriteJSON writes the run as one JSON document: the configuration, the
// settings, and per scenario its rounds and summary.
func (res *Result) WriteJSON(w io.Writer) error {
	doc := struct {
		Started   time.Time      `json:"started"`
		ElapsedS  float64        `json:"elapsed_s"`
		Config    map[string]any `json:"config"`
		Settings  Settings       `json:"settings"`
		Scenarios []jsonScenario `json:"scenarios"`
		NATS      *natsJSON      `json:"nats,omitempty"`
	}{Started: res.Started.UTC(), ElapsedS: res.Elapsed.Seconds(), Config: res.configJSON(), Settings: res.Settings, NATS: res.NATS.json()}
	for _, sc := range res.Scenarios {
		doc.Scenarios = append(doc.Scenarios, sc.json())
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// jsonScenario is one scenario in the JSON.
type jsonScenario struct {
	Fault   Fault       `json:"fault"`
	Rounds  []Round     `json:"rounds"`
	Summary jsonSummary `json:"summary"`
}

func (sc *Scenario) json() jsonScenario {
	s := sc.Summary()
	return jsonScenario{Fault: sc.Fault, Rounds: sc.Rounds, Summary: jsonSummary{
		Fault: s.Fault, Rounds: s.Rounds, Sent: s.Sent, Acked: s.Acked, Failed: s.Failed, Lost: s.Lost,
		Duplicated: s.Duplicated, Reordered: s.Reordered, LeaderElected: distJSON(s.LeaderElected),
		ProduceStall: distJSON(s.ProduceStall), ConsumerStall: distJSON(s.ConsumerStall), Problems: s.Problems}}
}

func (res *Result) configJSON() map[string]any {
	c := res.Config
	return map[string]any{"nodes": c.Nodes, "topics": c.Topics, "partitions": c.Partitions, "rf": c.RF,
		"min_insync": c.MinInsync, "acks": c.Acks, "idempotent": c.Idempotent, "rate": c.Rate, "records": c.Records,
		"record_size": c.RecordSize, "rounds": c.Rounds, "faults": c.Faults, "unclean": c.Unclean,
		"fsync": c.Fsync, "client_tuned": c.ClientTuned, "sync": c.Sync,
		"gossip_profile": c.GossipProfile, "pause_ms": millis(c.Pause), "fault_after": c.FaultAfter}
}

// WriteMarkdown writes the short summary: settings, one table per
// scenario, the distributions, and the pictures' file names.
func (res *Result) WriteMarkdown(w io.Writer, pictures map[Fault]string) error {
	fmt.Fprintf(w, "# weir bench failover\n\nRun at %s for %s.\n\n", res.Started.UTC().Format(time.RFC3339), res.Elapsed.Round(time.Second))
	fmt.Fprintf(w, "## Settings\n\n")
	for _, part := range []struct {
		name string
		s    []string
	}{{"Producer (franz-go)", res.Settings.Producer}, {"Consumer (franz-go)", res.Settings.Consumer}, {"Brokers", res.Settings.Broker}} {
		fmt.Fprintf(w, "- %s: %s.\n", part.name, strings.Join(part.s, "; "))
	}
	for _, sc := range res.Scenarios {
		sc.writeMarkdown(w, "## Fault: "+string(sc.Fault), pictures[sc.Fault])
	}
	res.NATS.writeMarkdown(w, pictures)
	return nil
}

// writeMarkdown writes one scenario's section under heading: its table,
// totals, distributions, problems and picture (none when "").
func (sc *Scenario) writeMarkdown(w io.Writer, heading, picture string) {
	fmt.Fprintf(w, "\n%s\n\n", heading)
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(columns[1:], " | "), strings.Repeat("---|", len(columns)-1))
	for _, rd := range sc.Rounds {
		fmt.Fprintf(w, "| %s |\n", strings.Join(rd.row(sc.Fault)[1:], " | "))
	}
	s := sc.Summary()
	fmt.Fprintf(w, "\nTotals: sent %d, acked %d, failed %d, **lost %d**, duplicated %d, reordered %d; %d problems.\n\n",
		s.Sent, s.Acked, s.Failed, s.Lost, s.Duplicated, s.Reordered, s.Problems)
	fmt.Fprintf(w, "| over rounds | n | min | median | p99 | max |\n|---|---|---|---|---|---|\n")
	fmt.Fprintf(w, "| new leader %s\n| produce stall %s\n| consumer stall %s\n", s.LeaderElected.Row(), s.ProduceStall.Row(), s.ConsumerStall.Row())
	var probs []string
	for _, rd := range sc.Rounds {
		for _, p := range rd.Problems {
			probs = append(probs, fmt.Sprintf("round %d: %s", rd.Round, p))
		}
	}
	if len(probs) > 0 {
		fmt.Fprintf(w, "\nProblems:\n\n- %s\n", strings.Join(probs, "\n- "))
	}
	if picture != "" {
		fmt.Fprintf(w, "\n![%s](%s)\n", sc.Fault, picture)
	}
}
