package metadata

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func registerReq(node int32, incarnation int, nowMs int64) *RegisterBrokerRequest {
	return &RegisterBrokerRequest{NodeID: node, IncarnationID: uuidN(incarnation), Host: "127.0.0.1",
		Port: 9090 + node, ActorAddress: "127.0.0.1:8090", Rack: "r", NowMs: nowMs}
}

func heartbeatReq(node int32, epoch, offset int64, nowMs int64) *BrokerHeartbeatRequest {
	return &BrokerHeartbeatRequest{NodeID: node, BrokerEpoch: epoch, MetadataOffset: offset, NowMs: nowMs}
}

// Brokers register, retry, heartbeat until unfenced, and a second process
// with a live one's node id is refused until the live one's session
// expired.
func TestRegisterBrokerScenario(t *testing.T) {
	c := sessionController(t)
	img := applyAll(t, Empty(), ClusterCreatedRecord{ClusterID: clusterIDForTest()})
	epochs := map[int32]int64{}
	for node := int32(1); node <= 3; node++ {
		res, recs, next := evalApply(t, c, img, registerReq(node, int(node), 0))
		r := res.(*RegisterBrokerResult)
		wantCode(t, "register", r.Error, nil)
		if len(recs) != 1 || r.BrokerEpoch <= img.Offset() {
			t.Fatalf("node %d: epoch %d at offset %d, records %v", node, r.BrokerEpoch, img.Offset(), recs)
		}
		br, _ := next.Broker(node)
		if !br.Fenced || br.Epoch != r.BrokerEpoch || br.RegisteredAt != next.Offset() || br.Rack != "r" {
			t.Fatalf("node %d: %+v at offset %d", node, br, next.Offset())
		}
		epochs[node] = r.BrokerEpoch
		img = next
		// The retry of the same process gets the same epoch, no records.
		res, recs = c.Evaluate(img, registerReq(node, int(node), 10))
		if r := res.(*RegisterBrokerResult); r.Error.Failed() || r.BrokerEpoch != epochs[node] || len(recs) != 0 {
			t.Fatalf("retry: %+v, %v", r, recs)
		}
	}
	// Every broker heartbeats with what it applied and is unfenced.
	for node := int32(1); node <= 3; node++ {
		res, recs, next := evalApply(t, c, img, heartbeatReq(node, epochs[node], img.Offset(), 100))
		if r := res.(*BrokerHeartbeatResult); r.Error.Failed() || r.IsFenced || !r.IsCaughtUp || len(recs) != 1 {
			t.Fatalf("heartbeat %d: %+v, %v", node, r, recs)
		}
		img = next
	}

	// A second process for node 2, while node 2's session is live.
	res, recs := c.Evaluate(img, registerReq(2, 20, 1000))
	r := res.(*RegisterBrokerResult)
	wantCode(t, "duplicate", r.Error, kerr.DuplicateBrokerRegistration)
	if !strings.Contains(r.Error.Message, "Node 2") || !strings.Contains(r.Error.Message, "another live process") || len(recs) != 0 {
		t.Errorf("duplicate: %q, %v", r.Error.Message, recs)
	}
	// Node 2 keeps heartbeating: still refused later.
	_, _, img = evalApply(t, c, img, heartbeatReq(2, epochs[2], img.Offset(), 1400))
	res, _ = c.Evaluate(img, registerReq(2, 20, 2800))
	wantCode(t, "duplicate while heartbeating", res.(*RegisterBrokerResult).Error, kerr.DuplicateBrokerRegistration)
	// Its session expired: the new process takes the node id, fencing
	// the old registration in the same batch.
	res, recs, img = evalApply(t, c, img, registerReq(2, 20, 2900))
	r = res.(*RegisterBrokerResult)
	wantCode(t, "after expiry", r.Error, nil)
	if _, ok := recs[0].(BrokerFencedRecord); !ok || r.BrokerEpoch <= epochs[2] {
		t.Fatalf("replacing registration: %+v, %v", r, recs)
	}
	br, _ := img.Broker(2)
	if br.Epoch != r.BrokerEpoch || br.IncarnationID != uuidN(20) || !br.Fenced {
		t.Fatalf("broker 2: %+v", br)
	}
	// The old process's heartbeats are stale now.
	res, _ = c.Evaluate(img, heartbeatReq(2, epochs[2], img.Offset(), 2950))
	wantCode(t, "old process", res.(*BrokerHeartbeatResult).Error, kerr.StaleBrokerEpoch)

	// A fenced registration is replaced whatever its session says.
	res, _, img = evalApply(t, c, img, registerReq(2, 21, 2950))
	wantCode(t, "replace fenced", res.(*RegisterBrokerResult).Error, nil)
	if br, _ := img.Broker(2); br.IncarnationID != uuidN(21) {
		t.Fatalf("broker 2: %+v", br)
	}

	// Without sessions (a single node), a new process always replaces.
	single := testController(t)
	res, _ = single.Evaluate(img, registerReq(1, 30, 3000))
	wantCode(t, "single node", res.(*RegisterBrokerResult).Error, nil)
}

