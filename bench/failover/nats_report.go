package failover

import (
	"fmt"
	"io"
	"strings"
)

// natsRowPrefix opens the fault cell of the NATS rows in the table.
const natsRowPrefix = "nats:"

// NATSPictureFile is the PNG of fault f's NATS scenario.
func NATSPictureFile(f Fault) string { return "failover-nats-" + string(f) + ".png" }

// natsPictureKey is the key of fault f's NATS picture in WriteMarkdown's
// pictures.
func natsPictureKey(f Fault) Fault { return Fault(natsRowPrefix + string(f)) }

// writeRows adds the NATS rounds to the table, their fault cell prefixed
// "nats:", and one row per fault skipped.
func (n *NATSResult) writeRows(w io.Writer) {
	if n == nil {
		return
	}
	for _, sc := range n.Scenarios {
		for _, rd := range sc.Rounds {
			cells := rd.row(sc.Fault)
			cells[0] = natsRowPrefix + cells[0]
			fmt.Fprintln(w, strings.Join(cells, "\t")+"\t")
		}
	}
	for _, s := range n.Skipped {
		cells := make([]string, len(columns))
		cells[0], cells[1] = natsRowPrefix+string(s.Fault), "skipped"
		for i := 2; i < len(cells); i++ {
			cells[i] = "-"
		}
		fmt.Fprintln(w, strings.Join(cells, "\t")+"\t")
	}
}

// writeSummaries prints the NATS summary lines under weir's.
func (n *NATSResult) writeSummaries(w io.Writer) {
	if n == nil {
		return
	}
	for _, sc := range n.Scenarios {
		fmt.Fprintln(w, natsRowPrefix+sc.Summary().String())
	}
	for _, s := range n.Skipped {
		fmt.Fprintf(w, "%s%s: skipped: %s\n", natsRowPrefix, s.Fault, s.Reason)
	}
	fmt.Fprintf(w, "nats: the reference, %s; client errors: %s\n", n.Version, n.errorsText())
	if n.Error != "" {
		fmt.Fprintln(w, "nats: ended early: "+n.Error)
	}
}

// errorsText sums the NATS rounds' client errors (the table's columns
// name Kafka's).
func (n *NATSResult) errorsText() string {
	sum := map[string]int64{}
	var names []string
	for _, sc := range n.Scenarios {
		for _, rd := range sc.Rounds {
			for k, v := range rd.ClientErrors {
				if _, ok := sum[k]; !ok {
					names = append(names, k)
				}
				sum[k] += v
			}
		}
	}
	if len(names) == 0 {
		return "none"
	}
	var s []string
	for _, k := range names {
		s = append(s, fmt.Sprintf("%s %d", k, sum[k]))
	}
	return strings.Join(s, ", ")
}

// natsJSON is the "nats" object of the JSON: the reference's scenarios
// in the shape of weir's.
type natsJSON struct {
	Version   string         `json:"version"`
	Settings  Settings       `json:"settings"`
	Scenarios []jsonScenario `json:"scenarios"`
	Skipped   []SkippedFault `json:"skipped,omitempty"`
	Error     string         `json:"error,omitempty"`
}

func (n *NATSResult) json() *natsJSON {
	if n == nil {
		return nil
	}
	j := &natsJSON{Version: n.Version, Settings: n.Settings, Skipped: n.Skipped, Error: n.Error, Scenarios: []jsonScenario{}}
	for _, sc := range n.Scenarios {
		j.Scenarios = append(j.Scenarios, sc.json())
	}
	return j
}

// writeMarkdown writes the NATS section of the summary.
func (n *NATSResult) writeMarkdown(w io.Writer, pictures map[Fault]string) {
	if n == nil {
		return
	}
	fmt.Fprintf(w, "\n## NATS JetStream, the reference\n\nThe same records, rate and faults against NATS JetStream (%s), measured in the same run.\n\n", n.Version)
	for _, part := range []struct {
		name string
		s    []string
	}{{"Producer", n.Settings.Producer}, {"Consumer", n.Settings.Consumer}, {"Servers", n.Settings.Broker}} {
		fmt.Fprintf(w, "- %s: %s.\n", part.name, strings.Join(part.s, "; "))
	}
	fmt.Fprintf(w, "- Client errors (the table's columns are Kafka's): %s.\n", n.errorsText())
	for _, s := range n.Skipped {
		fmt.Fprintf(w, "- Fault %s skipped: %s.\n", s.Fault, s.Reason)
	}
	if n.Error != "" {
		fmt.Fprintf(w, "- Ended early: %s.\n", n.Error)
	}
	for _, sc := range n.Scenarios {
		sc.writeMarkdown(w, "### NATS fault: "+string(sc.Fault), pictures[natsPictureKey(sc.Fault)])
	}
}
