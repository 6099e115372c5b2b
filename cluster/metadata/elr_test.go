package metadata

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// elrCluster drives one partition of topic orders (replicas [1 2 3],
// leader 1, the ISR full) through the controller, as the brokers would:
// AlterPartition from the leader, fencing by expired sessions, elections,
// registrations. It checks the KIP-966 invariants after every step.
type elrCluster struct {
	t      *testing.T
	c      *Controller
	img    *Image
	now    int64
	minISR int
}

// newELRCluster starts the partition with min.insync.replicas minISR (the
// topic's override), the controller's broker configs props.
func newELRCluster(t *testing.T, minISR string, props ...string) *elrCluster {
	t.Helper()
	img := bigTopic(t, threeBrokers(t), "orders", 1, 1, 1, 2, 3)
	m := 1
	if minISR != "" {
		img = applyAll(t, img, ConfigRecord{ResourceType: ResourceTopic, ResourceName: "orders", Name: "min.insync.replicas", Value: minISR})
		m = int(minISR[0] - '0')
	}
	c := testController(t, props...)
	c.Sessions = NewSessions(testSessionMs, testIntervalMs)
	c.Sessions.Reset(img, 0)
	return &elrCluster{t: t, c: c, img: img, minISR: m}
}

func (e *elrCluster) p() Partition {
	p, _ := e.img.Partition(uuidN(1), 0)
	return p
}

// do evaluates req and applies its records as one batch, then checks the
// invariants.
func (e *elrCluster) do(req Request) Result {
	e.t.Helper()
	res, _, img := evalApply(e.t, e.c, e.img, req)
	e.img = img
	e.check()
	return res
}

// check asserts the invariants: ISR, ELR and LastKnownELR disjoint (Apply
// refuses anything else, so this is the image's word), and the ELR and
// LastKnownELR empty while the ISR has min.insync.replicas members.
func (e *elrCluster) check() {
	e.t.Helper()
	p := e.p()
	for _, r := range p.ELR {
		if p.InISR(r) || p.InLastKnownELR(r) {
			e.t.Fatalf("node %d in the ELR and elsewhere: %+v", r, p)
		}
	}
	if len(p.ISR) >= e.minISR && len(p.ELR)+len(p.LastKnownELR) > 0 {
		e.t.Fatalf("ISR %v at min.insync.replicas %d keeps ELR %v, last known %v", p.ISR, e.minISR, p.ELR, p.LastKnownELR)
	}
}

// alter has the leader propose isr.
func (e *elrCluster) alter(isr ...int32) {
	e.t.Helper()
	p := e.p()
	br, _ := e.img.Broker(p.Leader)
	res := e.do(&AlterPartitionRequest{BrokerID: p.Leader, BrokerEpoch: br.Epoch, Changes: []ISRProposal{{
		TopicID: uuidN(1), Leader: p.Leader, BrokerEpoch: br.Epoch, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: isr,
	}}})
	wantCode(e.t, "alter partition", res.(*AlterPartitionResult).Partitions[0].Error, nil)
}

// expire lets node's session run out (every other unfenced broker
// heartbeats) and fences it with FenceExpired.
func (e *elrCluster) expire(node int32) {
	e.t.Helper()
	e.now += 10 * testSessionMs
	for _, br := range e.img.Brokers() {
		if br.NodeID != node && !br.Fenced {
			e.c.Sessions.Heartbeat(br.NodeID, br.Epoch, e.now)
		}
	}
	fenced, recs := e.c.FenceExpired(e.img, e.now)
	if len(fenced) != 1 || fenced[0].NodeID != node {
		e.t.Fatalf("fenced %v, want node %d", fenced, node)
	}
	e.img = applyBatch(e.t, e.img, recs...)
	e.check()
}

// elect proposes node and returns the answer's error.
func (e *elrCluster) elect(node int32, unclean bool) APIError {
	e.t.Helper()
	br, _ := e.img.Broker(node)
	res := e.do(&ElectLeadersRequest{Proposals: []LeaderProposal{{TopicID: uuidN(1), Candidate: node,
		BrokerEpoch: br.Epoch, PartitionEpoch: e.p().PartitionEpoch, Unclean: unclean}}})
	return res.(*ElectLeadersResult).Errors[0]
}

