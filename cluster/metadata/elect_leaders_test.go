package metadata

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// leaderlessOrders is orders (2 partitions, RF 3) with both partitions
// made leaderless, every broker unfenced and in the ISRs.
func leaderlessOrders(t *testing.T) *Image {
	img := withTopic(t, threeBrokers(t), "orders", 1, 2, 3)
	for i := range int32(2) {
		p, _ := img.Partition(uuidN(1), i)
		if p.HasLeader() {
			img = applyAll(t, img, PartitionChangeRecord{TopicID: uuidN(1), Partition: i, Leader: NoLeader})
		}
	}
	return img
}

func proposal(img *Image, partition int32, candidate int32) LeaderProposal {
	p, _ := img.Partition(uuidN(1), partition)
	return LeaderProposal{TopicID: uuidN(1), Partition: partition, Candidate: candidate, BrokerEpoch: 10, PartitionEpoch: p.PartitionEpoch}
}

func TestElectLeaders(t *testing.T) {
	img := leaderlessOrders(t)
	c := testController(t)
	// Two candidates for partition 0 in one request: the first wins, the
	// second is stale; partition 1 is elected beside them.
	req := &ElectLeadersRequest{Proposals: []LeaderProposal{proposal(img, 0, 2), proposal(img, 0, 3), proposal(img, 1, 3)}}
	res, recs, after := evalApply(t, c, img, req)
	errs := res.(*ElectLeadersResult).Errors
	wantCode(t, "first", errs[0], nil)
	wantCode(t, "second for the same partition", errs[1], kerr.LeaderNotAvailable)
	wantCode(t, "other partition", errs[2], nil)
	if len(recs) != 2 {
		t.Fatalf("records %v", recs)
	}
	for i, want := range []int32{2, 3} {
		p, _ := after.Partition(uuidN(1), int32(i))
		before, _ := img.Partition(uuidN(1), int32(i))
		if p.Leader != want || p.LeaderEpoch != before.LeaderEpoch+1 || !slices.Equal(p.ISR, before.ISR) {
			t.Errorf("partition %d: %+v", i, p)
		}
	}
	// Across requests: a proposal made against the old epoch is stale, one
	// made against the new epoch finds a leader.
	res, recs = c.Evaluate(after, &ElectLeadersRequest{Proposals: []LeaderProposal{proposal(img, 0, 1), proposal(after, 0, 1)}})
	errs = res.(*ElectLeadersResult).Errors
	wantCode(t, "stale across requests", errs[0], kerr.LeaderNotAvailable)
	wantCode(t, "led", errs[1], kerr.ElectionNotNeeded)
	if len(recs) != 0 {
		t.Errorf("records %v", recs)
	}
}

func TestElectLeadersErrors(t *testing.T) {
	fenced := func(t *testing.T) *Image {
		return applyAll(t, leaderlessOrders(t), BrokerFencedRecord{NodeID: 2, BrokerEpoch: 10})
	}
	notInISR := func(t *testing.T) *Image {
		img := leaderlessOrders(t)
		p, _ := img.Partition(uuidN(1), 0)
		return applyAll(t, img, PartitionChangeRecord{TopicID: uuidN(1), Leader: LeaderNoChange,
			ISR: slices.DeleteFunc(slices.Clone(p.ISR), func(r int32) bool { return r == 2 })})
	}
	img := leaderlessOrders(t)
	mod := func(img *Image, f func(*LeaderProposal)) LeaderProposal {
		p := proposal(img, 0, 2)
		f(&p)
		return p
	}
	runEvalCases(t, []evalCase{
		{name: "fenced candidate", img: fenced, req: &ElectLeadersRequest{Proposals: []LeaderProposal{proposal(img, 0, 2)}},
			codes: []*kerr.Error{kerr.IneligibleReplica}, msgs: []string{"node 2"}, check: noRecords},
		{name: "outside the ISR", img: notInISR, req: &ElectLeadersRequest{Proposals: []LeaderProposal{mod(img, func(p *LeaderProposal) { p.PartitionEpoch++ })}},
			codes: []*kerr.Error{kerr.IneligibleReplica}, msgs: []string{"not in the ISR"}, check: noRecords},
		{name: "registrations and partitions", img: leaderlessOrders, req: &ElectLeadersRequest{Proposals: []LeaderProposal{
			mod(img, func(p *LeaderProposal) { p.BrokerEpoch = 9 }),
			mod(img, func(p *LeaderProposal) { p.Candidate = 7 }),
			mod(img, func(p *LeaderProposal) { p.TopicID = uuidN(5) }),
			mod(img, func(p *LeaderProposal) { p.Partition = 5 }),
		}}, codes: []*kerr.Error{kerr.StaleBrokerEpoch, kerr.BrokerIDNotRegistered, kerr.UnknownTopicID, kerr.UnknownTopicOrPartition},
			check: noRecords},
		{name: "zero proposals", req: &ElectLeadersRequest{Proposals: []LeaderProposal{{}, {}}}, codes: []*kerr.Error{kerr.UnknownTopicID, kerr.UnknownTopicID}},
	})
	r := (&ElectLeadersRequest{Proposals: make([]LeaderProposal, 2)}).Refused(APIError{Code: 7})
	if errs := r.(*ElectLeadersResult).Errors; len(errs) != 2 || errs[0].Code != 7 || errs[1].Code != 7 {
		t.Errorf("refused: %v", errs)
	}
	res := &ElectLeadersResult{Errors: []APIError{{}, {Code: 84}}}
	res.Fail(APIError{Code: 7})
	if res.Errors[0].Code != 7 || res.Errors[1].Code != 84 {
		t.Errorf("fail: %v", res.Errors)
	}
}

