package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterLifecycle drives one node through every fault the harness
// has (SIGTERM, SIGSTOP/SIGCONT, SIGKILL, restarts) and checks that it
// comes back at its address with its data.
func TestClusterLifecycle(t *testing.T) {
	c := StartCluster(t, 1, Options{})
	const topic = "lifecycle"
	c.CreateTopic(TopicSpec{Name: topic, Partitions: 2, ReplicationFactor: 1})
	ledger := NewLedger()
	p := newSyncProducer(t, "life", ledger, c.Bootstrap(), topic, kgo.RecordDeliveryTimeout(time.Minute))
	produce := func(when string) {
		t.Helper()
		if acked, failed, errs := p.produce(20, 2); failed > 0 {
			t.Fatalf("%s: %d acknowledged, %d failed: %v", when, acked, failed, errs[0])
		}
	}
	produce("first start")
	addr := c.Addr(1)

	if code := c.Stop(1); code != 0 {
		t.Errorf("SIGTERM: exit status %d, want 0", code)
	}
	if s := c.State(1); s != Down || len(c.Live()) != 0 {
		t.Errorf("after Stop: state %v, live %v", s, c.Live())
	}
	c.Restart(1)
	c.WaitLeaders(topic, 30*time.Second)
	produce("after a controlled restart")

	c.Pause(1)
	if s := c.State(1); s != Paused || len(c.Live()) != 0 {
		t.Errorf("after Pause: state %v, live %v", s, c.Live())
	}
	c.Resume(1)
	produce("after a pause")

	c.Kill(1)
	c.Restart(1)
	if c.Addr(1) != addr {
		t.Errorf("address after restarts %s, first %s", c.Addr(1), addr)
	}
	c.WaitLeaders(topic, 30*time.Second)
	produce("after SIGKILL and a restart")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	log, err := ReadAll(ctx, c.Bootstrap(), topic)
	if err != nil {
		t.Fatal(err)
	}
	if rep := Check(ledger.Acks(), log); !rep.OK() || rep.Acked != 80 {
		t.Errorf("want 80 records, none lost: %v", rep)
	}
}
