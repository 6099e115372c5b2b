package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestLearnerKilled: three voters and a learner (node 4, outside
// --voters), a topic with RF=4 so the learner holds every partition. An
// idempotent acks=all producer writes throughout; the learner is
// SIGKILLed, the partitions it led move, it restarts, catches up on the
// metadata log and rejoins every ISR. Every acknowledged record is read
// back once, in order.
func TestLearnerKilled(t *testing.T) {
	c := StartCluster(t, 4, Options{Learners: 1})
	const topic, learner = "learner", int32(4)
	c.CreateTopic(TopicSpec{Name: topic, Partitions: 4, ReplicationFactor: 4,
		Configs: map[string]string{"min.insync.replicas": "2"}})
	c.WaitInISR(topic, learner, 60*time.Second)

	ledger := NewLedger()
	franz := StartFranz(t, ledger, ProducerOptions{Name: "franz", Topic: topic, Seeds: c.Bootstrap()})
	progress := func(what string) {
		t.Helper()
		before := franz.Acked()
		c.WaitFor(60*time.Second, what, func() (bool, string) {
			n := franz.Acked() - before
			return n >= progressRecords, fmt.Sprintf("+%d acknowledged (%d failed: %v)", n, ledger.Failed(), ledger.FailedErrors(3))
		})
	}
	progress("the producer acknowledging")
	c.Kill(learner)
	c.WaitLeaders(topic, 60*time.Second)
	progress("the producer acknowledging without the learner")
	c.Restart(learner)
	c.WaitInISR(topic, learner, 90*time.Second)
	progress("the producer acknowledging with the learner back")
	franz.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ends, err := EndOffsets(ctx, c.Bootstrap(), topic)
	if err != nil {
		t.Fatal(err)
	}
	log, err := ReadUpTo(ctx, []string{c.Addr(learner)}, topic, ends)
	if err != nil {
		t.Fatal(err)
	}
	if rep := Check(ledger.Acks(), log); !rep.OK() {
		t.Errorf("%v", rep)
	}
}
