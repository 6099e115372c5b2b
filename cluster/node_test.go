package cluster

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"net"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/internal/leakcheck"
	"github.com/weirmq/weir/log"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

// testNode starts a node on dir with a loopback listener.
func testNode(t *testing.T, dir string, props map[string]string) (*Node, *actor.ActorSystem) {
	t.Helper()
	all := map[string]string{"log.dirs": dir}
	maps.Copy(all, props)
	return startTestNode(t, all, nil)
}

// startTestNode starts a node with the broker configs props on fsys (nil:
// the real file system), with a loopback listener and its log lines
// discarded.
func startTestNode(t *testing.T, props map[string]string, fsys log.FS) (*Node, *actor.ActorSystem) {
	t.Helper()
	return startTestNodeLogging(t, props, fsys, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// startTestNodeLogging is startTestNode with the node logging to logger.
func startTestNodeLogging(t *testing.T, props map[string]string, fsys log.FS, logger *slog.Logger) (*Node, *actor.ActorSystem) {
	t.Helper()
	b := config.NewBroker()
	for k, v := range props {
		if err := b.Override(k, v); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := NewConfig(b)
	cfg.Listener = ln
	cfg.FS = fsys
	cfg.Logger = logger
	system := actor.NewActorSystem()
	n, err := StartNode(system, cfg)
	if err != nil {
		system.Shutdown()
		t.Fatalf("start node: %v", err)
	}
	return n, system
}

func stopNode(t *testing.T, n *Node, system *actor.ActorSystem) {
	t.Helper()
	if err := n.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	system.Shutdown()
}

// TestStartCreateRestart starts a node, creates a topic, restarts on the
// same directory and finds the topic led again, at a higher leader epoch,
// with a new broker epoch.
func TestStartCreateRestart(t *testing.T) {
	dir := t.TempDir()
	n, sys := testNode(t, dir, nil)
	img := n.Image()
	if img.ClusterID() == "" || img.ControllerID() != 1 {
		t.Fatalf("cluster id %q controller %d", img.ClusterID(), img.ControllerID())
	}
	br, ok := img.Broker(1)
	if !ok || br.Fenced || br.Epoch != n.BrokerEpoch() {
		t.Fatalf("broker 1: %+v ok=%v epoch %d", br, ok, n.BrokerEpoch())
	}
	retention := "1000"
	res, err := n.Metadata(context.Background(), &metadata.CreateTopicsRequest{Topics: []metadata.CreatableTopic{{
		Name: "orders", NumPartitions: 3, ReplicationFactor: 1, Configs: []metadata.ConfigValue{{Name: "retention.ms", Value: &retention}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if e := res.(*metadata.CreateTopicsResult).Topics[0].Error; e.Failed() {
		t.Fatal(e)
	}
	img = n.Image()
	top, _ := img.Topic("orders")
	for i := range int32(3) {
		c := n.Replica(top.ID(), i)
		if c == nil {
			t.Fatalf("partition %d has no actor", i)
		}
	}
	waitLeader(t, n, top.ID(), 0)
	clusterID, epoch := img.ClusterID(), n.BrokerEpoch()
	p0, _ := top.Partition(0)
	stopNode(t, n, sys)

	n, sys = testNode(t, dir, nil)
	defer stopNode(t, n, sys)
	img = n.Image()
	if img.ClusterID() != clusterID {
		t.Fatalf("cluster id changed: %q -> %q", clusterID, img.ClusterID())
	}
	if n.BrokerEpoch() <= epoch {
		t.Fatalf("broker epoch %d not above %d", n.BrokerEpoch(), epoch)
	}
	top, ok = img.Topic("orders")
	if !ok || top.NumPartitions() != 3 {
		t.Fatal("topic lost on restart")
	}
	p, _ := top.Partition(0)
	if p.Leader != 1 || p.LeaderEpoch <= p0.LeaderEpoch {
		t.Fatalf("partition 0 after restart: %+v (before %+v)", p, p0)
	}
	if got := img.Config(metadata.TopicResource("orders"))["retention.ms"]; got != "1000" {
		t.Fatalf("retention.ms = %q", got)
	}
	waitLeader(t, n, top.ID(), 0)
}

func waitLeader(t *testing.T, n *Node, topic metadata.UUID, idx int32) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := n.Replica(topic, idx)
		if c != nil && c.Status().Role.String() == "leader" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("partition %d never led", idx)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
