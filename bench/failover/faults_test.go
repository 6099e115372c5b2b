package failover

import (
	"testing"

	"github.com/weirmq/weir/bench/cluster"
)

func TestMostLeaderAndLedAnew(t *testing.T) {
	ps := []cluster.PartitionState{
		{Topic: "t", Partition: 0, Leader: 2, Epoch: 5},
		{Topic: "t", Partition: 1, Leader: 2, Epoch: 3},
		{Topic: "t", Partition: 2, Leader: 1, Epoch: 1},
	}
	if id, n := mostLeader(ps, []int32{1, 2, 3}); id != 2 || n != 2 {
		t.Errorf("mostLeader = %d, %d; want node 2 leading 2", id, n)
	}
	if nextID([]int32{1, 2, 3}, 3) != 1 || nextID([]int32{4, 7}, 4) != 7 {
		t.Error("nextID")
	}
	epochs := map[string]int32{"t/0": 5, "t/1": 3, "t/2": 1}
	if ledAnew(ps, 3, []int32{2}, epochs) {
		t.Error("partitions still led by the victim under their old epoch count as led anew")
	}
	moved := []cluster.PartitionState{
		{Topic: "t", Partition: 0, Leader: 3, Epoch: 6},
		{Topic: "t", Partition: 1, Leader: 2, Epoch: 4}, // the victim, back and elected again
		{Topic: "t", Partition: 2, Leader: 1, Epoch: 1},
	}
	if !ledAnew(moved, 3, []int32{2}, epochs) {
		t.Error("every partition led by a survivor or under a new epoch is led anew")
	}
	leaderless := append([]cluster.PartitionState{}, moved...)
	leaderless[2].Leader = -1
	if ledAnew(leaderless, 3, []int32{2}, epochs) || ledAnew(moved[:2], 3, []int32{2}, epochs) {
		t.Error("a leaderless or missing partition is not led anew")
	}
}
