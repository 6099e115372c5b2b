package failover

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/weirmq/weir/bench/cluster"
)

// TestMain lets this test binary, re-executed, serve one NATS server of
// the reference cluster (Config.NATSExec).
func TestMain(m *testing.M) {
	if handled, err := cluster.ServeNATSChild(os.Stdin, os.Stdout); handled {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// natsTestConfig is a small NATS reference run: 2 partitions, 300
// records at 300/s a round.
func natsTestConfig(t *testing.T, faults ...Fault) Config {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.NATSExec = []string{self, "-test.run=^$"}
	cfg.TempDir = t.TempDir()
	cfg.Partitions, cfg.Records, cfg.Rate, cfg.Rounds = 2, 300, 300, 2
	cfg.Faults = faults
	cfg.DrainQuiet, cfg.RoundTimeout = 3*time.Second, 20*time.Second
	return cfg
}

// TestNATSLeaderKills runs the NATS reference alone: 2 rounds in which
// the server leading the stream is SIGKILLed. JetStream's R3 pub ack
// (a quorum of 2 of 3) must not lose an acknowledged publish to one
// SIGKILL; the rounds must acknowledge records and appear in the table
// and the JSON, and a fault that does not apply must be skipped. It
// asserts no time (it takes about 25 s: JetStream needs 5 to 8 s to
// replace a killed stream leader).
func TestNATSLeaderKills(t *testing.T) {
	cfg := natsTestConfig(t, FaultLeader, Fault("partition"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a bound, not a wait
	defer cancel()
	n, err := runNATS(ctx, cfg)
	if err != nil {
		t.Fatalf("NATS reference: %v", err)
	}
	if len(n.Scenarios) != 1 || len(n.Scenarios[0].Rounds) != 2 {
		t.Fatalf("want one leader scenario of 2 rounds: %+v", n.Scenarios)
	}
	if len(n.Skipped) != 1 || n.Skipped[0].Fault != "partition" {
		t.Errorf("skipped %+v, want the partition fault", n.Skipped)
	}
	for _, rd := range n.Scenarios[0].Rounds {
		t.Logf("round %d: victims %v, sent %d, acked %d, failed %d, lost %d, missed %d, dup %d, reord %d, moved %d, leader %.0f ms, stall %.0f ms, consumer stall %.0f ms, errors %v, problems %v",
			rd.Round, rd.Victims, rd.Sent, rd.Acked, rd.Failed, rd.Lost, rd.ConsumerMissed, rd.Duplicated, rd.Reordered, rd.Moved,
			rd.LeaderElectedMs, rd.MaxProduceStallMs, rd.MaxConsumerStallMs, rd.ClientErrors, rd.Problems)
		if rd.Sent != cfg.Records || rd.Acked == 0 {
			t.Errorf("round %d: sent %d, acked %d", rd.Round, rd.Sent, rd.Acked)
		}
		// A retry after a dropped connection of a publish that was stored
		// after all is a duplicate (and "moved": acked at the retry's
		// place, read first at the original's): counted, not faulted.
		if rd.Lost != 0 {
			t.Errorf("round %d: lost %d %v: an acknowledged R3 publish must be in the stream", rd.Round, rd.Lost, rd.LostSeqs)
		}
		if len(rd.Victims) != 1 {
			t.Errorf("round %d: victims %v, want one server", rd.Round, rd.Victims)
		}
	}
	res := &Result{Config: cfg, Started: time.Now(), NATS: n}
	var table, js bytes.Buffer
	if err := res.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(table.String(), "nats:leader"); got < 3 { // 2 rows and the summary
		t.Errorf("table has %d nats:leader lines:\n%s", got, table.String())
	}
	for _, want := range []string{`"nats": {`, `"max_consumer_stall_ms"`, `"leader_elected_ms"`, `"p99_send_ms"`, `"skipped"`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
}
