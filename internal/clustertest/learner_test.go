//go:build !race

package clustertest_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/quorum"
	"github.com/weirmq/weir/internal/clustertest"
)

// quorumStatus returns node id's metadata quorum status.
func quorumStatus(t *testing.T, c *clustertest.Cluster, id int32) quorum.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := c.Node(id).QuorumStatus(ctx)
	if err != nil {
		t.Fatalf("node %d quorum status: %v", id, err)
	}
	return s
}

// describeQuorum asks the cluster (through seeds) DescribeQuorum v2 and
// returns the voters' and observers' ids.
func describeQuorum(t *testing.T, seeds []string) (leader int32, voters, observers []int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.Version = 2
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = quorum.MetadataPartition.Topic
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = []kmsg.DescribeQuorumRequestTopic{rt}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("describe quorum: %+v, %v", resp, err)
	}
	p := resp.Topics[0].Partitions[0]
	for _, v := range p.CurrentVoters {
		voters = append(voters, v.ReplicaID)
	}
	for _, o := range p.Observers {
		observers = append(observers, o.ReplicaID)
	}
	slices.Sort(voters)
	slices.Sort(observers)
	return p.LeaderID, voters, observers
}

// unfencedEverywhere waits until every running node's image has n
// unfenced brokers.
func unfencedEverywhere(c *clustertest.Cluster, n int) {
	c.WaitFor(30*time.Second, fmt.Sprintf("%d unfenced brokers in every image", n), func() bool {
		for _, id := range c.IDs() {
			node := c.Node(id)
			if node == nil {
				return false
			}
			got := 0
			for _, b := range node.Image().Brokers() {
				if !b.Fenced {
					got++
				}
			}
			if got != n {
				return false
			}
		}
		return true
	})
}

// TestClusterLearner: three voters and a learner (node 4, outside
// controller.quorum.voters). The controller adds the learner to the raft
// configuration; it registers, shows as an observer in DescribeQuorum,
// hosts a replica of every partition of an RF=4 topic, serves Metadata,
// and a client that knows only the learner produces and consumes. The
// learner crashes; while it is down the voters compact their metadata log
// past its position; restarted, it catches up from a snapshot, registers
// again, rejoins the ISRs, and nothing acknowledged is lost. Last the
// controller crashes, and the learner follows its successor.
func TestClusterLearner(t *testing.T) {
	c := clustertest.Start(t, clustertest.Options{Nodes: 3, Learners: 1, MetadataSnapshotEntries: 20})
	const learner = int32(4)
	unfencedEverywhere(c, 4)
	if s := quorumStatus(t, c, learner); !s.Learner || s.Leader || s.LeaderID < 1 || s.LeaderID > 3 {
		t.Fatalf("learner's quorum status %+v", s)
	}
	c.WaitFor(30*time.Second, "DescribeQuorum: voters 1,2,3 and observer 4", func() bool {
		_, voters, observers := describeQuorum(t, []string{c.KafkaAddr(learner)})
		return slices.Equal(voters, []int32{1, 2, 3}) && slices.Equal(observers, []int32{learner})
	})

	createTopic(t, c, "learned", 4, 4)
	waitFullISR(t, c, "learned")
	top, _ := c.Node(learner).Image().Topic("learned")
	for i := range top.NumPartitions() {
		if p, _ := top.Partition(i); !slices.Contains(p.Replicas, learner) {
			t.Fatalf("partition %d replicas %v without the learner", i, p.Replicas)
		}
	}
	leads := func() bool {
		top, _ := c.Node(learner).Image().Topic("learned")
		for i := range top.NumPartitions() {
			if p, _ := top.Partition(i); p.Leader == learner {
				return true
			}
		}
		return false
	}
	c.WaitFor(30*time.Second, "the learner leads a partition (it is first in some assignment)", leads)
	// Metadata from the learner alone.
	seed := []string{c.KafkaAddr(learner)}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seed...), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	md, err := kadm.NewClient(cl).Metadata(ctx, "learned")
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Brokers) != 4 || len(md.Topics["learned"].Partitions) != 4 {
		t.Fatalf("the learner's Metadata: brokers %v, topic %+v", md.Brokers, md.Topics["learned"])
	}
	var got acked
	produce(t, c, cl, "learned", "before", 200, &got)
	consumeAll(t, seed, "learned", &got)

	// The learner crashes; the voters write on and compact their logs
	// past everything it holds.
	c.Halt(learner)
	var voterIndex int64
	for _, v := range c.Voters() {
		voterIndex = max(voterIndex, c.Node(v).Image().Offset())
	}
	produce(t, c, cl, "learned", "during", 100, &got)
	for i := 0; ; i++ {
		compacted := true
		for _, v := range c.Voters() {
			if quorumStatus(t, c, v).SnapshotIndex <= uint64(voterIndex)+10 {
				compacted = false
			}
		}
		if compacted {
			break
		}
		if i == 50 {
			t.Fatalf("the voters' metadata logs not compacted past %d", voterIndex)
		}
		createTopic(t, c, fmt.Sprintf("filler-%d", i), 1, 3)
	}

	c.Restart(learner)
	s := quorumStatus(t, c, learner)
	if s.SnapshotsInstalled == 0 || s.SnapshotIndex <= uint64(voterIndex)+10 || !s.Learner {
		t.Fatalf("the restarted learner did not catch up from a snapshot: %+v (voters were at %d)", s, voterIndex)
	}
	unfencedEverywhere(c, 4)
	waitFullISR(t, c, "learned")
	c.WaitFor(30*time.Second, "every node at the same metadata", func() bool {
		want := c.Node(1).Image()
		for _, id := range c.IDs() {
			if img := c.Node(id).Image(); img.Offset() != want.Offset() || !img.Equal(want) {
				return false
			}
		}
		return true
	})
	if _, voters, observers := describeQuorum(t, c.Bootstrap()); !slices.Equal(voters, []int32{1, 2, 3}) || !slices.Equal(observers, []int32{learner}) {
		t.Fatalf("after the restart: voters %v observers %v", voters, observers)
	}
	produce(t, c, cl, "learned", "after", 100, &got)
	consumeAll(t, seed, "learned", &got)

	// The controller crashes: the learner follows the new one, and its
	// registration and replicas carry on.
	old := quorumStatus(t, c, learner).LeaderID
	c.Halt(old)
	c.WaitFor(30*time.Second, "the learner following a new controller", func() bool {
		id := quorumStatus(t, c, learner).LeaderID
		return id >= 1 && id <= 3 && id != old && quorumStatus(t, c, id).Leader
	})
	c.WaitLeaders("learned", 30*time.Second)
	produce(t, c, cl, "learned", "new-controller", 100, &got)
	consumeAll(t, seed, "learned", &got)
	if s := quorumStatus(t, c, quorumStatus(t, c, learner).LeaderID); len(s.Observers) != 1 || s.Observers[0].ID != learner {
		t.Fatalf("the new controller's status: observers %+v", s.Observers)
	}
}
