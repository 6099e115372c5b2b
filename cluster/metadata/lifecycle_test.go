package metadata

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// cluster is a controller and its image, stepped by the brokers' requests.
type cluster struct {
	t      *testing.T
	c      *Controller
	img    *Image
	epochs map[int32]int64
}

func (cl *cluster) eval(req Request) Result {
	cl.t.Helper()
	res, _, img := evalApply(cl.t, cl.c, cl.img, req)
	cl.img = img
	return res
}

func (cl *cluster) heartbeat(node int32, nowMs int64) *BrokerHeartbeatResult {
	cl.t.Helper()
	return cl.eval(heartbeatReq(node, cl.epochs[node], cl.img.Offset(), nowMs)).(*BrokerHeartbeatResult)
}

// Three brokers register and heartbeat until unfenced, get a topic, one
// stops heartbeating and is fenced, the others elect leaders for its
// partitions, and it comes back as a new process that catches up.
func TestBrokerLifecycle(t *testing.T) {
	cl := &cluster{t: t, c: sessionController(t), epochs: map[int32]int64{}}
	cl.img = applyAll(t, Empty(), ClusterCreatedRecord{ClusterID: clusterIDForTest()})
	for node := int32(1); node <= 3; node++ {
		r := cl.eval(registerReq(node, int(node), 0)).(*RegisterBrokerResult)
		wantCode(t, "register", r.Error, nil)
		cl.epochs[node] = r.BrokerEpoch
	}
	for node := int32(1); node <= 3; node++ {
		if r := cl.heartbeat(node, 0); r.IsFenced {
			t.Fatalf("node %d still fenced: %+v", node, r)
		}
	}
	created := cl.eval(&CreateTopicsRequest{Topics: []CreatableTopic{topic("orders", 6, 3)}}).(*CreateTopicsResult)
	wantCode(t, "create", created.Topics[0].Error, nil)
	id := created.Topics[0].TopicID

	// Nodes 1 and 2 heartbeat every 250 ms; node 3 stops after 500.
	var fencedAt int64 = -1
	for now := int64(250); now <= 3000 && fencedAt < 0; now += 250 {
		for node := int32(1); node <= 3; node++ {
			if node != 3 || now <= 500 {
				cl.heartbeat(node, now)
			}
		}
		if now == 1000 {
			cl.c.Sessions.MemberFailed(3, now)
			cl.c.Sessions.ProcessGone(3, now)
		}
		if fenced, recs := cl.c.FenceExpired(cl.img, now); len(fenced) > 0 {
			if len(fenced) != 1 || fenced[0].NodeID != 3 {
				t.Fatalf("fenced %v", fenced)
			}
			cl.img = applyBatch(t, cl.img, recs...)
			fencedAt = now
		}
	}
	// The hint and the evidence that its process is gone at 1000, no
	// heartbeat since 500: fenced at once.
	if fencedAt != 1000 {
		t.Fatalf("node 3 fenced at %d, want 1000", fencedAt)
	}
	checkFenced(t, cl.img, 3)

	// The survivors propose themselves for the leaderless partitions;
	// both propose for each, and one wins each.
	tp, _ := cl.img.TopicByID(id)
	var props []LeaderProposal
	for i := range tp.NumPartitions() {
		p, _ := tp.Partition(i)
		if p.HasLeader() {
			continue
		}
		for _, node := range []int32{1, 2} {
			props = append(props, LeaderProposal{TopicID: id, Partition: i, Candidate: node, BrokerEpoch: cl.epochs[node], PartitionEpoch: p.PartitionEpoch})
		}
	}
	if len(props) == 0 {
		t.Fatal("node 3 led nothing")
	}
	errs := cl.eval(&ElectLeadersRequest{Proposals: props}).(*ElectLeadersResult).Errors
	for i := 0; i < len(errs); i += 2 {
		wantCode(t, "first", errs[i], nil)
		wantCode(t, "second", errs[i+1], kerr.LeaderNotAvailable)
	}
	tp, _ = cl.img.TopicByID(id)
	for i := range tp.NumPartitions() {
		if p, _ := tp.Partition(i); !p.HasLeader() {
			t.Fatalf("partition %d leaderless: %+v", i, p)
		}
	}

	// Node 3 restarts: a new process, accepted since its session expired,
	// unfenced once it caught up; its leaders add it back to the ISRs.
	r := cl.eval(registerReq(3, 33, 3100)).(*RegisterBrokerResult)
	wantCode(t, "re-register", r.Error, nil)
	cl.epochs[3] = r.BrokerEpoch
	if hb := cl.heartbeat(3, 3200); hb.IsFenced || !hb.IsCaughtUp {
		t.Fatalf("heartbeat after restart: %+v", hb)
	}
	tp, _ = cl.img.TopicByID(id)
	for leader := int32(1); leader <= 2; leader++ {
		req := &AlterPartitionRequest{BrokerID: leader, BrokerEpoch: cl.epochs[leader]}
		for i := range tp.NumPartitions() {
			p, _ := tp.Partition(i)
			if p.Leader == leader && !p.InISR(3) {
				req.Changes = append(req.Changes, ISRProposal{TopicID: id, Partition: i, Leader: leader, BrokerEpoch: cl.epochs[leader],
					LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: append(append([]int32{}, p.ISR...), 3)})
			}
		}
		for _, it := range cl.eval(req).(*AlterPartitionResult).Partitions {
			wantCode(t, "grow", it.Error, nil)
			if len(it.ISR) != 3 {
				t.Errorf("ISR %v", it.ISR)
			}
		}
	}
	tp, _ = cl.img.TopicByID(id)
	for i := range tp.NumPartitions() {
		if p, _ := tp.Partition(i); len(p.ISR) != 3 {
			t.Errorf("partition %d: %+v", i, p)
		}
	}
}
