package metadata

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestMoveLeaders(t *testing.T) {
	_, p := alterImage(t)
	leader, f1, f2 := p.Leader, p.Replicas[1], p.Replicas[2]
	move := func(mod func(*LeaderMove)) LeaderMove {
		m := LeaderMove{TopicID: uuidN(1), To: f1}
		if mod != nil {
			mod(&m)
		}
		return m
	}
	req := func(leave bool, moves ...LeaderMove) *MoveLeadersRequest {
		return &MoveLeadersRequest{BrokerID: leader, BrokerEpoch: 10, Moves: moves, LeaveISR: leave}
	}
	base := func(t *testing.T) *Image { img, _ := alterImage(t); return img }
	led := func(to int32, isr []int32) func(*testing.T, Result, []Record, *Image) {
		return func(t *testing.T, _ Result, _ []Record, after *Image) {
			t.Helper()
			got, _ := after.Partition(uuidN(1), 0)
			if got.Leader != to || !slices.Equal(got.ISR, isr) || got.LeaderEpoch != 1 {
				t.Errorf("after the move: leader %d epoch %d ISR %v, want leader %d epoch 1 ISR %v", got.Leader, got.LeaderEpoch, got.ISR, to, isr)
			}
		}
	}
	fencedF1 := func(t *testing.T) *Image {
		return applyAll(t, base(t), BrokerFencedRecord{NodeID: f1, BrokerEpoch: 10})
	}
	runEvalCases(t, []evalCase{
		{name: "moved, old leader leaves the ISR", img: base, req: req(false, move(nil)), codes: []*kerr.Error{nil},
			check: led(f1, []int32{f1, f2})},
		{name: "a rebalance: the old leader stays in the ISR", img: base,
			req:   &MoveLeadersRequest{BrokerID: leader, BrokerEpoch: 10, Moves: []LeaderMove{move(nil)}, KeepISR: true},
			codes: []*kerr.Error{nil}, check: led(f1, p.ISR)},
		{name: "stale leader epoch", img: base, req: req(false, move(func(m *LeaderMove) { m.LeaderEpoch = 3 })),
			codes: []*kerr.Error{kerr.FencedLeaderEpoch}, check: noRecords},
		{name: "stale partition epoch", img: base, req: req(false, move(func(m *LeaderMove) { m.PartitionEpoch = 3 })),
			codes: []*kerr.Error{kerr.InvalidUpdateVersion}, check: noRecords},
		{name: "successor fenced", img: fencedF1, req: req(false, move(nil)),
			codes: []*kerr.Error{kerr.IneligibleReplica}, check: noRecords},
		{name: "to itself", img: base, req: req(false, move(func(m *LeaderMove) { m.To = leader })),
			codes: []*kerr.Error{kerr.IneligibleReplica}, check: noRecords},
		{name: "twice: the second is stale", img: base, req: req(false, move(nil), move(func(m *LeaderMove) { m.To = f2 })),
			codes: []*kerr.Error{nil, kerr.NotLeaderForPartition}, check: led(f1, []int32{f1, f2})},
		{name: "not the leader", img: base, req: &MoveLeadersRequest{BrokerID: f1, BrokerEpoch: 10, Moves: []LeaderMove{move(func(m *LeaderMove) { m.To = f2 })}},
			codes: []*kerr.Error{kerr.NotLeaderForPartition}, check: noRecords},
		{name: "stale broker epoch", img: base, req: &MoveLeadersRequest{BrokerID: leader, BrokerEpoch: 9, Moves: []LeaderMove{move(nil)}},
			codes: []*kerr.Error{kerr.StaleBrokerEpoch}, check: noRecords},
		{name: "a follower leaves the ISR", img: base, req: &MoveLeadersRequest{BrokerID: f2, BrokerEpoch: 10, LeaveISR: true},
			codes: []*kerr.Error{}, check: func(t *testing.T, res Result, _ []Record, after *Image) {
				got, _ := after.Partition(uuidN(1), 0)
				if got.Leader != leader || slices.Contains(got.ISR, f2) || res.(*MoveLeadersResult).LeftISR != 1 {
					t.Errorf("after leaving: leader %d ISR %v left %d", got.Leader, got.ISR, res.(*MoveLeadersResult).LeftISR)
				}
			}},
	})
}
