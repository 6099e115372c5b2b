package partition

import "testing"

// A follower dropped from the ISR (it died) is not proposed back on its
// last position: only a fetch of its own brings it back. Before, the
// stale position made the leader propose it at once, and the pending
// addition held the high watermark back for good.
func TestRemovedFollowerNeedsAFetchToRejoin(t *testing.T) {
	s := leaderShell(t, nil, Start{}, []int32{1, 2, 3}, []int32{1, 2, 3})
	s.produce(plain(t, 3), 1)
	s.fetched(2, 3)
	s.fetched(3, 3)
	s.wantHW(3)
	// The controller fences 3: the ISR shrinks to {1, 2}.
	s.handle(s.r.BecomeLeader(&BecomeLeader{LeaderEpoch: 3, PartitionEpoch: 11, ISR: []int32{1, 2}, Replicas: []int32{1, 2, 3}}))
	id := s.produce(plain(t, 2), -1)
	s.fetched(2, 5)
	s.wantHW(5)
	s.wantReply(id, 0, 3)
	if len(s.proposals) != 0 {
		t.Fatalf("proposed %+v on a stale position", s.proposals)
	}
	s.fetched(3, 5)
	s.wantProposals([]int32{1, 2, 3})
}

// A refused addition stops counting in the maximal ISR.
func TestRefusedAdditionReleasesTheHighWatermark(t *testing.T) {
	s := leaderShell(t, nil, Start{}, []int32{1, 2}, []int32{1, 2, 3})
	s.produce(plain(t, 2), 1)
	s.fetched(2, 2)
	s.fetched(3, 2)
	s.wantHW(2)
	s.wantProposals([]int32{1, 2, 3})
	id := s.produce(plain(t, 2), -1)
	s.fetched(2, 4)
	s.wantHW(2) // 3, being added, holds it back
	s.handle(s.r.OnISRChangeRefused(&ISRChangeRefused{LeaderEpoch: 3, PartitionEpoch: 10}))
	s.wantHW(4)
	s.wantReply(id, 0, 2)
}