// restart registers a new process of node (clean: its previous process
// shut down cleanly) and unfences it.
func (e *elrCluster) restart(node int32, clean bool) {
	e.t.Helper()
	old, _ := e.img.Broker(node)
	req := registerReq(node, int(old.Epoch)*10+int(node), e.now)
	if clean {
		req.PreviousBrokerEpoch = old.Epoch
	}
	r := e.do(req).(*RegisterBrokerResult)
	wantCode(e.t, "register", r.Error, nil)
	hb := e.do(heartbeatReq(node, r.BrokerEpoch, e.img.Offset(), e.now)).(*BrokerHeartbeatResult)
	if hb.Error.Failed() || hb.IsFenced {
		e.t.Fatalf("node %d not unfenced: %+v", node, hb)
	}
}

// want fails unless the partition has leader, isr, elr and last known.
func (e *elrCluster) want(what string, leader int32, isr, elr, lastKnown []int32) {
	e.t.Helper()
	p := e.p()
	if p.Leader != leader || !slices.Equal(p.ISR, isr) || !slices.Equal(p.ELR, elr) || !slices.Equal(p.LastKnownELR, lastKnown) {
		e.t.Fatalf("%s: leader %d ISR %v ELR %v last known %v; want leader %d ISR %v ELR %v last known %v",
			what, p.Leader, p.ISR, p.ELR, p.LastKnownELR, leader, isr, elr, lastKnown)
	}
}

func ids(v ...int32) []int32 { return v }

// The scenario KIP-966 fixes: RF 3, min.insync.replicas 2; the ISR shrinks
// to [1 2], then [1] (2 leaves while the ISR is below 2, so the high
// watermark cannot have passed it: it joins the ELR), and leader 1 dies.
// Without the ELR no replica could be elected (unclean election off);
// with it node 2 is elected cleanly.
func TestELRScenario(t *testing.T) {
	e := newELRCluster(t, "2")
	e.alter(1, 2)
	e.want("3 left at min.insync.replicas", 1, ids(1, 2), nil, nil)
	e.alter(1)
	e.want("2 left below min.insync.replicas", 1, ids(1), ids(2), nil)
	e.expire(1)
	e.want("leader 1 fenced: the ISR empties into the ELR", NoLeader, ids(), ids(1, 2), nil)

	// Without the ELR (weir before KIP-966: the last member stayed in the
	// ISR), nothing could be elected.
	pre := e.p()
	pre.ISR, pre.ELR = ids(1), nil
	if kind, cands := Candidates(e.img, pre, false); kind != NoElection {
		t.Fatalf("without the ELR: %v %v, want no election", kind, cands)
	}
	if kind, cands := Candidates(e.img, e.p(), false); kind != ElectFromELR || !slices.Equal(cands, ids(2)) {
		t.Fatalf("candidates %v %v, want node 2 from the ELR", kind, cands)
	}
	// Node 3, out of sync when it left, may not win.
	wantCode(t, "node 3", e.elect(3, false), kerr.IneligibleReplica)
	before := e.p().LeaderEpoch
	wantCode(t, "node 2", e.elect(2, false), nil)
	e.want("node 2 elected from the ELR", 2, ids(2), ids(1), nil)
	if p := e.p(); p.LeaderEpoch != before+1 {
		t.Errorf("leader epoch %d, want %d", p.LeaderEpoch, before+1)
	}
	// Node 3 catches up and joins: the ISR is at min.insync.replicas
	// again and the ELR empties.
	e.alter(2, 3)
	e.want("ISR back at 2", 2, ids(2, 3), nil, nil)
}

// A shrink straight below min.insync.replicas puts every member it takes
// out in the ELR; growing the ISR takes joining members out of the ELR.
func TestELRShrinkAndGrow(t *testing.T) {
	e := newELRCluster(t, "3")
	e.alter(1, 2, 3) // no change
	e.want("full", 1, ids(1, 2, 3), nil, nil)
	e.alter(1)
	e.want("shrunk to the leader", 1, ids(1), ids(2, 3), nil)
	e.alter(1, 3)
	e.want("3 back", 1, ids(1, 3), ids(2), nil)
	e.alter(1)
	e.want("3 out again", 1, ids(1), ids(2, 3), nil)
	e.alter(1, 2, 3)
	e.want("all back", 1, ids(1, 2, 3), nil, nil)
}

