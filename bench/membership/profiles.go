package membership

import gossip "github.com/weirmq/weir/cluster/membership"

// Profile is cluster/membership's timing profile, measured here.
type Profile = gossip.Profile

// The profiles measured: cluster/membership's.
var (
	Fast    = gossip.Fast
	Relaxed = gossip.Relaxed
	LAN     = gossip.LAN
)
