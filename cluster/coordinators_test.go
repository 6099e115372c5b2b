package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// adminOf returns a kadm client of node n, closed at the end of the test.
func adminOf(t *testing.T, n *Node) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// TestCommittedOffsetsSurviveRestart commits offsets through a node, a
// consumer group's and an admin's, restarts the node on the same data
// directory and reads them back: the coordinator reloaded them from
// __consumer_offsets.
func TestCommittedOffsetsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	props := map[string]string{
		"listeners":                        "PLAINTEXT://127.0.0.1:0", // advertise the bound port
		"group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "100",
	}
	n, sys := testNode(t, dir, props)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := adminOf(t, n)
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}

	// A consumer group member consumes ten records and commits them.
	prod, err := kgo.NewClient(kgo.SeedBrokers(n.Addr().String()), kgo.DefaultProduceTopic("orders"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Partition: int32(i % 3), Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	prod.Close()
	cons, err := kgo.NewClient(kgo.SeedBrokers(n.Addr().String()), kgo.ConsumerGroup("readers"), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.SessionTimeout(time.Second),
		kgo.HeartbeatInterval(100*time.Millisecond), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for got := 0; got < 10; {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of 10: %v", got, err)
		}
		got += fs.NumRecords()
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	cons.Close()

	// An admin commit (generation -1) for another group.
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "orders", Partition: 1, At: 2, LeaderEpoch: -1, Metadata: "admin"})
	if resp, err := adm.CommitOffsets(ctx, "tools", offsets); err != nil || resp.Error() != nil {
		t.Fatalf("admin commit: %v %v", err, resp.Error())
	}
	stopNode(t, n, sys)

	n, sys = testNode(t, dir, props)
	defer stopNode(t, n, sys)
	adm = adminOf(t, n)
	readers, err := adm.FetchOffsets(ctx, "readers")
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[int32]int64{0: 4, 1: 3, 2: 3} {
		if o, ok := readers.Lookup("orders", p); !ok || o.At != want {
			t.Errorf("readers orders-%d after restart: %+v (found %v), want %d", p, o, ok, want)
		}
	}
	tools, err := adm.FetchOffsets(ctx, "tools")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := tools.Lookup("orders", 1); !ok || o.At != 2 || o.Metadata != "admin" {
		t.Errorf("tools orders-1 after restart: %+v (found %v), want 2 \"admin\"", o, ok)
	}
	ds, err := adm.DescribeGroups(ctx, "readers")
	if err != nil {
		t.Fatal(err)
	}
	if d := ds["readers"]; d.State != "Empty" || d.ProtocolType != "consumer" {
		t.Errorf("readers after restart: state %q protocol type %q, want Empty consumer", d.State, d.ProtocolType)
	}
}

// TestDeletedTopicOffsetsRemoved commits offsets for two topics, deletes
// one: its offsets go (and stay gone after a restart), the other's stay,
// so a topic created again under the name is not read from the deleted
// one's positions.
func TestDeletedTopicOffsetsRemoved(t *testing.T) {
	dir := t.TempDir()
	props := map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0"}
	n, sys := testNode(t, dir, props)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := adminOf(t, n)
	for _, topic := range []string{"gone", "kept"} {
		if _, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	offsets := kadm.Offsets{}
	for _, topic := range []string{"gone", "kept"} {
		for p := range int32(2) {
			offsets.Add(kadm.Offset{Topic: topic, Partition: p, At: 5 + int64(p), LeaderEpoch: -1})
		}
	}
	if resp, err := adm.CommitOffsets(ctx, "readers", offsets); err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}
	if _, err := adm.DeleteTopic(ctx, "gone"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	check := func(adm *kadm.Client, when string) {
		t.Helper()
		// The coordinator drops the offsets once it hears of the deletion;
		// wait for that, then check what is left.
		deadline := time.Now().Add(10 * time.Second)
		for {
			got, err := adm.FetchOffsets(ctx, "readers")
			if err != nil {
				t.Fatalf("%s: fetch offsets: %v", when, err)
			}
			var gone, kept int
			got.Each(func(o kadm.OffsetResponse) {
				switch {
				case o.Err != nil:
					t.Fatalf("%s: %s-%d: %v", when, o.Topic, o.Partition, o.Err)
				case o.Topic == "gone":
					gone++
				case o.Topic == "kept" && o.At == 5+int64(o.Partition):
					kept++
				}
			})
			if kept != 2 {
				t.Fatalf("%s: %d of the kept topic's 2 offsets left: %v", when, kept, got)
			}
			if gone == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d offsets of the deleted topic still committed", when, gone)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	check(adm, "after the delete")
	stopNode(t, n, sys)
	n, sys = testNode(t, dir, props)
	defer stopNode(t, n, sys)
	check(adminOf(t, n), "after a restart")
}
