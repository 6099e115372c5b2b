package chaos

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// uncleanRecords is how many records each phase of TestUncleanElectionLoss
// writes to each topic.
const uncleanRecords = 100

// TestUncleanElectionLoss is issue 10's "what it must show" 3 (seed 003,
// scenario four; Kafka's UncleanLeaderElectionTest): a deterministic loss
// the checker must report exactly. Two topics of one partition on the
// same replicas [3 4 5], min.insync.replicas=1, one with
// unclean.leader.election.enable=true and one without; the brokers shrink
// an ISR after 2 s (replica.lag.time.max.ms).
//
//  1. "first": records written with acks=all while the ISR is full.
//  2. Both followers (4, 5) frozen with SIGSTOP until the ISR is [3].
//  3. "second": records written with acks=1, held by node 3 only.
//  4. Node 3 SIGKILLed, node 4 resumed.
//
// With unclean election, node 4 becomes leader; "third" records are
// written; the checker reports exactly the "second" records lost. Without,
// the partition stays leaderless (produces fail), nothing is lost, and
// once node 3 is back it leads again with every record. (KIP-966: fencing
// node 3, the last ISR member, empties the ISR and makes it the ELR; node
// 4 is in neither, its fetches stopped at the "first" records, and may win
// only an unclean election. Node 3 comes back from a SIGKILL, an unclean
// shutdown, so it leaves the ELR for the last known ELR, whose members are
// elected once ISR and ELR are empty.)
//
// Five nodes, because every node is a metadata voter: with two frozen the
// other three keep a quorum, so the ISR can shrink (with three nodes it
// could not). Between the kill and the resume only two voters run; the
// quorum returns with node 4.
func TestUncleanElectionLoss(t *testing.T) {
	const leader, resumed, frozen = 3, 4, 5
	c := StartCluster(t, 5, Options{Configs: map[string]string{"replica.lag.time.max.ms": "2000"}})
	const on, off = "unclean-on", "unclean-off"
	for topic, unclean := range map[string]string{on: "true", off: "false"} {
		c.CreateTopic(TopicSpec{Name: topic, Assignment: [][]int32{{leader, resumed, frozen}},
			Configs: map[string]string{"unclean.leader.election.enable": unclean, "min.insync.replicas": "1"}})
	}
	ledgers := map[string]*Ledger{on: NewLedger(), off: NewLedger()}
	for _, topic := range []string{on, off} {
		c.WaitFor(30*time.Second, topic+" led by node 3", func() (bool, string) {
			return c.Settled(topic, func(p Partition) (bool, string) { return p.Leader == leader, "" })
		})
		first := newSyncProducer(t, "first", ledgers[topic], c.Bootstrap(), topic, kgo.RecordDeliveryTimeout(time.Minute))
		if acked, failed, errs := first.produce(uncleanRecords, 1); failed > 0 {
			t.Fatalf("%s: first records: %d acknowledged, %d failed: %v", topic, acked, failed, errs[0])
		}
	}

	c.Pause(resumed)
	c.Pause(frozen)
	start := time.Now()
	for _, topic := range []string{on, off} {
		c.WaitFor(60*time.Second, "the ISR of "+topic+" shrunk to the leader", func() (bool, string) {
			return c.Settled(topic, func(p Partition) (bool, string) {
				return slices.Equal(p.ISR, []int32{leader}), ""
			})
		})
	}
	t.Logf("followers %d and %d frozen: ISR [%d] after %v", resumed, frozen, leader, time.Since(start).Round(time.Millisecond))
	second := map[string][]string{}
	for _, topic := range []string{on, off} {
		p := newSyncProducer(t, "second", ledgers[topic], c.LiveAddrs(), topic,
			kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.RecordDeliveryTimeout(time.Minute))
		if acked, failed, errs := p.produce(uncleanRecords, 1); failed > 0 {
			t.Fatalf("%s: acks=1 records: %d acknowledged, %d failed: %v", topic, acked, failed, errs[0])
		}
		for i := range int64(uncleanRecords) {
			second[topic] = append(second[topic], Value("second", i))
		}
	}

	c.Kill(leader)
	c.Resume(resumed)
	start = time.Now()
	c.WaitFor(90*time.Second, on+": node 4 elected, unclean", func() (bool, string) {
		return c.Settled(on, func(p Partition) (bool, string) {
			return p.Leader == resumed && slices.Equal(p.ISR, []int32{resumed}), ""
		})
	})
	t.Logf("leader %d killed, follower %d resumed: %s led by %d after %v", leader, resumed, on, resumed, time.Since(start).Round(time.Millisecond))

	// Unclean election disabled: leaderless, on every live node, and
	// produces fail (in bounded time) while it stays so. The ISR is empty:
	// fenced, its last member moved to the ELR (which Metadata does not
	// show).
	leaderless := func() {
		t.Helper()
		v, err := c.View(context.Background(), off)
		if err != nil {
			t.Fatal(err)
		}
		for id, ps := range v {
			if p := ps[0]; p.Leader != -1 || len(p.ISR) != 0 {
				t.Errorf("%s on node %d: %v, want no leader and an empty ISR", off, id, p)
			}
		}
	}
	leaderless()
	probe := newSyncProducer(t, "probe", ledgers[off], c.LiveAddrs(), off, kgo.DisableIdempotentWrite(),
		kgo.ProduceRequestTimeout(outageRequestTimeout), kgo.RecordDeliveryTimeout(outageDeliveryTimeout))
	if acked, _, _ := probe.produce(5, 1); acked > 0 {
		t.Errorf("%s: %d records acknowledged while it has no leader", off, acked)
	}
	leaderless()

	third := newSyncProducer(t, "third", ledgers[on], c.LiveAddrs(), on, kgo.RecordDeliveryTimeout(time.Minute))
	if acked, failed, errs := third.produce(uncleanRecords, 1); failed > 0 {
		t.Fatalf("%s: third records: %d acknowledged, %d failed: %v", on, acked, failed, errs[0])
	}
	checkUnclean(t, c, on, ledgers[on], second[on], "after the unclean election")

	// The old leader returns: it leads the clean topic again, with every
	// record, and follows the unclean one, truncated.
	c.Restart(leader)
	c.WaitFor(60*time.Second, off+" led by node 3 again", func() (bool, string) {
		return c.Settled(off, func(p Partition) (bool, string) { return p.Leader == leader, "" })
	})
	checkUnclean(t, c, off, ledgers[off], nil, "node 3 back")
	c.WaitInISR(on, leader, 60*time.Second)
	checkUnclean(t, c, on, ledgers[on], second[on], "node 3 back, following")

	c.Resume(frozen)
	c.WaitFullISR(on, 60*time.Second)
	c.WaitFullISR(off, 60*time.Second)
	checkUnclean(t, c, on, ledgers[on], second[on], "every replica back")
	checkUnclean(t, c, off, ledgers[off], nil, "every replica back")
}

