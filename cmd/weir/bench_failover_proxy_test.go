package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/weirmq/weir/internal/harness"
)

// TestBenchFailoverProxyFlags: the proxy's and the group's settings are
// checked before any node starts.
func TestBenchFailoverProxyFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--loss", "1"}, "loss"},
		{[]string{"--fault-loss", "-0.1"}, "loss"},
		{[]string{"--latency", "-1ms"}, "latency"},
		{[]string{"--fault-time", "0s"}, "fault time"},
		{[]string{"--consumers", "0"}, "consumers"},
	} {
		code, stdout, stderr := runCmd(t, append([]string{"bench", "failover"}, c.args...)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("weir bench failover %v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
}

// TestBenchFailoverProxyFaults runs one round each of the
// client-disconnect and latency faults through the in-process proxy, with
// 5 ms of latency on all client traffic and two consumer group members,
// at a small size on the relaxed profile: with acks=all and the
// idempotent producer (a dropped connection makes the producer retry) not
// one acknowledged record may be lost or written twice, and no leader
// moves. It asserts no time.
func TestBenchFailoverProxyFaults(t *testing.T) {
	p, err := harness.Spawn(t, harness.Options{Args: []string{"bench", "failover", "--rounds", "1", "--fault", "client-disconnect,latency",
		"--consumers", "2", "--latency", "5ms", "--fault-time", "1s", "--idempotent",
		"--topics", "2", "--partitions", "3", "--records", "400", "--rate", "400", "--gossip-profile", "relaxed", "--drain-quiet", "3s",
		"--tmp", t.TempDir(), "--out", t.TempDir(), "--json"}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(3 * time.Minute): // a bound, not a wait: the run takes well under a minute
		_ = p.Kill()
		t.Fatalf("weir bench failover still running after 3 minutes; stderr:\n%s", p.Stderr())
	}
	if code, err := p.Wait(); code != 0 || err != nil {
		t.Fatalf("exit %d, %v; stderr:\n%s", code, err, p.Stderr())
	}
	var doc struct {
		Settings struct {
			Consumer []string `json:"consumer"`
			Broker   []string `json:"broker"`
		} `json:"settings"`
		Scenarios []struct {
			Fault  string           `json:"fault"`
			Rounds []map[string]any `json:"rounds"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal([]byte(p.Stdout()), &doc); err != nil {
		t.Fatalf("stdout is not the JSON: %v\n%s", err, p.Stdout())
	}
	if len(doc.Scenarios) != 2 || doc.Scenarios[0].Fault != "client-disconnect" || doc.Scenarios[1].Fault != "latency" {
		t.Fatalf("want the client-disconnect and latency scenarios:\n%s", p.Stdout())
	}
	if s := strings.Join(doc.Settings.Broker, "\n"); !strings.Contains(s, "proxy") {
		t.Errorf("broker settings do not name the proxy:\n%s", s)
	}
	if len(doc.Settings.Consumer) == 0 || !strings.HasPrefix(doc.Settings.Consumer[0], "2 member") {
		t.Errorf("consumer settings %v do not name 2 members", doc.Settings.Consumer)
	}
	for _, sc := range doc.Scenarios {
		if len(sc.Rounds) != 1 {
			t.Fatalf("%s: %d rounds, want 1", sc.Fault, len(sc.Rounds))
		}
		rd := sc.Rounds[0]
		if rd["lost"] != 0.0 || rd["duplicated"] != 0.0 {
			t.Errorf("%s: lost %v %v, duplicated %v at acks=all with the idempotent producer", sc.Fault, rd["lost"], rd["lost_examples"], rd["duplicated"])
		}
		if rd["acked"] == 0.0 || rd["sent"] != 400.0 {
			t.Errorf("%s: sent %v, acked %v", sc.Fault, rd["sent"], rd["acked"])
		}
		if v, _ := rd["victims"].([]any); len(v) != 1 || rd["leader_elected_ms"] != -1.0 {
			t.Errorf("%s: victims %v, leader_elected_ms %v; want one node and -1 (no leader moves)", sc.Fault, rd["victims"], rd["leader_elected_ms"])
		}
	}
}
