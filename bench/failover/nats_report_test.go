package failover

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeNATSResult is fakeResult with a NATS reference of the same rounds
// and a skipped fault.
func fakeNATSResult() *Result {
	res := fakeResult()
	weir := res.Scenarios[0]
	sc := &Scenario{Fault: weir.Fault, Start: weir.Start, Rounds: weir.Rounds, acks: weir.acks, arrivals: weir.arrivals,
		counts: weir.counts, system: "NATS JetStream"}
	res.NATS = &NATSResult{Version: "nats-server v2, nats.go v1", Scenarios: []*Scenario{sc},
		Skipped:  []SkippedFault{{Fault: "partition", Reason: "not built"}},
		Settings: Settings{Producer: []string{"async"}, Consumer: []string{"durable"}, Broker: []string{"3 servers"}}}
	return res
}

// TestWriteFilesNATS: the NATS reference shows in the table (rows
// prefixed nats:), in the JSON (a "nats" object with scenarios shaped as
// weir's), in the Markdown and as its own PNG.
func TestWriteFilesNATS(t *testing.T) {
	res := fakeNATSResult()
	dir := t.TempDir()
	if _, err := res.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		NATS struct {
			Version   string `json:"version"`
			Scenarios []struct {
				Fault   string           `json:"fault"`
				Rounds  []map[string]any `json:"rounds"`
				Summary map[string]any   `json:"summary"`
			} `json:"scenarios"`
			Skipped []SkippedFault `json:"skipped"`
		} `json:"nats"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.NATS.Scenarios) != 1 || len(doc.NATS.Scenarios[0].Rounds) != 2 || len(doc.NATS.Skipped) != 1 {
		t.Fatalf("JSON: %s", b)
	}
	for _, f := range []string{"sent", "acked", "failed", "lost", "duplicated", "reordered", "max_produce_stall_ms",
		"max_consumer_stall_ms", "leader_elected_ms", "p50_send_ms", "p99_send_ms", "max_send_ms"} {
		if _, ok := doc.NATS.Scenarios[0].Rounds[0][f]; !ok {
			t.Errorf("NATS JSON round lacks %q", f)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil || !strings.Contains(string(md), "### NATS fault: leader") || !strings.Contains(string(md), "("+NATSPictureFile(FaultLeader)+")") ||
		!strings.Contains(string(md), "partition skipped") {
		t.Errorf("Markdown (%v):\n%s", err, md)
	}
	png, err := os.ReadFile(filepath.Join(dir, NATSPictureFile(FaultLeader)))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("NATS PNG: %v, %d bytes", err, len(png))
	}
	var table bytes.Buffer
	if err := res.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	out := table.String()
	if strings.Count(out, "nats:leader") != 3 || !strings.Contains(out, "nats:partition") || !strings.Contains(out, "skipped: not built") {
		t.Errorf("table:\n%s", out)
	}
}

// TestNATSLedAnew: a stream counts as led anew by a live server that was
// not hit, or by a victim elected after the fault, never by a server
// that is down.
func TestNATSLedAnew(t *testing.T) {
	at := fakeResult().Started
	up := func(i int) bool { return i != 2 }
	for _, c := range []struct {
		leads   []streamLead
		victims []int
		want    bool
	}{
		{[]streamLead{{leader: 0, since: at.Add(-1)}}, []int{1}, true},
		{[]streamLead{{leader: 1, since: at.Add(-1)}}, []int{1}, false},
		{[]streamLead{{leader: 1, since: at.Add(1)}}, []int{1}, true},
		{[]streamLead{{leader: 2, since: at.Add(1)}}, nil, false},
		{[]streamLead{{leader: -1}}, nil, false},
		{[]streamLead{{leader: 0}, {leader: 1, since: at}}, []int{1}, false},
	} {
		if got := natsLedAnew(c.leads, c.victims, at, up); got != c.want {
			t.Errorf("natsLedAnew(%+v, victims %v) = %v, want %v", c.leads, c.victims, got, c.want)
		}
	}
	if got := mostLeading([]streamLead{{leader: 2}, {leader: 1}, {leader: 2}, {leader: -1}}, 3); got != 2 {
		t.Errorf("mostLeading = %d, want 2", got)
	}
	if p, err := subjectPartition(natsSubject("failover-0", 17)); p != 17 || err != nil {
		t.Errorf("subjectPartition = %d, %v", p, err)
	}
	if _, err := subjectPartition("nodot"); err == nil {
		t.Error("subjectPartition of a subject without a partition: no error")
	}
}
