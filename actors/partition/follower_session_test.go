package partition

import "testing"

// TestSessionFetchesKeepFollowerCaughtUp checks Kafka's rule under an
// incremental fetch session: a follower at the log end whose fetches
// leave the partition out (its position unchanged) is caught up as of
// the session's last fetch, so an append after a long idle spell gives it
// replica.lag.time.max.ms to fetch, not nothing; without such fetches
// (the session stopped) it is removed once the append makes it lag.
func TestSessionFetchesKeepFollowerCaughtUp(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sessionAt  int64 // the session's last fetch before the append (0: none)
		wantShrink bool
	}{
		{name: "session fetching", sessionAt: 1000 + 60000 - 100, wantShrink: false},
		{name: "no session fetch", sessionAt: 0, wantShrink: true},
		{name: "session stopped long ago", sessionAt: 1500, wantShrink: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := leaderShell(t, func(c *Config) { c.ReplicaLagTimeMaxMs = 10000 }, Start{}, []int32{1, 2}, []int32{1, 2})
			s.produce(plain(t, 2), 1)
			s.fetched(2, 2) // at the log end, at 1000
			s.wantHW(2)
			s.now += 60000 // idle: no report for a minute
			s.tick()
			s.wantProposals() // caught up, never lagging while idle
			s.r.OnFollowerSessionFetched(2, tc.sessionAt)
			s.produce(plain(t, 1), 1)
			s.now += 200
			s.r.OnFollowerSessionFetched(2, tc.sessionAt) // the shell steps it before each step
			s.tick()
			if tc.wantShrink {
				s.wantProposals([]int32{1})
			} else {
				s.wantProposals()
			}
		})
	}
}