// Fencing: a fence that leaves the ISR below min.insync.replicas moves the
// fenced member to the ELR; at min.insync.replicas it does not.
func TestELRFencing(t *testing.T) {
	e := newELRCluster(t, "2")
	e.expire(3)
	e.want("3 fenced, ISR at 2", 1, ids(1, 2), nil, nil)
	e.expire(2)
	e.want("2 fenced below 2", 1, ids(1), ids(2), nil)
	// With min.insync.replicas 1 (the default) the last member is the
	// only one to join, when it is fenced itself.
	e = newELRCluster(t, "")
	e.expire(2)
	e.expire(3)
	e.want("followers fenced", 1, ids(1), nil, nil)
	e.expire(1)
	e.want("last member fenced", NoLeader, ids(), ids(1), nil)
	wantCode(t, "fenced 1 elected", e.elect(1, false), kerr.IneligibleReplica)
	e.restart(1, true)
	e.want("clean restart: still eligible", NoLeader, ids(), ids(1), nil)
	wantCode(t, "elect 1", e.elect(1, false), nil)
	e.want("1 elected from the ELR", 1, ids(1), nil, nil)
}

// An ELR member is elected only once no ISR member is unfenced, and in
// preference order among the unfenced ELR members (the elector's order;
// the controller takes any of them).
func TestELRElectionOrder(t *testing.T) {
	e := newELRCluster(t, "3")
	e.alter(1)
	e.want("shrunk", 1, ids(1), ids(2, 3), nil)
	// Leaderless with the ISR member unfenced: the ISR member only.
	e.img = applyAll(t, e.img, PartitionChangeRecord{TopicID: uuidN(1), Leader: NoLeader})
	if kind, cands := Candidates(e.img, e.p(), true); kind != ElectFromISR || !slices.Equal(cands, ids(1)) {
		t.Fatalf("candidates %v %v", kind, cands)
	}
	wantCode(t, "ELR member while an ISR member is unfenced", e.elect(3, false), kerr.IneligibleReplica)
	wantCode(t, "unclean while an ISR member is unfenced", e.elect(3, true), kerr.IneligibleReplica)
	e.expire(1)
	e.want("1 fenced", NoLeader, ids(), ids(1, 2, 3), nil)
	if kind, cands := Candidates(e.img, e.p(), false); kind != ElectFromELR || !slices.Equal(cands, ids(2, 3)) {
		t.Fatalf("candidates %v %v", kind, cands)
	}
	wantCode(t, "3 from the ELR", e.elect(3, false), nil)
	e.want("3 elected", 3, ids(3), ids(1, 2), nil)
}

// Unclean elections come only when neither ISR nor ELR has an unfenced
// member, and empty the ELR.
func TestELRUnclean(t *testing.T) {
	e := newELRCluster(t, "2", "unclean.leader.election.enable", "true")
	e.expire(3) // 3 out of sync: ISR [1 2]
	e.alter(1)
	e.want("2 in the ELR", 1, ids(1), ids(2), nil)
	e.expire(1)
	e.want("1 fenced", NoLeader, ids(), ids(1, 2), nil)
	e.restart(3, true)
	// 2 is unfenced and in the ELR: no unclean election of 3.
	wantCode(t, "unclean while an ELR member is unfenced", e.elect(3, true), kerr.IneligibleReplica)
	e.expire(2)
	e.want("2 fenced", NoLeader, ids(), ids(1, 2), nil)
	wantCode(t, "a clean proposal of 3", e.elect(3, false), kerr.IneligibleReplica)
	wantCode(t, "unclean 3", e.elect(3, true), nil)
	e.want("3 elected uncleanly", 3, ids(3), nil, nil)
	// Without unclean.leader.election.enable the same state waits.
	e = newELRCluster(t, "2")
	e.expire(3)
	e.alter(1)
	e.expire(1)
	e.restart(3, true)
	e.expire(2)
	wantCode(t, "unclean disabled", e.elect(3, true), kerr.IneligibleReplica)
	e.want("still leaderless", NoLeader, ids(), ids(1, 2), nil)
}