// checkUnclean reads topic and checks it against ledger: exactly the
// values in lost are lost, and nothing else is wrong.
func checkUnclean(t *testing.T, c *Cluster, topic string, ledger *Ledger, lost []string, when string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	log, err := ReadAll(ctx, c.LiveAddrs(), topic)
	if err != nil {
		t.Fatalf("%s, %s: %v", topic, when, err)
	}
	rep := Check(ledger.Acks(), log)
	got := rep.LostValues()
	rest := rep
	rest.Lost = nil
	switch {
	case !slices.Equal(got, lost):
		t.Errorf("%s, %s: lost %d records %s, want exactly the %d acks=1 records written after the ISR shrank %s; %v",
			topic, when, len(got), shortList(got), len(lost), shortList(lost), rep)
	case !rest.OK():
		t.Errorf("%s, %s: %v", topic, when, rep)
	default:
		t.Logf("%s, %s: %v; lost exactly the %d expected", topic, when, rep, len(lost))
	}
}

// shortList abbreviates a long list of values for a message.
func shortList(vs []string) string {
	if len(vs) <= 6 {
		return fmt.Sprint(vs)
	}
	return fmt.Sprintf("[%s %s %s ... %s] (%d)", vs[0], vs[1], vs[2], vs[len(vs)-1], len(vs))
}
