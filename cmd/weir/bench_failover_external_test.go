package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirmq/weir/internal/harness"
)

// TestBenchFailoverExternal runs `weir bench failover` in external mode
// (--brokers, --stop-cmd, --start-cmd) against a 3-node weir cluster the
// test started, with the test's own stop and start scripts: stop SIGKILLs
// the node's process group from its pid file and waits until it is gone,
// start runs `weir serve` again with the node's arguments in a new
// session and writes the new pid. One leader kill at acks=all: nothing
// acknowledged may be lost, and the start script must bring the victim
// back into every ISR.
func TestBenchFailoverExternal(t *testing.T) {
	procs, kafka, joins, dirs := serveClusterJoins(t, 3)
	weir := harness.MustBuildWeir(t)
	scripts := t.TempDir()
	pidFile := func(id int) string { return filepath.Join(scripts, fmt.Sprintf("node-%d.pid", id)) }
	for i, p := range procs {
		id := i + 1
		if err := os.WriteFile(pidFile(id), []byte(strconv.Itoa(p.Pid())), 0o644); err != nil {
			t.Fatal(err)
		}
		var args []string
		for _, a := range clusterNode(id, 3, dirs[i], kafka[i], joins[i], joins).Args {
			args = append(args, "'"+a+"'")
		}
		start := fmt.Sprintf("setsid '%s' %s >>'%s' 2>&1 </dev/null &\necho $! >'%s'\n",
			weir, strings.Join(args, " "), filepath.Join(scripts, fmt.Sprintf("node-%d.log", id)), pidFile(id))
		if err := os.WriteFile(filepath.Join(scripts, fmt.Sprintf("start-%d.sh", id)), []byte(start), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stop := fmt.Sprintf("pid=$(cat '%s/node-'$1'.pid')\nkill -9 -- -$pid 2>/dev/null || kill -9 $pid\n"+
		"while kill -0 $pid 2>/dev/null; do sleep 0.05; done\n", scripts)
	if err := os.WriteFile(filepath.Join(scripts, "stop.sh"), []byte(stop), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // the nodes the start script started
		for id := 1; id <= 3; id++ {
			if b, err := os.ReadFile(pidFile(id)); err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
					_ = syscall.Kill(-pid, syscall.SIGKILL)
				}
			}
		}
	})

	out := t.TempDir()
	p, err := harness.Spawn(t, harness.Options{Args: []string{"bench", "failover", "--brokers", strings.Join(kafka, ","),
		"--stop-cmd", "sh " + scripts + "/stop.sh {node}", "--start-cmd", "sh " + scripts + "/start-{node}.sh",
		"--rounds", "2", "--fault", "leader", "--partitions", "3", "--records", "300", "--rate", "300",
		"--drain-quiet", "3s", "--out", out, "--json"}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(3 * time.Minute): // a bound, not a wait
		_ = p.Kill()
		t.Fatalf("still running after 3 minutes; stderr:\n%s", p.Stderr())
	}
	if code, err := p.Wait(); code != 0 || err != nil {
		t.Fatalf("exit %d, %v; stderr:\n%s", code, err, p.Stderr())
	}
	var doc struct {
		Settings struct {
			Broker []string `json:"broker"`
		} `json:"settings"`
		Scenarios []struct {
			Rounds []map[string]any `json:"rounds"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal([]byte(p.Stdout()), &doc); err != nil {
		t.Fatalf("stdout is not the JSON: %v\n%s", err, p.Stdout())
	}
	if len(doc.Scenarios) != 1 || len(doc.Scenarios[0].Rounds) != 2 {
		t.Fatalf("want 2 rounds:\n%s", p.Stdout())
	}
	if len(doc.Settings.Broker) == 0 || !strings.Contains(doc.Settings.Broker[0], "external cluster of 3 brokers") {
		t.Errorf("settings do not name the external cluster: %v", doc.Settings.Broker)
	}
	for i, rd := range doc.Scenarios[0].Rounds {
		if rd["lost"] != 0.0 || rd["acked"] == 0.0 {
			t.Errorf("round %d: acked %v, lost %v at acks=all", i+1, rd["acked"], rd["lost"])
		}
		if v, _ := rd["victims"].([]any); len(v) != 1 || rd["leader_elected_ms"] == -1.0 {
			t.Errorf("round %d: victims %v, leader elected %v ms", i+1, rd["victims"], rd["leader_elected_ms"])
		}
		problems, _ := rd["problems"].([]any)
		for _, pr := range problems {
			if s, _ := pr.(string); strings.HasPrefix(s, "after the fault") {
				t.Errorf("round %d: the victim did not come back: %s", i+1, s)
			}
		}
	}
}
