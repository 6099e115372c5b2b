package main

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weirmq/weir/internal/harness"
)

// serveCluster starts n `weir serve` processes on loopback that form one
// cluster by gossip (every node with the same --join list and --voters),
// with the relaxed timing profile, and waits until each is ready. It
// returns the processes and the Kafka addresses, by node id - 1.
func serveCluster(t *testing.T, n int, extra ...string) ([]*harness.Process, []string) {
	t.Helper()
	procs, kafka, _, _ := serveClusterJoins(t, n, extra...)
	return procs, kafka
}

// serveClusterJoins is serveCluster that also returns the join list and
// the data directories.
func serveClusterJoins(t *testing.T, n int, extra ...string) ([]*harness.Process, []string, []string, []string) {
	t.Helper()
	ports := harness.FreePorts(t, 2*n)
	var joins, kafka []string
	for i := range n {
		joins = append(joins, harness.Addr(ports[2*i]))
		kafka = append(kafka, harness.Addr(ports[2*i+1]))
	}
	procs := make([]*harness.Process, n)
	dirs := make([]string, n)
	for i := range n {
		dirs[i] = t.TempDir()
		p, err := harness.Spawn(t, clusterNode(i+1, n, dirs[i], kafka[i], joins[i], joins, extra...))
		if err != nil {
			t.Fatal(err)
		}
		procs[i] = p
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for _, p := range procs {
		if err := p.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return procs, kafka, joins, dirs
}

// clusterNode is the harness options of node id of an n-node cluster.
func clusterNode(id, n int, dir, kafka, gossip string, joins []string, extra ...string) harness.Options {
	var voters []string
	for i := range n {
		voters = append(voters, fmt.Sprint(i+1))
	}
	args := append([]string{"serve",
		"--node-id", fmt.Sprint(id), "--data", dir, "--listen", kafka,
		"--gossip-addr", gossip, "--join", strings.Join(joins, ","), "--voters", strings.Join(voters, ","),
		"--gossip-profile", "relaxed"}, extra...)
	return harness.Options{Args: args, Name: fmt.Sprintf("weir-node-%d", id), ReadyLine: `weir serving node \d+ on`}
}

// TestServeClusterNodeIDs: a second live process claiming a node id is
// refused with a clear error, and a node killed and restarted on other
// ports (its data directory kept) is accepted and advertised there.
func TestServeClusterNodeIDs(t *testing.T) {
	procs, kafka, joins, dirs := serveClusterJoins(t, 3)
	ports := harness.FreePorts(t, 2)
	dup := clusterNode(2, 3, t.TempDir(), harness.Addr(ports[0]), harness.Addr(ports[1]), joins)
	dup.Name = "weir-node-2-duplicate"
	stdout, stderr, code := harness.Run(t, dup)
	if code == 0 || !strings.Contains(stderr, "another live process is registered as node 2") {
		t.Fatalf("a second node 2: exit %d, want a refusal naming the live process\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	if err := procs[2].Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = procs[2].Wait()
	ports = harness.FreePorts(t, 2)
	moved := clusterNode(3, 3, dirs[2], harness.Addr(ports[0]), harness.Addr(ports[1]), joins)
	p := harness.Start(t, moved)
	_ = p
	waitUntil(t, 30*time.Second, "kcat -L lists broker 3 at its new address", func() bool {
		out := kcatMaybe(t, "-L", "-b", kafka[0])
		return strings.Contains(out, fmt.Sprintf("broker 3 at %s", harness.Addr(ports[0])))
	})
}

// TestServeClusterOfThree: three `weir serve` processes joined by gossip
// form one cluster; kcat -L lists the three brokers, and a topic with
// RF=3 shows a leader, three replicas and a full ISR for every partition,
// in kcat's listing and in `weir topics describe`.
func TestServeClusterOfThree(t *testing.T) {
	_, err := exec.LookPath("kcat")
	harness.NeedClient(t, "kcat", err)
	_, kafka := serveCluster(t, 3)
	boot := strings.Join(kafka, ",")

	var out string
	waitUntil(t, 30*time.Second, "kcat -L lists 3 brokers", func() bool {
		out = kcatMaybe(t, "-L", "-b", kafka[0])
		return strings.Contains(out, " 3 brokers:")
	})
	for i, addr := range kafka {
		if !strings.Contains(out, fmt.Sprintf("broker %d at %s", i+1, addr)) {
			t.Errorf("kcat -L does not list broker %d at %s:\n%s", i+1, addr, out)
		}
	}

	stdout, stderr, code := harness.Run(t, harness.Options{Args: []string{"topics", "create", "--topic", "replicated",
		"--partitions", "6", "--replication-factor", "3", "--bootstrap-server", boot}})
	if code != 0 {
		t.Fatalf("topics create: exit %d\n%s%s", code, stdout, stderr)
	}
	// kcat: "partition 0, leader 2, replicas: 2,3,1, isrs: 2,3,1"
	partRE := regexp.MustCompile(`partition (\d+), leader (\d+), replicas: ([\d,]+), isrs: ([\d,]+)`)
	waitUntil(t, 30*time.Second, "kcat -L shows 6 partitions with 3 replicas and 3 in-sync", func() bool {
		out = kcatMaybe(t, "-L", "-b", kafka[1], "-t", "replicated")
		m := partRE.FindAllStringSubmatch(out, -1)
		if len(m) != 6 {
			return false
		}
		for _, p := range m {
			if len(strings.Split(p[3], ",")) != 3 || len(strings.Split(p[4], ",")) != 3 {
				return false
			}
		}
		return true
	})

	stdout, stderr, code = harness.Run(t, harness.Options{Args: []string{"topics", "describe", "--topic", "replicated", "--bootstrap-server", kafka[2]}})
	if code != 0 {
		t.Fatalf("topics describe: exit %d\n%s%s", code, stdout, stderr)
	}
	descRE := regexp.MustCompile(`Partition: (\d+)\tLeader: ([123])\tReplicas: ([123]),([123]),([123])\tIsr: ([123]),([123]),([123])`)
	if got := len(descRE.FindAllString(stdout, -1)); got != 6 {
		t.Errorf("weir topics describe: %d partitions with a leader, 3 replicas and 3 in the ISR, want 6:\n%s", got, stdout)
	}
}

// kcatMaybe runs kcat and returns its stdout, or "" if it failed (the
// cluster may still be forming).
func kcatMaybe(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "kcat", args...).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// waitUntil polls cond every 100 ms until it holds or timeout passes.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
