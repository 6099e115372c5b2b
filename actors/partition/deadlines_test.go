package partition

import "testing"

// TestNextTickMs checks the deadline the node's ticker waits for: none
// sooner than the producer expiry check for an idle leader whose
// followers are at its log end, the lag limit of a follower behind it,
// and at once before the replica has seen a clock reading.
func TestNextTickMs(t *testing.T) {
	s := leaderShell(t, func(c *Config) { c.ReplicaLagTimeMaxMs = 10000 }, Start{}, []int32{1, 2}, []int32{1, 2})
	if got := s.r.NextTickMs(); got != 1 {
		t.Fatalf("before a clock reading: %d, want 1 (at once)", got)
	}
	s.tick() // at 1000: the clocks start
	expiry := s.r.lastExpiryMs + s.r.cfg.ProducerIDExpirationCheckIntervalMs
	s.produce(plain(t, 2), 1)
	s.fetched(2, 2) // at the log end
	if got := s.r.NextTickMs(); got != expiry {
		t.Fatalf("idle, follower caught up: %d, want the expiry check at %d", got, expiry)
	}
	s.now = 1500
	s.produce(plain(t, 1), 1) // the follower is behind now, caught up as of 1000
	if got := s.r.NextTickMs(); got != 1000+10000+1 {
		t.Fatalf("follower behind: %d, want its lag limit %d", got, 1000+10000+1)
	}
	s.now = 1000 + 10000 + 1
	s.tick()
	s.wantProposals([]int32{1})
	if got := s.r.NextTickMs(); got != 1 {
		t.Fatalf("proposal outstanding: %d, want 1 (fast ticks)", got)
	}
}