func TestRegisterBrokerInvalid(t *testing.T) {
	bad := func(mod func(*RegisterBrokerRequest)) *RegisterBrokerRequest {
		r := registerReq(4, 4, 0)
		mod(r)
		return r
	}
	runEvalCases(t, []evalCase{
		{name: "negative node", req: bad(func(r *RegisterBrokerRequest) { r.NodeID = -1 }), codes: []*kerr.Error{kerr.InvalidRequest},
			msgs: []string{"node id -1 is negative"}, check: noRecords},
		{name: "zero incarnation", req: bad(func(r *RegisterBrokerRequest) { r.IncarnationID = UUID{} }), codes: []*kerr.Error{kerr.InvalidRequest},
			msgs: []string{"zero incarnation id"}, check: noRecords},
		{name: "empty host", req: bad(func(r *RegisterBrokerRequest) { r.Host = "" }), codes: []*kerr.Error{kerr.InvalidRequest}, check: noRecords},
		{name: "port 0", req: bad(func(r *RegisterBrokerRequest) { r.Port = 0 }), codes: []*kerr.Error{kerr.InvalidRequest}, check: noRecords},
		{name: "port 65536", req: bad(func(r *RegisterBrokerRequest) { r.Port = 65536 }), codes: []*kerr.Error{kerr.InvalidRequest},
			msgs: []string{"port 65536 out of range"}, check: noRecords},
		{name: "valid", req: registerReq(4, 4, 0), codes: []*kerr.Error{nil},
			check: func(t *testing.T, res Result, recs []Record, after *Image) {
				if br, ok := after.Broker(4); !ok || br.Epoch != res.(*RegisterBrokerResult).BrokerEpoch {
					t.Fatalf("broker 4: %+v", br)
				}
			}},
	})
}

// Replacing a registration whose fence takes more than one operation
// moves its partitions first; the retry registers.
func TestRegisterBrokerOverOperations(t *testing.T) {
	img := bigTopic(t, threeBrokers(t), "big", 1, MaxRecordsPerOp+10, 1, 2)
	c := testController(t)
	res, recs, img := evalApply(t, c, img, registerReq(1, 50, 0))
	wantCode(t, "first", res.(*RegisterBrokerResult).Error, kerr.RequestTimedOut)
	if len(recs) != MaxRecordsPerOp {
		t.Fatalf("%d records, want %d", len(recs), MaxRecordsPerOp)
	}
	res, recs, img = evalApply(t, c, img, registerReq(1, 50, 0))
	r := res.(*RegisterBrokerResult)
	wantCode(t, "retry", r.Error, nil)
	if len(recs) != 12 { // the fence, 10 partition changes, the registration
		t.Fatalf("%d records", len(recs))
	}
	if br, _ := img.Broker(1); br.Epoch != r.BrokerEpoch || br.IncarnationID != uuidN(50) {
		t.Fatalf("broker 1: %+v", br)
	}
	checkLeaderless(t, img, "big")
}

// checkLeaderless fails the test unless every partition of topic has no
// leader.
func checkLeaderless(t *testing.T, img *Image, topic string) {
	t.Helper()
	tp, _ := img.Topic(topic)
	for i := range tp.NumPartitions() {
		if p, _ := tp.Partition(i); p.HasLeader() {
			t.Fatalf("%s-%d led by %d", topic, i, p.Leader)
		}
	}
}
