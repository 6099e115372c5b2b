package cluster

import (
	"slices"
	"testing"

	"github.com/weirmq/weir/cluster/metadata"
)

// electionImage is a cluster of brokers 1-3, those listed in fenced
// fenced, with topic t: one leaderless partition on replicas [1 2 3] with
// isr and elr.
func electionImage(t *testing.T, isr, elr []int32, fenced ...int32) *metadata.Image {
	t.Helper()
	topic := metadata.UUID{7, 7}
	recs := []metadata.Record{metadata.ClusterCreatedRecord{ClusterID: metadata.UUID{1, 2, 3}.String()}}
	for id := int32(1); id <= 3; id++ {
		recs = append(recs, metadata.BrokerRegistrationRecord{NodeID: id, BrokerEpoch: int64(id), IncarnationID: metadata.UUID{byte(id)},
			Host: "127.0.0.1", Port: 9000 + id})
		if !slices.Contains(fenced, id) {
			recs = append(recs, metadata.BrokerUnfencedRecord{NodeID: id, BrokerEpoch: int64(id)})
		}
	}
	recs = append(recs, metadata.TopicRecord{Name: "t", TopicID: topic},
		metadata.PartitionRecord{TopicID: topic, Replicas: []int32{1, 2, 3}, ISR: isr, Leader: metadata.NoLeader, ELR: elr})
	b := metadata.NewBuilder(metadata.Empty())
	for i, r := range recs {
		if err := b.Apply(r, int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	return b.Image()
}

// The elector proposes a node for the first election the partition is
// open to, in preference order: ISR members, else ELR members (KIP-966),
// else, with unclean elections on, anyone unfenced after the unclean
// delay.
func TestElectorOrder(t *testing.T) {
	const stagger, uncleanDelay = 2, 10
	never := func(*metadata.Topic) bool { return false }
	always := func(*metadata.Topic) bool { return true }
	for _, tc := range []struct {
		name    string
		isr     []int32
		elr     []int32
		fenced  []int32
		unclean func(*metadata.Topic) bool
		// want is, per node, the first tick it proposes (-1: never within
		// the test).
		want map[int32]int64
		// uncleanBy lists the nodes whose proposal is unclean.
		uncleanBy []int32
	}{
		{name: "ISR in preference order", isr: []int32{3, 2}, unclean: always,
			want: map[int32]int64{1: -1, 2: 0, 3: stagger}},
		{name: "ELR once no ISR member is unfenced", isr: []int32{1}, elr: []int32{2, 3}, fenced: []int32{1}, unclean: never,
			want: map[int32]int64{2: 0, 3: stagger}},
		{name: "ELR with the ISR empty", isr: []int32{}, elr: []int32{3}, unclean: always,
			want: map[int32]int64{1: -1, 2: -1, 3: 0}},
		{name: "not the ELR while an ISR member is unfenced", isr: []int32{2}, elr: []int32{3}, unclean: always,
			want: map[int32]int64{2: 0, 3: -1}},
		{name: "no unclean election while disabled", isr: []int32{}, elr: []int32{1}, fenced: []int32{1}, unclean: never,
			want: map[int32]int64{2: -1, 3: -1}},
		{name: "unclean once ELR members are all fenced", isr: []int32{}, elr: []int32{1}, fenced: []int32{1}, unclean: always,
			want: map[int32]int64{2: uncleanDelay, 3: uncleanDelay + stagger}, uncleanBy: []int32{2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := electionImage(t, tc.isr, tc.elr, tc.fenced...)
			for node := int32(1); node <= 3; node++ {
				want, ok := tc.want[node]
				if !ok {
					continue
				}
				e := newElector(stagger, uncleanDelay)
				got := int64(-1)
				var prop metadata.LeaderProposal
				for tick := int64(0); tick <= 3*uncleanDelay; tick++ {
					if props := e.proposals(img, node, int64(node), tick, tc.unclean); len(props) > 0 {
						got, prop = tick, props[0]
						break
					}
				}
				if got != want {
					t.Errorf("node %d first proposes at tick %d, want %d", node, got, want)
				}
				if got >= 0 && prop.Unclean != slices.Contains(tc.uncleanBy, node) {
					t.Errorf("node %d: unclean %v", node, prop.Unclean)
				}
				if w := e.waiting(img, node); w != (want == 0 && !slices.Contains(tc.uncleanBy, node)) {
					t.Errorf("node %d: waiting %v", node, w)
				}
			}
		})
	}
}
