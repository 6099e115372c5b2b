package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/weirmq/weir/internal/harness"
	"github.com/weirmq/weir/internal/netns"
)

// partitionRound is the part of a round's JSON the partition test reads.
type partitionRound struct {
	Victims         []int32  `json:"victims"`
	Sent            int      `json:"sent"`
	Acked           int      `json:"acked"`
	Lost            int      `json:"lost"`
	Duplicated      int      `json:"duplicated"`
	AckedByIsolated int      `json:"acked_by_isolated"`
	LeaderElectedMs float64  `json:"leader_elected_ms"`
	LostExamples    []uint32 `json:"lost_examples"`
	Problems        []string `json:"problems"`
}

// runPartitionBench runs `weir bench failover --fault partition` as a
// process at a small size on the relaxed profile and returns its rounds.
func runPartitionBench(t *testing.T, rounds string, flags ...string) []partitionRound {
	t.Helper()
	args := append([]string{"bench", "failover", "--fault", "partition", "--rounds", rounds, "--topics", "1", "--partitions", "6",
		"--records", "400", "--rate", "400", "--gossip-profile", "relaxed", "--drain-quiet", "3s",
		"--tmp", t.TempDir(), "--out", t.TempDir(), "--json"}, flags...)
	p, err := harness.Spawn(t, harness.Options{Args: args})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(3 * time.Minute): // a bound, not a wait: a round takes about 10 s
		_ = p.Kill()
		t.Fatalf("weir bench failover still running after 3 minutes; stderr:\n%s", p.Stderr())
	}
	if code, err := p.Wait(); code != 0 || err != nil {
		t.Fatalf("exit %d, %v; stderr:\n%s", code, err, p.Stderr())
	}
	var doc struct {
		Scenarios []struct {
			Fault  string           `json:"fault"`
			Rounds []partitionRound `json:"rounds"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal([]byte(p.Stdout()), &doc); err != nil {
		t.Fatalf("stdout is not the JSON: %v\n%s", err, p.Stdout())
	}
	if len(doc.Scenarios) != 1 || doc.Scenarios[0].Fault != "partition" {
		t.Fatalf("want one partition scenario:\n%s", p.Stdout())
	}
	return doc.Scenarios[0].Rounds
}

// TestBenchFailoverPartition is issue 11's partition scenario: the node
// leading the most partitions is cut from the other nodes, not from the
// clients, for 5 s in each of two rounds (each node in a network
// namespace of its own, the cut by nftables; needs root, skipped
// otherwise unless WEIR_REQUIRE_NETNS=1).
// With acks=all and min.insync.replicas=2 the isolated node acknowledges
// no write begun after the cut, and after the heal (the old leader
// truncating what it wrote alone) not one acknowledged record is lost;
// the producer is idempotent, so none is duplicated either (without
// idempotence a retry of a request the isolated leader had appended and
// a follower had fetched, unconfirmed, may duplicate: at least once). With acks=1 the loss the lease lets through is a figure,
// logged, not asserted. It asserts no time.
func TestBenchFailoverPartition(t *testing.T) {
	netns.Require(t)
	rounds := runPartitionBench(t, "2", "--acks", "all", "--idempotent")
	if len(rounds) != 2 {
		t.Fatalf("acks=all: %d rounds, want 2", len(rounds))
	}
	for i, rd := range rounds {
		t.Logf("acks=all round %d: victims %v, sent %d, acked %d, lost %d, acked_by_isolated %d, leader_elected_ms %v, problems %v",
			i+1, rd.Victims, rd.Sent, rd.Acked, rd.Lost, rd.AckedByIsolated, rd.LeaderElectedMs, rd.Problems)
		if len(rd.Victims) != 1 || rd.Sent != 400 || rd.Acked == 0 {
			t.Errorf("acks=all round %d: victims %v, sent %d, acked %d", i+1, rd.Victims, rd.Sent, rd.Acked)
		}
		if rd.Lost != 0 || rd.Duplicated != 0 {
			t.Errorf("acks=all round %d: %d acknowledged records lost (e.g. %v), %d duplicated", i+1, rd.Lost, rd.LostExamples, rd.Duplicated)
		}
		if rd.AckedByIsolated != 0 {
			t.Errorf("acks=all round %d: the isolated node acknowledged %d records written after the cut", i+1, rd.AckedByIsolated)
		}
	}
	one := runPartitionBench(t, "2", "--acks", "1")
	for i, rd := range one {
		t.Logf("acks=1 round %d: victims %v, sent %d, acked %d, lost %d, acked_by_isolated %d, leader_elected_ms %v (the lease's loss, a figure)",
			i+1, rd.Victims, rd.Sent, rd.Acked, rd.Lost, rd.AckedByIsolated, rd.LeaderElectedMs)
	}
}

// TestBenchFailoverPartitionNeedsNetns: where network namespaces are
// unusable (here: ip and nft not on the PATH), a run with the partition
// fault fails at once, before it starts a node, saying what is missing.
func TestBenchFailoverPartitionNeedsNetns(t *testing.T) {
	p, err := harness.Spawn(t, harness.Options{Env: []string{"PATH=" + t.TempDir()}, Args: []string{"bench", "failover",
		"--fault", "partition", "--rounds", "1", "--tmp", t.TempDir(), "--out", t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(time.Minute): // a bound: the run must end at once
		_ = p.Kill()
		t.Fatalf("still running after a minute; stderr:\n%s", p.Stderr())
	}
	code, _ := p.Wait()
	stderr := p.Stderr()
	for _, want := range []string{"partition fault needs network namespaces", "ip not found", "nft not found"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if code == 0 {
		t.Errorf("exit 0; stderr:\n%s", stderr)
	}
}
