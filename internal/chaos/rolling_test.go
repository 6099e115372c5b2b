package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// rollingPassesEnv sets how many times TestRollingRestart restarts every
// node (1 by default, more in a long run).
const rollingPassesEnv = "WEIR_CHAOS_ROLLING_PASSES"

// TestRollingRestart is issue 10's "what it must show" 6 with real
// processes: three `weir serve` nodes, a topic with RF=3 and
// min.insync.replicas=2; under load from an idempotent franz-go producer
// and a confluent-kafka producer (acks=all) and a franz-go acks=1
// producer, each node in turn gets SIGTERM (a controlled shutdown: it
// hands its leaderships over and leaves the ISRs), must exit 0, is
// started again, and the next one waits until no partition is
// under-replicated. Then every acknowledged record, acks=1 ones
// included, must be read back at its acknowledged offset; the idempotent
// producers' records once each, in order. (A planned move hands a
// partition only to a replica holding every record the old leader
// acknowledged, so acks=1 records survive it too; Apache Kafka loses
// them: KAFKA-20554.)
func TestRollingRestart(t *testing.T) {
	passes := envInt(t, rollingPassesEnv, 1)
	NeedRdkafka(t)
	c := StartCluster(t, 3, Options{Configs: map[string]string{"offsets.topic.num.partitions": "3"}})
	const topic = "rolling"
	c.CreateTopic(TopicSpec{Name: topic, Partitions: 6, ReplicationFactor: 3,
		Configs: map[string]string{"min.insync.replicas": "2"}})

	ledger := NewLedger()
	franz := StartFranz(t, ledger, ProducerOptions{Name: "franz", Topic: topic, Seeds: c.Bootstrap()})
	rdk := StartRdkafka(t, ledger, ProducerOptions{Name: "rdkafka", Topic: topic, Seeds: c.Bootstrap()}, true)
	// acks=1 cannot be idempotent: its retries may write a record twice
	// (a request written whose answer was lost), so it is checked for
	// loss only.
	one := StartFranz(t, ledger, ProducerOptions{Name: "acks1", Topic: topic, Seeds: c.Bootstrap()},
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())

	for pass := 1; pass <= passes; pass++ {
		for _, id := range c.IDs() {
			before := [3]int64{franz.Acked(), rdk.Acked(), one.Acked()}
			start := time.Now()
			if code := c.Stop(id); code != 0 {
				t.Errorf("pass %d: node %d: SIGTERM: exit status %d, want 0", pass, id, code)
			}
			stopped := time.Since(start)
			c.WaitLeaders(topic, 60*time.Second)
			c.Restart(id)
			c.WaitFullISR(topic, 90*time.Second)
			c.WaitFor(60*time.Second, "every producer acknowledging again", func() (bool, string) {
				f, r, o := franz.Acked()-before[0], rdk.Acked()-before[1], one.Acked()-before[2]
				return f >= progressRecords && r >= progressRecords && o >= progressRecords,
					fmt.Sprintf("franz-go +%d, confluent-kafka +%d, acks=1 +%d acknowledged (%d failed: %v)",
						f, r, o, ledger.Failed(), ledger.FailedErrors(3))
			})
			t.Logf("pass %d: node %d stopped in %v, back with a full ISR after %v; acknowledged %v, %d failed",
				pass, id, stopped.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), ledger.Count(), ledger.Failed())
		}
	}

	franz.Stop()
	one.Stop()
	if err := rdk.Stop(); err != nil {
		t.Error(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	log, err := ReadAll(ctx, c.Bootstrap(), topic)
	if err != nil {
		t.Fatal(err)
	}
	full := Check(ledger.Acks(), log)
	rep := atLeastOnce(full, "acks1")
	if !rep.OK() {
		t.Errorf("after %d passes: %v", passes, rep)
	} else {
		t.Logf("after %d passes: %v (acks=1 records written twice: %d)", passes, rep, len(full.Duplicated)-len(rep.Duplicated))
	}
	if ledger.Failed() > 0 {
		t.Logf("failed sends (allowed, not acknowledged): %d, e.g. %v", ledger.Failed(), ledger.FailedErrors(3))
	}
}
