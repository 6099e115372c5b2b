package metadata

import (
	"reflect"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// alterImage is orders, one partition on brokers 1-3, and its leader,
// followers and state.
func alterImage(t *testing.T) (*Image, Partition) {
	img := withTopic(t, threeBrokers(t), "orders", 1, 1, 3)
	p, _ := img.Partition(uuidN(1), 0)
	return img, p
}

func TestAlterPartition(t *testing.T) {
	_, p := alterImage(t)
	leader, f1, f2 := p.Leader, p.Replicas[1], p.Replicas[2]
	change := func(mod func(*ISRProposal)) ISRProposal {
		ch := ISRProposal{TopicID: uuidN(1), Leader: leader, BrokerEpoch: 10, ISR: []int32{leader, f1}}
		if mod != nil {
			mod(&ch)
		}
		return ch
	}
	req := func(changes ...ISRProposal) *AlterPartitionRequest {
		return &AlterPartitionRequest{BrokerID: leader, BrokerEpoch: 10, Changes: changes}
	}
	shrunk := func(t *testing.T) *Image {
		img, _ := alterImage(t)
		return applyAll(t, img, PartitionChangeRecord{TopicID: uuidN(1), Leader: LeaderNoChange, ISR: []int32{leader, f1}},
			BrokerFencedRecord{NodeID: f2, BrokerEpoch: 10})
	}
	wantItem := func(i int, epoch, partitionEpoch int32, isr []int32) func(*testing.T, Result, []Record, *Image) {
		return func(t *testing.T, res Result, _ []Record, after *Image) {
			t.Helper()
			it := res.(*AlterPartitionResult).Partitions[i]
			got, _ := after.Partition(uuidN(1), 0)
			if it.TopicID != uuidN(1) || it.LeaderEpoch != epoch || it.PartitionEpoch != partitionEpoch || !slices.Equal(it.ISR, isr) {
				t.Errorf("item %+v, want epochs %d/%d ISR %v", it, epoch, partitionEpoch, isr)
			}
			if got.LeaderEpoch != it.LeaderEpoch || got.PartitionEpoch != it.PartitionEpoch || !slices.Equal(got.ISR, it.ISR) {
				t.Errorf("result %+v does not tell the partition's state %+v", it, got)
			}
		}
	}
	base := func(t *testing.T) *Image { img, _ := alterImage(t); return img }
	cases := []evalCase{
		{name: "shrink", req: req(change(nil)), codes: []*kerr.Error{nil}, check: wantItem(0, 0, 1, []int32{leader, f1})},
		{name: "unchanged", req: req(change(func(c *ISRProposal) { c.ISR = p.ISR })), codes: []*kerr.Error{nil},
			check: func(t *testing.T, res Result, recs []Record, after *Image) {
				noRecords(t, res, recs, after)
				wantItem(0, 0, 0, p.ISR)(t, res, recs, after)
			}},
		{name: "grow back", img: shrunk, req: req(change(func(c *ISRProposal) { c.PartitionEpoch, c.ISR = 1, []int32{leader, f1, f2} })),
			codes: []*kerr.Error{kerr.IneligibleReplica}, msgs: []string{"fenced or not registered"}, check: noRecords},
		{name: "two changes of one partition", req: req(change(nil), change(func(c *ISRProposal) { c.ISR = []int32{leader} })),
			codes: []*kerr.Error{nil, kerr.InvalidUpdateVersion}, check: wantItem(0, 0, 1, []int32{leader, f1})},
		{name: "per change errors", req: req(
			change(func(c *ISRProposal) { c.LeaderEpoch = 3 }),
			change(func(c *ISRProposal) { c.PartitionEpoch = 3 }),
			change(func(c *ISRProposal) { c.TopicID = uuidN(9) }),
			change(func(c *ISRProposal) { c.Partition = 9 }),
			change(func(c *ISRProposal) { c.ISR = []int32{f1} }),
			change(func(c *ISRProposal) { c.ISR = []int32{leader, 7} }),
			change(func(c *ISRProposal) { c.ISR = []int32{leader, leader} }),
			change(func(c *ISRProposal) { c.Leader = f1 }),
			change(func(c *ISRProposal) { c.BrokerEpoch = 9 }),
		), codes: []*kerr.Error{kerr.FencedLeaderEpoch, kerr.InvalidUpdateVersion, kerr.UnknownTopicID, kerr.UnknownTopicOrPartition,
			kerr.InvalidRequest, kerr.InvalidRequest, kerr.InvalidRequest, kerr.InvalidRequest, kerr.InvalidRequest}, check: noRecords},
		{name: "not the leader", req: &AlterPartitionRequest{BrokerID: f1, BrokerEpoch: 10,
			Changes: []ISRProposal{change(func(c *ISRProposal) { c.Leader = f1 })}},
			codes: []*kerr.Error{kerr.NotLeaderForPartition}, check: noRecords},
		{name: "stale broker epoch", req: &AlterPartitionRequest{BrokerID: leader, BrokerEpoch: 9,
			Changes: []ISRProposal{change(func(c *ISRProposal) { c.BrokerEpoch = 9 }), change(nil)}},
			codes: []*kerr.Error{kerr.StaleBrokerEpoch, kerr.StaleBrokerEpoch}, check: noRecords},
		{name: "unknown broker", req: &AlterPartitionRequest{BrokerID: 8, BrokerEpoch: 10,
			Changes: []ISRProposal{change(func(c *ISRProposal) { c.Leader = 8 })}},
			codes: []*kerr.Error{kerr.StaleBrokerEpoch}, check: noRecords},
	}
	for i := range cases {
		if cases[i].img == nil {
			cases[i].img = base
		}
	}
	runEvalCases(t, cases)
}

func TestAlterPartitionRefusedAndFail(t *testing.T) {
	req := &AlterPartitionRequest{Changes: []ISRProposal{{TopicID: uuidN(1), Partition: 2}, {TopicID: uuidN(3)}}}
	want := []AlterPartitionItem{{TopicID: uuidN(1), Partition: 2, Error: APIError{Code: 7}}, {TopicID: uuidN(3), Error: APIError{Code: 7}}}
	if got := req.Refused(APIError{Code: 7}).(*AlterPartitionResult).Partitions; !reflect.DeepEqual(got, want) {
		t.Errorf("refused: %+v", got)
	}
	res := &AlterPartitionResult{Partitions: []AlterPartitionItem{
		{TopicID: uuidN(1), Partition: 2, LeaderEpoch: 3, PartitionEpoch: 4, ISR: []int32{1}},
		{TopicID: uuidN(3), Error: APIError{Code: 95}},
	}}
	res.Fail(APIError{Code: 7})
	want[1].Error.Code = 95
	if !reflect.DeepEqual(res.Partitions, want) {
		t.Errorf("fail: %+v", res.Partitions)
	}
}

// One request holds one operation's records: the changes past it are
// answered REQUEST_TIMED_OUT.
func TestAlterPartitionOpBudget(t *testing.T) {
	n := MaxRecordsPerOp + 3
	img := bigTopic(t, threeBrokers(t), "big", 1, n, 1, 2)
	req := &AlterPartitionRequest{BrokerID: 1, BrokerEpoch: 10}
	for i := range n {
		req.Changes = append(req.Changes, ISRProposal{TopicID: uuidN(1), Partition: int32(i), Leader: 1, BrokerEpoch: 10, ISR: []int32{1}})
	}
	res, recs, after := evalApply(t, testController(t), img, req)
	if len(recs) != MaxRecordsPerOp {
		t.Fatalf("%d records", len(recs))
	}
	for i, it := range res.(*AlterPartitionResult).Partitions {
		if want := i >= MaxRecordsPerOp; it.Error.Failed() != want || (want && it.Error.Code != kerr.RequestTimedOut.Code) {
			t.Fatalf("change %d: %+v", i, it)
		}
		if p, _ := after.Partition(uuidN(1), int32(i)); (len(p.ISR) == 1) != (i < MaxRecordsPerOp) {
			t.Fatalf("partition %d: %+v", i, p)
		}
	}
}
