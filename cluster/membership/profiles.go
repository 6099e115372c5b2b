package membership

import (
	"fmt"
	"io"
	"log"
	"time"

	"github.com/hashicorp/memberlist"
)

// Profile is the set of memberlist timings that decides how fast a dead
// node is declared dead and how much delay a live node may suffer before
// it is suspected. Everything memberlist has that is not listed keeps
// memberlist.DefaultLANConfig's value.
//
// How the fields combine, in memberlist v0.7.0's probe loop: every
// ProbeInterval a node probes the next peer in a shuffled round robin; a
// probe waits ProbeTimeout for a UDP ack, then asks IndirectChecks other
// peers to ping the target and tries a TCP ping, and gives up at the end of
// the ProbeInterval. A node that failed a probe is suspected; it is declared
// dead when the suspicion timer runs out: SuspicionMult * ProbeInterval *
// max(1, log10(cluster size)), stretched up to SuspicionMaxTimeoutMult times
// that when confirmations from other suspecting nodes are expected
// (SuspicionMult-2 of them, and only when the cluster has that many other
// members). GossipInterval is how often suspect/dead messages are passed on.
// Lifeguard's awareness stretches a node's own ProbeInterval up to
// AwarenessMaxMultiplier times while it misses acks itself, so a loaded node
// slows its own accusations.
//
// A SIGKILLed process's UDP port answers with ICMP port unreachable and its
// TCP port refuses at once, but memberlist does not use either: a probe
// still waits for the end of its ProbeInterval. So a killed and a frozen
// node are declared dead in about the same time.
type Profile struct {
	// Name is how reports refer to the profile.
	Name string
	// ProbeInterval: how often each node probes one peer.
	ProbeInterval time.Duration
	// ProbeTimeout: how long a direct UDP ping waits for its ack before the
	// indirect pings start.
	ProbeTimeout time.Duration
	// SuspicionMult: suspicion timeout in ProbeIntervals (scaled by
	// log10 of the cluster size for clusters above 10 nodes).
	SuspicionMult int
	// SuspicionMaxTimeoutMult: how much longer the suspicion timeout may
	// start when confirmations are expected.
	SuspicionMaxTimeoutMult int
	// GossipInterval: how often queued suspect/alive/dead messages are
	// sent to GossipNodes random peers.
	GossipInterval time.Duration
	// GossipNodes: peers per gossip round.
	GossipNodes int
	// IndirectChecks: peers asked to ping a target that missed its ack.
	IndirectChecks int
	// RetransmitMult: each broadcast is retransmitted
	// RetransmitMult*ceil(log10(n+1)) times.
	RetransmitMult int
	// AwarenessMaxMultiplier: the largest factor by which a node that
	// misses acks itself stretches its ProbeInterval.
	AwarenessMaxMultiplier int
	// PushPullInterval: full state exchanges with a random peer (anti
	// entropy; not on the detection path).
	PushPullInterval time.Duration
	// TCPTimeout: dial and I/O timeout of push/pull and TCP pings.
	TCPTimeout time.Duration
}

// Fast is the production profile: a dead node (killed or frozen)
// is declared dead within about 400 ms on a LAN (the goal is ~500 ms; see
// docs/measurements.md for the figures, idle and with both cores busy).
//
//   - ProbeInterval 100 ms: in a 3-node cluster each node probes each peer
//     every ~200 ms, so some node probes the dead one within ~100 ms.
//   - ProbeTimeout 50 ms: a LAN round trip is well under 1 ms; 50 ms leaves
//     room for a GC pause or a busy scheduler on the acking node before
//     the indirect pings (which still have until the end of the interval).
//   - SuspicionMult 2: the suspicion timeout is 2 probe intervals (200 ms)
//     for clusters up to 10 nodes. It is memberlist's smallest multiplier
//     that leaves the suspect a full interval to refute, and with it no
//     confirmations are expected (SuspicionMult-2 = 0), so the timer runs
//     its minimum at once, whatever the cluster size.
//   - SuspicionMaxTimeoutMult 2: unused while no confirmations are
//     expected; kept small so a later SuspicionMult change does not
//     silently allow ten-second suspicions.
//   - GossipInterval 50 ms, GossipNodes 3: the dead verdict reaches every
//     node within one or two gossip rounds of the first declaration.
//   - IndirectChecks 3, RetransmitMult 4, AwarenessMaxMultiplier 8,
//     PushPullInterval 30 s: memberlist's LAN values, which do not delay
//     detection; awareness is kept so an overloaded node slows its own
//     accusations rather than declaring healthy peers dead.
//   - TCPTimeout 1 s: the TCP fallback ping is bounded by the probe
//     interval anyway; 1 s bounds push/pull against a frozen peer.
var Fast = Profile{
	Name:                    "fast",
	ProbeInterval:           100 * time.Millisecond,
	ProbeTimeout:            50 * time.Millisecond,
	SuspicionMult:           2,
	SuspicionMaxTimeoutMult: 2,
	GossipInterval:          50 * time.Millisecond,
	GossipNodes:             3,
	IndirectChecks:          3,
	RetransmitMult:          4,
	AwarenessMaxMultiplier:  8,
	PushPullInterval:        30 * time.Second,
	TCPTimeout:              time.Second,
}