// A broker back from an unclean shutdown (it may have lost unflushed
// records) leaves the ELR for the last known ELR; back from a clean one
// (its previous epoch is the registration's) it stays. Once ISR and ELR
// are empty, a last known member may be elected without unclean election,
// as Kafka 4 elects its last known leader.
func TestELRUncleanShutdown(t *testing.T) {
	e := newELRCluster(t, "2")
	e.alter(1)
	e.want("shrunk", 1, ids(1), ids(2, 3), nil)
	e.expire(3)
	e.restart(3, true)
	e.want("3 back clean", 1, ids(1), ids(2, 3), nil)
	e.expire(3)
	e.restart(3, false)
	e.want("3 back unclean", 1, ids(1), ids(2), ids(3))
	// A registration whose previous epoch is not the current one is
	// unclean too (a newer process ran since).
	e.expire(2)
	br, _ := e.img.Broker(2)
	req := registerReq(2, 77, e.now)
	req.PreviousBrokerEpoch = br.Epoch - 1
	wantCode(t, "register 2", e.do(req).(*RegisterBrokerResult).Error, nil)
	e.want("2 back with a stale previous epoch", 1, ids(1), nil, ids(2, 3))

	// The leader dies, and comes back uncleanly: nobody is known to hold
	// more than the others.
	e.expire(1)
	e.want("1 fenced", NoLeader, ids(), ids(1), ids(2, 3))
	if kind, _ := Candidates(e.img, e.p(), false); kind != NoElection {
		t.Fatalf("ELR member 1 fenced: %v, want to wait for it", kind)
	}
	e.restart(1, false)
	e.want("1 back unclean", NoLeader, ids(), nil, ids(1, 2, 3))
	if kind, cands := Candidates(e.img, e.p(), false); kind != ElectLastKnown || !slices.Equal(cands, ids(1, 3)) {
		t.Fatalf("candidates %v %v, want the unfenced last known 1 and 3", kind, cands)
	}
	wantCode(t, "elect 3 from the last known", e.elect(3, false), nil)
	e.want("3 elected", 3, ids(3), nil, nil)
}

// Lowering min.insync.replicas to the ISR's size or below empties the ELR:
// the high watermark moves again, past what the ELR holds.
func TestELRMinISRChange(t *testing.T) {
	e := newELRCluster(t, "3")
	e.alter(1, 2)
	e.want("shrunk", 1, ids(1, 2), ids(3), nil)
	v := "2"
	res := e.do(&AlterConfigsRequest{Incremental: true, Resources: []AlterConfigsResource{{Type: 2, Name: "orders",
		Configs: []ConfigChange{{Name: "min.insync.replicas", Op: OpSet, Value: &v}}}}})
	wantCode(t, "alter configs", res.(*AlterConfigsResult).Resources[0].Error, nil)
	e.minISR = 2
	e.want("min.insync.replicas 2", 1, ids(1, 2), nil, nil)
	// Raising it fills no ELR.
	v = "3"
	e.do(&AlterConfigsRequest{Incremental: true, Resources: []AlterConfigsResource{{Type: 2, Name: "orders",
		Configs: []ConfigChange{{Name: "min.insync.replicas", Op: OpSet, Value: &v}}}}})
	e.minISR = 3
	e.want("min.insync.replicas 3", 1, ids(1, 2), nil, nil)
}

// The controller's broker default of min.insync.replicas counts for a
// topic without an override.
func TestELRBrokerDefault(t *testing.T) {
	e := newELRCluster(t, "", "min.insync.replicas", "2")
	e.minISR = 2
	e.alter(1, 2)
	e.want("at 2", 1, ids(1, 2), nil, nil)
	e.alter(1)
	e.want("below 2", 1, ids(1), ids(2), nil)
}

// A controlled shutdown's move: the old leader leaves the ISR and, below
// min.insync.replicas, joins the ELR (it shut down cleanly).
func TestELRMoveLeaders(t *testing.T) {
	e := newELRCluster(t, "2")
	e.alter(1, 2)
	p := e.p()
	res := e.do(&MoveLeadersRequest{BrokerID: 1, BrokerEpoch: 10, Moves: []LeaderMove{{TopicID: uuidN(1),
		LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, To: 2}}})
	wantCode(t, "move", res.(*MoveLeadersResult).Errors[0], nil)
	e.want("moved to 2", 2, ids(2), ids(1), nil)
}