// One request holds one operation's records: the proposals past it are
// answered REQUEST_TIMED_OUT, and the node's next request elects them.
func TestElectLeadersOpBudget(t *testing.T) {
	n := MaxRecordsPerOp + 5
	img := bigTopic(t, threeBrokers(t), "big", 1, n, 1)
	recs, err := FenceBrokerRecords(img, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	img = applyBatch(t, img, append(recs, BrokerUnfencedRecord{NodeID: 1, BrokerEpoch: 10})...)
	props := make([]LeaderProposal, n)
	for i := range props {
		p, _ := img.Partition(uuidN(1), int32(i))
		props[i] = LeaderProposal{TopicID: uuidN(1), Partition: int32(i), Candidate: 1, BrokerEpoch: 10, PartitionEpoch: p.PartitionEpoch}
	}
	c := testController(t)
	res, recs, img := evalApply(t, c, img, &ElectLeadersRequest{Proposals: props})
	errs := res.(*ElectLeadersResult).Errors
	if len(recs) != MaxRecordsPerOp {
		t.Fatalf("%d records", len(recs))
	}
	for i, e := range errs {
		if want := i >= MaxRecordsPerOp; e.Failed() != want || (want && e.Code != kerr.RequestTimedOut.Code) {
			t.Fatalf("proposal %d: %v", i, e)
		}
	}
	again := props[MaxRecordsPerOp:]
	res, recs, img = evalApply(t, c, img, &ElectLeadersRequest{Proposals: again})
	for i, e := range res.(*ElectLeadersResult).Errors {
		wantCode(t, "re-proposed", e, nil)
		if p, _ := img.Partition(uuidN(1), again[i].Partition); p.Leader != 1 {
			t.Errorf("partition %d: %+v", again[i].Partition, p)
		}
	}
	if len(recs) != 5 {
		t.Errorf("%d records", len(recs))
	}
}

// uncleanImage is topic orders, one partition on brokers 1-3 whose ISR
// shrank to its leader, then the leader was fenced: leaderless, the ISR
// the fenced broker alone. Broker 4 is registered and unfenced, no replica.
func uncleanImage(t *testing.T, topicUnclean string) (*Image, int32, int32) {
	img := withTopic(t, threeBrokers(t), "orders", 1, 1, 3)
	p, _ := img.Partition(uuidN(1), 0)
	img = applyAll(t, img, PartitionChangeRecord{TopicID: uuidN(1), Leader: LeaderNoChange, ISR: []int32{p.Leader}},
		BrokerFencedRecord{NodeID: p.Leader, BrokerEpoch: 10}, PartitionChangeRecord{TopicID: uuidN(1), Leader: NoLeader},
		registration(4, 40), BrokerUnfencedRecord{NodeID: 4, BrokerEpoch: 40})
	if topicUnclean != "" {
		img = applyAll(t, img, ConfigRecord{ResourceType: ResourceTopic, ResourceName: "orders", Name: "unclean.leader.election.enable", Value: topicUnclean})
	}
	return img, p.Leader, p.Replicas[1]
}

func TestElectLeadersUnclean(t *testing.T) {
	for _, tc := range []struct {
		name          string
		topic, broker string
		mod           func(t *testing.T, img *Image, old int32) *Image
		candidate     func(old, other int32) (int32, int64)
		unclean       bool
		want          *kerr.Error
	}{
		{name: "a clean proposal from outside the ISR", topic: "true", want: kerr.IneligibleReplica},
		{name: "disabled by default", unclean: true, want: kerr.IneligibleReplica},
		{name: "enabled by the topic", topic: "true", unclean: true},
		{name: "enabled by the topic, any case", topic: " TRUE", unclean: true},
		{name: "enabled by the broker", broker: "true", unclean: true},
		{name: "the topic's override wins", topic: "false", broker: "true", unclean: true, want: kerr.IneligibleReplica},
		{name: "an ISR member is unfenced", topic: "true", unclean: true, want: kerr.IneligibleReplica,
			mod: func(t *testing.T, img *Image, old int32) *Image {
				return applyAll(t, img, BrokerUnfencedRecord{NodeID: old, BrokerEpoch: 10})
			}},
		{name: "not a replica", topic: "true", unclean: true, want: kerr.IneligibleReplica,
			candidate: func(int32, int32) (int32, int64) { return 4, 40 }},
		{name: "fenced candidate", topic: "true", unclean: true, want: kerr.IneligibleReplica,
			mod: func(t *testing.T, img *Image, _ int32) *Image {
				var recs []Record
				for n := int32(1); n <= 3; n++ {
					if br, _ := img.Broker(n); !br.Fenced {
						recs = append(recs, BrokerFencedRecord{NodeID: n, BrokerEpoch: 10})
					}
				}
				return applyAll(t, img, recs...)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, old, other := uncleanImage(t, tc.topic)
			if tc.mod != nil {
				img = tc.mod(t, img, old)
			}
			cand, epoch := other, int64(10)
			if tc.candidate != nil {
				cand, epoch = tc.candidate(old, other)
			}
			var c *Controller
			if tc.broker != "" {
				c = testController(t, "unclean.leader.election.enable", tc.broker)
			} else {
				c = testController(t)
			}
			p, _ := img.Partition(uuidN(1), 0)
			prop := LeaderProposal{TopicID: uuidN(1), Candidate: cand, BrokerEpoch: epoch, PartitionEpoch: p.PartitionEpoch, Unclean: tc.unclean}
			res, recs, after := evalApply(t, c, img, &ElectLeadersRequest{Proposals: []LeaderProposal{prop}})
			wantCode(t, "unclean", res.(*ElectLeadersResult).Errors[0], tc.want)
			if tc.want != nil {
				if len(recs) != 0 {
					t.Errorf("records %v", recs)
				}
				return
			}
			got, _ := after.Partition(uuidN(1), 0)
			if got.Leader != cand || !slices.Equal(got.ISR, []int32{cand}) || got.LeaderEpoch != p.LeaderEpoch+1 {
				t.Errorf("after the unclean election: %+v", got)
			}
		})
	}
}

// An ISR member's unclean proposal is a clean election; ElectLeader alone
// takes only the topic's override.
func TestElectLeaderUncleanFunction(t *testing.T) {
	img := leaderlessOrders(t)
	prop := proposal(img, 0, 2)
	prop.Unclean = true
	rec, err := ElectLeader(img, prop)
	if err != nil || rec.(PartitionChangeRecord).ISR != nil {
		t.Fatalf("an ISR member's unclean proposal: %v, %v", rec, err)
	}
	img, _, other := uncleanImage(t, "true")
	p, _ := img.Partition(uuidN(1), 0)
	prop = LeaderProposal{TopicID: uuidN(1), Candidate: other, BrokerEpoch: 10, PartitionEpoch: p.PartitionEpoch, Unclean: true}
	if rec, err := ElectLeader(img, prop); err != nil || !slices.Equal(rec.(PartitionChangeRecord).ISR, []int32{other}) {
		t.Fatalf("unclean with the topic's override: %v, %v", rec, err)
	}
	img, _, _ = uncleanImage(t, "")
	if _, err := ElectLeader(img, prop); err == nil {
		t.Fatal("unclean without the override")
	}
}