// Relaxed is the test profile: about 2 s to declare a dead node,
// so tests on a loaded 2-core CI machine never see a live node declared
// dead, while a test that kills a node still waits only seconds.
//
//   - ProbeInterval 400 ms, ProbeTimeout 200 ms: an ack may be 200 ms late
//     before indirect pings start and ~400 ms late before the node is
//     suspected; scheduling stalls of a loaded machine stay well below.
//   - SuspicionMult 3: a suspect has 3 probe intervals (1.2 s) to refute
//     before it is declared dead; with 3 or more nodes one confirmation is
//     expected (SuspicionMult-2 = 1), so the timer starts at
//     SuspicionMaxTimeoutMult times that and drops to 1.2 s once a second
//     node also suspects it.
//   - SuspicionMaxTimeoutMult 3: at most 3.6 s when no other node
//     confirms (a node cut off from only one peer).
//   - GossipInterval 100 ms: verdicts spread in well under a probe interval.
//   - the rest as DefaultLANConfig (TCPTimeout 10 s bounded by the probe
//     interval on the detection path).
var Relaxed = Profile{
	Name:                    "relaxed",
	ProbeInterval:           400 * time.Millisecond,
	ProbeTimeout:            200 * time.Millisecond,
	SuspicionMult:           3,
	SuspicionMaxTimeoutMult: 3,
	GossipInterval:          100 * time.Millisecond,
	GossipNodes:             3,
	IndirectChecks:          3,
	RetransmitMult:          4,
	AwarenessMaxMultiplier:  8,
	PushPullInterval:        30 * time.Second,
	TCPTimeout:              10 * time.Second,
}

// LAN is memberlist.DefaultLANConfig's timing, for reference: about 5 s
// to declare a dead node in a 3-node cluster (1 s probes, 4 s suspicion).
// (The runs recorded in docs/measurements.md call it "lan-default".)
var LAN = Profile{
	Name:                    "lan",
	ProbeInterval:           time.Second,
	ProbeTimeout:            500 * time.Millisecond,
	SuspicionMult:           4,
	SuspicionMaxTimeoutMult: 6,
	GossipInterval:          200 * time.Millisecond,
	GossipNodes:             3,
	IndirectChecks:          3,
	RetransmitMult:          4,
	AwarenessMaxMultiplier:  8,
	PushPullInterval:        30 * time.Second,
	TCPTimeout:              10 * time.Second,
}

// ProfileByName returns the profile named name: "fast", "relaxed" or
// "lan".
func ProfileByName(name string) (Profile, error) {
	for _, p := range []Profile{Fast, Relaxed, LAN} {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("%w: unknown membership profile %q (fast, relaxed, lan)", ErrInvalidConfig, name)
}

// Config returns a memberlist configuration with this profile's timings,
// node name name, bound to addr:port (port 0 picks a free one) and logging
// to logOut (nil discards memberlist's log).
func (p Profile) Config(name, addr string, port int, logOut io.Writer) *memberlist.Config {
	c := memberlist.DefaultLANConfig()
	c.Name = name
	c.BindAddr = addr
	c.BindPort = port
	c.AdvertiseAddr = addr
	c.AdvertisePort = port
	c.ProbeInterval = p.ProbeInterval
	c.ProbeTimeout = p.ProbeTimeout
	c.SuspicionMult = p.SuspicionMult
	c.SuspicionMaxTimeoutMult = p.SuspicionMaxTimeoutMult
	c.GossipInterval = p.GossipInterval
	c.GossipNodes = p.GossipNodes
	c.IndirectChecks = p.IndirectChecks
	c.RetransmitMult = p.RetransmitMult
	c.AwarenessMaxMultiplier = p.AwarenessMaxMultiplier
	c.PushPullInterval = p.PushPullInterval
	c.TCPTimeout = p.TCPTimeout
	if logOut == nil {
		logOut = io.Discard
	}
	c.LogOutput = nil
	c.Logger = log.New(logOut, "", log.Lmicroseconds)
	return c
}

// ExpectedDetection is the profile's nominal worst case on an idle
// 3-node cluster with both other nodes confirming: one probe interval
// until some node probes the dead one, one for the failed probe, and the
// minimum suspicion timeout.
func (p Profile) ExpectedDetection() time.Duration {
	return 2*p.ProbeInterval + time.Duration(p.SuspicionMult)*p.ProbeInterval
}

// String names the profile with its main timings.
func (p Profile) String() string {
	return fmt.Sprintf("%s (ProbeInterval %s, ProbeTimeout %s, SuspicionMult %d, SuspicionMaxTimeoutMult %d, GossipInterval %s)",
		p.Name, p.ProbeInterval, p.ProbeTimeout, p.SuspicionMult, p.SuspicionMaxTimeoutMult, p.GossipInterval)
}
