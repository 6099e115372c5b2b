package cluster

import (
	"crypto/rand"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirmq/weir/cluster/membership"
	"github.com/weirmq/weir/cluster/quorum"
	"github.com/weirmq/weir/cluster/transport"
)

// planCluster reads the replicated cluster's settings: a node with
// gossip.listener joins a cluster, one without runs alone as its own
// single voter; controller.quorum.voters lists the voters, and a node not
// listed is a learner (learners.go).
func (n *Node) planCluster() error {
	for n.incarnation.IsZero() {
		_, _ = rand.Read(n.incarnation[:])
	}
	voters, err := n.cfg.Broker.VoterIDs()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	_, n.clustered = n.cfg.Broker.Value("gossip.listener")
	if len(voters) == 0 {
		voters = []int32{n.id}
	}
	if !n.clustered && (len(voters) > 1 || voters[0] != n.id) {
		return fmt.Errorf("%w: controller.quorum.voters %v names other nodes, but gossip.listener (--gossip-addr) is not set: nodes find each other by gossip", ErrInvalidConfig, voters)
	}
	// A node not among the voters is a learner (learners.go).
	n.voters = voters
	return nil
}

// profile returns the gossip.profile's failure-detection timings.
func (n *Node) profile() membership.Profile {
	p, err := membership.ProfileByName(n.cfg.Broker.String("gossip.profile"))
	if err != nil {
		return membership.Fast
	}
	return p
}

// quorumConfig is the raft configuration: the voters, and an election
// timeout that follows the gossip profile (a silent leader is replaced
// about when gossip declares it dead).
func (n *Node) quorumConfig() quorum.Config {
	c := quorum.DefaultConfig(n.id)
	c.Voters = n.voters
	if n.cfg.MetadataSnapshotEntries > 0 {
		c.SnapshotEntries = n.cfg.MetadataSnapshotEntries
	}
	if !n.clustered {
		return c
	}
	election := 500 * time.Millisecond
	switch n.cfg.Broker.String("gossip.profile") {
	case "relaxed":
		election = 2 * time.Second
	case "lan":
		election = 5 * time.Second
	}
	c.ElectionTicks = max(c.HeartbeatTicks+1, int(election/n.cfg.TickInterval))
	return c
}

// startTransport starts the actor remote other nodes reach this one by:
// remote.listener, else the gossip host with a free port.
func (n *Node) startTransport() error {
	addr, ok := n.cfg.Broker.Value("remote.listener")
	if !ok {
		host, _, err := net.SplitHostPort(n.cfg.Broker.String("gossip.listener"))
		if err != nil {
			return fmt.Errorf("%w: gossip.listener %q: %w", ErrInvalidConfig, n.cfg.Broker.String("gossip.listener"), err)
		}
		addr = net.JoinHostPort(host, "0")
	}
	t, err := transport.Start(n.system, transport.Config{ListenAddr: addr, Types: remoteTypes, Logger: n.log})
	if err != nil {
		return fmt.Errorf("cluster: start remote on %s: %w", addr, err)
	}
	n.remote = t
	return nil
}

// spawnMetadata spawns the metadata actor: under its well-known name and
// with the transport's envelope middleware on a cluster.
func (n *Node) spawnMetadata(ma *metadataActor) (*actor.PID, error) {
	producer := func() actor.Actor { return ma }
	if n.remote == nil {
		return n.system.Root.Spawn(actor.PropsFromProducer(producer)), nil
	}
	pid, err := n.system.Root.SpawnNamed(n.remote.Props(producer), metadataActorName(n.id))
	if err != nil {
		return nil, fmt.Errorf("cluster: spawn metadata actor: %w", err)
	}
	return pid, nil
}

// startMembership joins the gossip; its events go to the metadata actor.
func (n *Node) startMembership() error {
	m, err := membership.Start(membership.Config{
		BindAddr: n.cfg.Broker.String("gossip.listener"),
		Join:     n.cfg.Broker.List("gossip.join"),
		Profile:  n.profile(),
		Meta:     n.memberMeta(0),
		Logger:   n.log,
		OnEvent: func(e membership.Event) {
			n.system.Root.Send(n.meta, &memberChanged{event: e})
		},
	})
	if err != nil {
		return fmt.Errorf("cluster: start gossip: %w", err)
	}
	n.members = m
	return nil
}

// memberMeta is what this node gossips about itself.
func (n *Node) memberMeta(epoch int64) membership.Meta {
	m := membership.Meta{
		NodeID: n.id, BrokerEpoch: epoch, Incarnation: n.incarnation,
		KafkaAddr: net.JoinHostPort(n.advertisedHost, strconv.Itoa(int(n.advertisedPort))),
		Rack:      n.rack, Voter: slices.Contains(n.voters, n.id),
	}
	if n.remote != nil {
		m.RemoteAddr = n.remote.Address()
	}
	return m
}

// registered gossips the new broker epoch (off the metadata actor:
// memberlist waits for the broadcast).
func (n *Node) registered(epoch int64) {
	if n.members == nil {
		return
	}
	go func() {
		if err := n.members.SetMeta(n.memberMeta(epoch)); err != nil {
			n.log.Warn("gossiping the broker epoch", "err", err)
		}
	}()
}

// duplicateRegistration records the controller's refusal, for StartNode's
// error.
func (n *Node) duplicateRegistration(msg string) { n.duplicate.Store(&msg) }

// renewLease extends the lease from sent, when the heartbeat the
// controller answered was sent.
func (n *Node) renewLease(sent time.Time) {
	v := int64(sent.Sub(n.born))
	for {
		old := n.leaseFrom.Load()
		if v <= old || n.leaseFrom.CompareAndSwap(old, v) {
			return
		}
	}
}

// LeaseValid reports whether this node may still act as a leader: the
// last heartbeat the controller answered was sent less than
// broker.session.timeout.ms ago (on the monotonic clock), so no
// controller has fenced it yet (docs/DESIGN.md "Leader lease"). A single node
// without gossip has no one to lose its leadership to and always holds it.
func (n *Node) LeaseValid() bool {
	if !n.clustered {
		return true
	}
	from := n.leaseFrom.Load()
	if from == 0 {
		return false
	}
	return time.Since(n.born)-time.Duration(from) < n.cfg.Broker.Millis("broker.session.timeout.ms")
}

// LeaseUntil is when the lease lapses unless a heartbeat's answer renews
// it (in the past once it has lapsed); zero for a single node, whose
// lease never lapses. A consumer's long poll ends by then
// (wire/01_fetch.go leaseBound).
func (n *Node) LeaseUntil() time.Time {
	if !n.clustered {
		return time.Time{}
	}
	from := n.leaseFrom.Load()
	if from == 0 {
		return time.Unix(0, 1) // no lease yet: lapsed
	}
	return n.born.Add(time.Duration(from) + n.cfg.Broker.Millis("broker.session.timeout.ms"))
}
