package metadata

import (
	"slices"
	"testing"
)

func TestPreferredMoves(t *testing.T) {
	// 9 partitions over 3 brokers: each preferred for 3.
	base := withTopic(t, threeBrokers(t), "orders", 1, 9, 3)
	preferredBy := func(img *Image, node int32) []int32 {
		var out []int32
		for i := range int32(9) {
			if p, _ := img.Partition(uuidN(1), i); p.Replicas[0] == node {
				out = append(out, i)
			}
		}
		return out
	}
	of3 := preferredBy(base, 3)
	if len(of3) != 3 {
		t.Fatalf("node 3 preferred for %v, want 3 partitions", of3)
	}
	// Node 3 failed and came back: node 1 leads two of its partitions.
	moved := applyAll(t, base,
		PartitionChangeRecord{TopicID: uuidN(1), Partition: of3[0], Leader: 1},
		PartitionChangeRecord{TopicID: uuidN(1), Partition: of3[1], Leader: 1})
	all := UnfencedEpochs(moved)
	if len(all) != 3 || all[3] != 10 {
		t.Fatalf("unfenced epochs %v", all)
	}
	want := []PreferredMove{{TopicID: uuidN(1), Partition: of3[0], To: 3}, {TopicID: uuidN(1), Partition: of3[1], To: 3}}
	if got := PreferredMoves(moved, 1, 10, all); !slices.Equal(got, want) {
		t.Fatalf("moves of node 1: %+v, want %+v", got, want)
	}
	for _, n := range []int32{2, 3} {
		if got := PreferredMoves(moved, n, 10, all); len(got) != 0 {
			t.Fatalf("moves of node %d, which leads only its own: %+v", n, got)
		}
	}
	if got := PreferredMoves(base, 1, 10, all); len(got) != 0 {
		t.Fatalf("moves in a balanced image: %+v", got)
	}
	// 2 of 3 elsewhere is 66%: above 50, not above 70.
	if got := PreferredMoves(moved, 1, 70, all); len(got) != 0 {
		t.Fatalf("moves below the imbalance threshold: %+v", got)
	}
	if got := PreferredMoves(moved, 1, 50, all); len(got) != 2 {
		t.Fatalf("moves above the threshold: %+v", got)
	}
	// Not unfenced at the previous check, or in another registration
	// then: not yet.
	if got := PreferredMoves(moved, 1, 10, map[int32]int64{1: 10, 2: 10}); len(got) != 0 {
		t.Fatalf("moves to a broker not settled: %+v", got)
	}
	if got := PreferredMoves(moved, 1, 10, map[int32]int64{1: 10, 2: 10, 3: 9}); len(got) != 0 {
		t.Fatalf("moves to a broker settled in an earlier registration: %+v", got)
	}
	// A fenced preferred replica gets nothing back.
	if got := PreferredMoves(applyAll(t, moved, BrokerFencedRecord{NodeID: 3, BrokerEpoch: 10}), 1, 10, all); len(got) != 0 {
		t.Fatalf("moves to a fenced broker: %+v", got)
	}
	// Nor one outside the ISR: that partition stays, the other goes.
	p, _ := moved.Partition(uuidN(1), of3[0])
	isr := slices.DeleteFunc(slices.Clone(p.ISR), func(id int32) bool { return id == 3 })
	out := applyAll(t, moved, PartitionChangeRecord{TopicID: uuidN(1), Partition: of3[0], Leader: LeaderNoChange, ISR: isr})
	if got := PreferredMoves(out, 1, 10, all); !slices.Equal(got, want[1:]) {
		t.Fatalf("moves with node 3 out of one ISR: %+v, want %+v", got, want[1:])
	}
}
