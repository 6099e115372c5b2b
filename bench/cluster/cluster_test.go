package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirmq/weir/internal/harness"
)

func TestMain(m *testing.M) {
	if handled, err := ServeNATSChild(os.Stdin, os.Stdout); handled {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	harness.Main(m)
}

// smallConfig is every scenario at its smallest useful size: 6 partitions,
// 1 kill and 1 stop (weir bench failover's tests kill more), one NATS
// kill, one short throughput repetition, 3 x 10 partitions at scale.
func smallConfig(t *testing.T) Config {
	cfg := DefaultConfig()
	cfg.WeirPath = harness.MustBuildWeir(t)
	cfg.TempDir = t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg.NATSExec = []string{self, "-test.run=^$"}
	cfg.Partitions = 6
	cfg.Kills, cfg.Stops, cfg.NATSKills = 1, 1, 1
	cfg.Settle = 0
	// A client's request in flight to a frozen leader waits for the
	// client's own timeout (20-60 s at the defaults): the test checks
	// only that leadership moves and the node comes back.
	cfg.FrozenTimeout = 2 * time.Second
	cfg.ThroughputReps = 1
	cfg.ThroughputRecords, cfg.NATSRecords = 20_000, 10_000
	cfg.ScaleTopics, cfg.ScalePartitions = 3, 10
	cfg.IdleWindow, cfg.ScaleSettle = time.Second, 0
	// A returning broker gets its leaderships back after one to two
	// leader.imbalance.check.interval.seconds; 1 s instead of the
	// default 10 s keeps each round's wait for the rebalance short.
	props := filepath.Join(cfg.TempDir, "server.properties")
	if err := os.WriteFile(props, []byte("leader.imbalance.check.interval.seconds=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.WeirArgs = append(cfg.WeirArgs, "--config", props)
	if testing.Verbose() {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return cfg
}

// TestRunSmall runs every scenario at its smallest size against real
// `weir serve` processes and checks that each measured what it should: a
// leadership move and a stall for every producer in every round, no
// partition left without acknowledgements, throughput for every target,
// and every scale step. It asserts no time against a goal (the machine is
// shared); the report's tables must be there.
func TestRunSmall(t *testing.T) {
	cfg := smallConfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Run(ctx, cfg)
	if res != nil {
		var b strings.Builder
		if err := res.WriteMarkdown(&b); err != nil {
			t.Fatal(err)
		}
		t.Logf("report:\n%s", b.String())
	}
	if err != nil {
		t.Fatal(err)
	}

	f := res.Failover
	if f == nil || len(f.Rounds) != cfg.Kills+cfg.Stops {
		t.Fatalf("failover rounds: %+v", f)
	}
	wantClients := 1
	if f.RdkafkaSkipped == "" {
		wantClients = 2
	} else {
		t.Logf("librdkafka skipped: %s", f.RdkafkaSkipped)
	}
	for i, r := range f.Rounds {
		if r.Led == 0 || r.Leadership < 0 || r.Rejoin < 0 {
			t.Errorf("round %d: led %d, leadership %v, rejoin %v", i+1, r.Led, r.Leadership, r.Rejoin)
		}
		if len(r.Stalls) != wantClients {
			t.Errorf("round %d: %d producers measured, want %d", i+1, len(r.Stalls), wantClients)
		}
		for _, s := range r.Stalls {
			// A stall is measured for every producer; it may be none
			// (no partition without acknowledgements for 100 ms) when
			// the leaderships moved within a few send periods, as they
			// do once the survivors see the killed node's connections
			// close. A stall counted on a partition has a length.
			if s.Longest < 0 || (s.Stalled > 0 && s.Longest <= 0) {
				t.Errorf("round %d: %s: %+v", i+1, s.Client, s)
			}
		}
		if r.Signal == "SIGSTOP" {
			continue // producers may still wait on the frozen node
		}
		if len(r.Problems) > 0 {
			t.Errorf("round %d (%s of node %d): %v", i+1, r.Signal, r.Victim, r.Problems)
		}
		for _, s := range r.Stalls {
			if len(s.Stuck) > 0 {
				t.Errorf("round %d: %s: partitions %v never acknowledged again", i+1, s.Client, s.Stuck)
			}
		}
		if len(r.FranzMetadata) == 0 && r.Stalls[0].Longest > time.Second {
			t.Errorf("round %d: franz-go stalled %v without asking for Metadata", i+1, r.Stalls[0].Longest)
		}
	}
	for _, c := range f.Clients {
		if c.Acked == 0 || c.Failed != 0 {
			t.Errorf("producer %s: %+v", c.Client, c)
		}
	}

	tp := res.Throughput
	if tp == nil {
		t.Fatal("no throughput result")
	}
	seen := map[string]bool{}
	for _, r := range tp.Runs {
		if r.MiBps <= 0 {
			t.Errorf("throughput run %+v", r)
		}
		seen[r.Target] = true
	}
	for _, target := range []string{TargetAllRF3, TargetOneRF1, TargetNATS} {
		if !seen[target] {
			t.Errorf("no throughput run of %s", target)
		}
	}

	nf := res.NATSFailover
	if nf == nil || len(nf.Rounds) != cfg.NATSKills {
		t.Fatalf("NATS failover: %+v", nf)
	}
	for _, r := range nf.Rounds {
		if r.Election < 0 || r.Stall <= 0 || r.Stuck {
			t.Errorf("NATS round %+v", r)
		}
	}

	s := res.Scale
	if s == nil {
		t.Fatal("no scale result")
	}
	if len(s.Problems) > 0 {
		t.Errorf("scale: %v", s.Problems)
	}
	for name, d := range map[string]time.Duration{"created": s.Created, "in sync": s.CreatedInSync, "moved": s.Moved,
		"rejoin": s.Rejoin, "cold led": s.ColdLed, "cold writable": s.ColdWritable, "cold in sync": s.ColdInSync} {
		if d < 0 {
			t.Errorf("scale: %s not measured", name)
		}
	}
	if len(s.RSS) != cfg.Nodes || len(s.IdleCPU) != cfg.Nodes || len(s.RSSAfterCold) != cfg.Nodes || s.Led == 0 {
		t.Errorf("scale: %+v", s)
	}
}

// TestStallIn checks the ack log's stall arithmetic on a hand-made log.
func TestStallIn(t *testing.T) {
	base := time.Unix(1000, 0)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	l := newAckLog(3, 50*time.Millisecond)
	for ms := 0; ms <= 1000; ms += 10 {
		l.ack(0, at(ms)) // steady: no gaps
		if ms < 300 || ms >= 900 {
			l.ack(1, at(ms)) // 300 ms .. 900 ms: a 610 ms gap
		}
		if ms < 400 {
			l.ack(2, at(ms)) // stuck from 390 ms on
		}
	}
	s := l.stallIn(at(400), at(1000), 100*time.Millisecond)
	if s.longest != 610*time.Millisecond || s.stalled != 2 || len(s.stuck) != 1 || s.stuck[0] != 2 {
		t.Errorf("stallIn over the failure: %+v", s)
	}
	// A window after the gap sees none of it; partition 2 is still stuck.
	s = l.stallIn(at(950), at(1000), 100*time.Millisecond)
	if s.longest != 610*time.Millisecond || len(s.stuck) != 1 {
		t.Errorf("stallIn after the gap: %+v", s)
	}
	if !l.ackedAllSince(at(-1)) || l.ackedAllSince(at(500)) {
		t.Error("ackedAllSince")
	}
}

// TestLineTime reads the time of weir's slog lines.
func TestLineTime(t *testing.T) {
	got, ok := lineTime(`time=2026-12-02T04:20:33.558Z level=INFO msg="membership: member failed" node=3`)
	want := time.Date(2026, 12, 2, 4, 20, 33, 558e6, time.UTC)
	if !ok || !got.Equal(want) {
		t.Errorf("lineTime = %v, %v; want %v", got, ok, want)
	}
	if _, ok := lineTime("weir serving node 1 on 127.0.0.1:9092"); ok {
		t.Error("lineTime read a line without time=")
	}
}
