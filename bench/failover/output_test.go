package failover

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeResult is a run of two leader-kill rounds, made by hand.
func fakeResult() *Result {
	start := time.Unix(1_000_000, 0)
	sc := &Scenario{Fault: FaultLeader, Start: start}
	for i := range 2 {
		at := start.Add(time.Duration(i) * 5 * time.Second)
		sc.Rounds = append(sc.Rounds, Round{Round: i + 1, Victims: []int32{int32(i + 1)}, FaultAt: at.Add(time.Second),
			RecoveredAt: at.Add(3 * time.Second), Sent: 100, Acked: 99, Failed: 1, Consumed: 99, Lost: i,
			MaxProduceStallMs: 812.5, MaxConsumerStallMs: 900, LeaderElectedMs: 35, RecoveredMs: 2000, RebalanceMs: -1,
			P50SendMs: 4, P99SendMs: 700, MaxSendMs: 812.5, ClientErrors: map[string]int64{ErrNotLeader: 2}})
		for k := range 100 {
			sent := at.Add(time.Duration(k) * 10 * time.Millisecond).UnixNano()
			sc.acks = append(sc.acks, Ack{Seq: uint32(k), SentNs: sent, DoneNs: sent + int64(4*time.Millisecond), Err: k == 99})
			sc.arrivals = append(sc.arrivals, sent+int64(6*time.Millisecond))
			sc.counts = append(sc.counts, 1)
		}
	}
	return &Result{Config: DefaultConfig(), Started: start, Elapsed: 10 * time.Second, Scenarios: []*Scenario{sc},
		Settings: Settings{Producer: []string{"acks=all"}, Consumer: []string{"group g"}, Broker: []string{"3 nodes"}}}
}

// TestWriteFiles writes the JSON, the Markdown and the PNG of a made-up
// run and checks the JSON's field names, the table's rows and the PNG's
// signature.
func TestWriteFiles(t *testing.T) {
	res := fakeResult()
	dir := t.TempDir()
	if _, err := res.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Scenarios []struct {
			Rounds  []map[string]any `json:"rounds"`
			Summary map[string]any   `json:"summary"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Scenarios) != 1 || len(doc.Scenarios[0].Rounds) != 2 {
		t.Fatalf("JSON: %s", b)
	}
	for _, f := range []string{"sent", "acked", "failed", "lost", "duplicated", "reordered", "max_produce_stall_ms",
		"max_consumer_stall_ms", "leader_elected_ms", "p50_send_ms", "p99_send_ms", "max_send_ms", "client_errors"} {
		if _, ok := doc.Scenarios[0].Rounds[0][f]; !ok {
			t.Errorf("JSON round lacks %q", f)
		}
	}
	if doc.Scenarios[0].Summary["lost"] != 1.0 {
		t.Errorf("summary lost %v, want 1", doc.Scenarios[0].Summary["lost"])
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil || !strings.Contains(string(md), "![leader]("+PictureFile(FaultLeader)+")") || !strings.Contains(string(md), "**lost 1**") {
		t.Errorf("Markdown (%v):\n%s", err, md)
	}
	png, err := os.ReadFile(filepath.Join(dir, PictureFile(FaultLeader)))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("PNG: %v, %d bytes", err, len(png))
	}
	var table bytes.Buffer
	if err := res.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(table.String()), "\n"); len(lines) != 4 || !strings.Contains(lines[1], "812") {
		t.Errorf("table:\n%s", table.String())
	}
}
