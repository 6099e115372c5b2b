package metadata

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// heartbeatImage is threeBrokers with "orders" (3 partitions, RF 3) and
// broker 4 registered, fenced, at offset RegisteredAt.
func heartbeatImage(t *testing.T) (*Image, Broker) {
	img := withTopic(t, threeBrokers(t), "orders", 1, 3, 3)
	img = applyAll(t, img, registration(4, 50), TopicRecord{Name: "later", TopicID: uuidN(2)})
	br, _ := img.Broker(4)
	return img, br
}

func TestBrokerHeartbeat(t *testing.T) {
	img, b4 := heartbeatImage(t)
	p0 := func(img *Image) Partition { p, _ := img.Partition(uuidN(1), 0); return p }
	leader := p0(img).Leader
	type want struct {
		code                         *kerr.Error
		caughtUp, fenced, shutDown   bool
		records                      int
		fencedAfter, leaderlessAfter bool
	}
	for _, tc := range []struct {
		name string
		req  *BrokerHeartbeatRequest
		want want
	}{
		{"unknown node", heartbeatReq(9, 10, 100, 0), want{code: kerr.BrokerIDNotRegistered}},
		{"stale epoch", heartbeatReq(4, 49, 100, 0), want{code: kerr.StaleBrokerEpoch}},
		{"fenced, behind its registration", heartbeatReq(4, 50, b4.RegisteredAt-1, 0), want{fenced: true, fencedAfter: true}},
		{"fenced, caught up", heartbeatReq(4, 50, b4.RegisteredAt, 0), want{caughtUp: true, records: 1}},
		{"fenced, asks to stay fenced", &BrokerHeartbeatRequest{NodeID: 4, BrokerEpoch: 50, MetadataOffset: img.Offset(), WantFence: true},
			want{caughtUp: true, fenced: true, fencedAfter: true}},
		{"unfenced", heartbeatReq(leader, 10, img.Offset(), 0), want{caughtUp: true}},
		{"unfenced asks to be fenced", &BrokerHeartbeatRequest{NodeID: leader, BrokerEpoch: 10, MetadataOffset: img.Offset(), WantFence: true},
			want{caughtUp: true, fenced: true, records: 4, fencedAfter: true, leaderlessAfter: true}},
		{"leader asks to shut down", &BrokerHeartbeatRequest{NodeID: leader, BrokerEpoch: 10, MetadataOffset: img.Offset(), WantShutDown: true},
			want{caughtUp: true}},
		{"fenced broker asks to shut down", &BrokerHeartbeatRequest{NodeID: 4, BrokerEpoch: 50, WantShutDown: true, WantFence: true},
			want{fenced: true, shutDown: true, fencedAfter: true}},
		{"leader fences itself and shuts down", &BrokerHeartbeatRequest{NodeID: leader, BrokerEpoch: 10, MetadataOffset: img.Offset(), WantFence: true, WantShutDown: true},
			want{caughtUp: true, fenced: true, shutDown: true, records: 4, fencedAfter: true, leaderlessAfter: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := sessionController(t)
			res, recs, after := evalApply(t, c, img, tc.req)
			r := res.(*BrokerHeartbeatResult)
			wantCode(t, "heartbeat", r.Error, tc.want.code)
			if tc.want.code != nil {
				if len(recs) != 0 || c.Sessions.Live(tc.req.NodeID, tc.req.BrokerEpoch, 0) {
					t.Errorf("a refused heartbeat wrote %v or kept a session", recs)
				}
				return
			}
			if r.IsCaughtUp != tc.want.caughtUp || r.IsFenced != tc.want.fenced || r.ShouldShutDown != tc.want.shutDown {
				t.Errorf("result %+v, want %+v", r, tc.want)
			}
			if len(recs) != tc.want.records {
				t.Errorf("records %v, want %d", recs, tc.want.records)
			}
			if br, _ := after.Broker(tc.req.NodeID); br.Fenced != tc.want.fencedAfter {
				t.Errorf("fenced after: %t", br.Fenced)
			}
			if !p0(after).HasLeader() != tc.want.leaderlessAfter {
				t.Errorf("orders-0 after: %+v", p0(after))
			}
			if tc.want.fencedAfter && tc.req.NodeID == leader {
				checkFenced(t, after, leader)
			}
			if !c.Sessions.Live(tc.req.NodeID, tc.req.BrokerEpoch, tc.req.NowMs+testSessionMs-1) {
				t.Error("the heartbeat kept no session")
			}
		})
	}
}

// Fail: a heartbeat whose batch did not apply reports nothing but the
// error.
func TestBrokerHeartbeatFail(t *testing.T) {
	img, b4 := heartbeatImage(t)
	res, recs := testController(t).Evaluate(img, heartbeatReq(4, 50, b4.RegisteredAt, 0))
	if len(recs) != 1 {
		t.Fatalf("records %v", recs)
	}
	res.Fail(APIError{Code: kerr.RequestTimedOut.Code, Message: "x"})
	if r := res.(*BrokerHeartbeatResult); r.Error.Code != kerr.RequestTimedOut.Code || r.IsCaughtUp || r.IsFenced || r.ShouldShutDown {
		t.Errorf("failed: %+v", r)
	}
}
