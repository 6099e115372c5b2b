package chaos

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"
)

// progressRecords is how many new acknowledgements each producer must
// get after a round before the next one starts: they keep producing
// through every failover.
const progressRecords = 50

// TestKillLeaderRounds is issue 10's "what it must show" 2 (Kafka's
// replication_test hard_bounce): three nodes, a topic with RF=3,
// min.insync.replicas=2 and 6 partitions; an idempotent franz-go producer
// and a confluent-kafka producer produce continuously with acks=all; each
// round SIGKILLs the node leading the most partitions, waits for new
// leaders, restarts it and waits until it is back in every ISR. Then
// every acknowledged record must be read back once, at its acknowledged
// offset, in order per partition. A consumer group committing after each
// poll runs throughout: after every round the committed offsets
// (OffsetFetch) must not have moved back nor lost an acknowledged commit,
// and the group reads every acknowledged record. At least one round kills
// the group's coordinator.
func TestKillLeaderRounds(t *testing.T) {
	rounds := envInt(t, roundsEnv, 3)
	NeedRdkafka(t)
	c := StartCluster(t, 3, Options{Configs: map[string]string{"offsets.topic.num.partitions": "6"}})
	const topic, group = "rounds", "rounds-group"
	c.CreateTopic(TopicSpec{Name: topic, Partitions: 6, ReplicationFactor: 3,
		Configs: map[string]string{"min.insync.replicas": "2"}})

	ledger := NewLedger()
	franz := StartFranz(t, ledger, ProducerOptions{Name: "franz", Topic: topic, Seeds: c.Bootstrap()})
	rdk := StartRdkafka(t, ledger, ProducerOptions{Name: "rdkafka", Topic: topic, Seeds: c.Bootstrap()}, true)
	gc := StartGroupConsumer(t, c.Bootstrap(), group, topic)
	c.WaitFor(60*time.Second, "the group's first commit", func() (bool, string) {
		return len(gc.Committed()) > 0, fmt.Sprintf("commit errors %v", gc.CommitErrors())
	})

	prev := map[int32]int64{}
	checkCommits := func(round int) {
		t.Helper()
		acked := gc.Committed()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		fetched, err := FetchCommitted(ctx, c.LiveAddrs(), group, topic)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for _, v := range CommitViolations(prev, acked, fetched) {
			t.Errorf("round %d: group %s: %s", round, group, v)
		}
		prev = fetched
	}

	coordinatorKilled := false
	for round := 1; round <= rounds || !coordinatorKilled; round++ {
		victim := c.MostLeader(topic)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		coord, err := Coordinator(ctx, c.LiveAddrs(), group)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if round > rounds {
			victim = coord // one more round, for the coordinator
		}
		coordinatorKilled = coordinatorKilled || coord == victim
		franzBefore, rdkBefore := franz.Acked(), rdk.Acked()
		start := time.Now()
		c.Kill(victim)
		c.WaitLeaders(topic, 60*time.Second)
		led := time.Since(start)
		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		leaders, err := c.Leaders(ctx, topic)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for p, l := range leaders {
			if l == victim || l < 0 {
				t.Errorf("round %d: kadm shows p%d led by %d after node %d was killed and new leaders were seen", round, p, l, victim)
			}
		}
		c.Restart(victim)
		c.WaitInISR(topic, victim, 90*time.Second)
		c.WaitFor(60*time.Second, "both producers acknowledging again", func() (bool, string) {
			f, r := franz.Acked()-franzBefore, rdk.Acked()-rdkBefore
			return f >= progressRecords && r >= progressRecords, fmt.Sprintf("franz-go +%d, confluent-kafka +%d acknowledged (%d failed: %v)",
				f, r, ledger.Failed(), ledger.FailedErrors(3))
		})
		checkCommits(round)
		t.Logf("round %d: killed node %d (coordinator %d), new leaders after %v, back in every ISR after %v; acknowledged %v, %d failed",
			round, victim, coord, led.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), ledger.Count(), ledger.Failed())
	}

	franz.Stop()
	if err := rdk.Stop(); err != nil {
		t.Error(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ends, err := EndOffsets(ctx, c.Bootstrap(), topic)
	if err != nil {
		t.Fatal(err)
	}
	log, err := ReadUpTo(ctx, c.Bootstrap(), topic, ends)
	if err != nil {
		t.Fatal(err)
	}
	acks := ledger.Acks()
	rep := Check(acks, log)
	if !rep.OK() {
		t.Errorf("after %d rounds: %v", rounds, rep)
	} else {
		t.Logf("after %d rounds: %v", rounds, rep)
	}
	if ledger.Failed() > 0 {
		t.Logf("failed sends (allowed, not acknowledged): %d, e.g. %v", ledger.Failed(), ledger.FailedErrors(3))
	}

	// The group reads on to the end, and its last commits hold.
	c.WaitFor(2*time.Minute, "the group committed up to the end offsets", func() (bool, string) {
		got := gc.Committed()
		for _, p := range slices.Sorted(maps.Keys(ends)) {
			if got[p] < ends[p] {
				return false, fmt.Sprintf("p%d committed %d of %d (commit errors %v)", p, got[p], ends[p], gc.CommitErrors())
			}
		}
		return true, ""
	})
	checkCommits(rounds + 1)
	gc.Stop()
	seen := gc.Seen()
	missed, again := 0, 0
	for _, a := range acks {
		switch n := seen[a.Value]; {
		case n == 0:
			if missed < reportLimit {
				t.Errorf("group %s never read %s (p%d@%d)", group, a.Value, a.Partition, a.Offset)
			}
			missed++
		case n > 1:
			again++
		}
	}
	if missed > 0 {
		t.Errorf("group %s never read %d acknowledged records", group, missed)
	}
	t.Logf("group %s read %d records, %d of them more than once (redelivery after a failover is allowed)", group, len(seen), again)
}
