package cluster

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/cluster/metadata"
)

// brokerState is the metadata actor's record of this node's duties as a
// broker towards the controller: its registration, heartbeats (and with
// them the lease) and its leader elections.
type brokerState struct {
	// epoch is this process's broker epoch once registered, else 0.
	epoch       int64
	registering bool
	// duplicate is set once the controller refused the registration as a
	// duplicate: another live process holds the node id; duplicateAt is
	// the tick of the first refusal.
	duplicate   bool
	duplicateAt int64
	// othersSince is the tick since which gossip has shown another live
	// process with this node id while this one is unregistered (-1: none).
	othersSince int64

	// heartbeat is the route of the heartbeat in flight (0: none), sent
	// at tick heartbeatAt.
	heartbeat   uint64
	heartbeatAt int64

	elector  *elector
	electing bool
	// shuttingDown is set by a controlled shutdown: the node proposes
	// itself for no leadership; fencing, once it asked to be fenced: it
	// heartbeats no more.
	shuttingDown bool
	fencing      bool
	electAt      int64 // the tick the last election request was sent
}

func newBrokerState() brokerState { return brokerState{heartbeatAt: -1 << 40, othersSince: -1} }

// otherProcessLives reports, and past a grace fails the node for, another
// live process with this node id in the gossip while this one is not
// registered yet. The other's messages win (peerBook), so this node could
// not even reach the controller to be refused. A process restarted after a
// crash sees its predecessor until gossip declares it failed, within the
// grace.
func (a *metadataActor) otherProcessLives() bool {
	d := &a.duty
	if len(a.peers[a.n.id]) == 0 {
		d.othersSince = -1
		return false
	}
	if d.othersSince < 0 {
		d.othersSince = a.ticks
		a.log.Warn("another process with this node id is in the gossip; waiting for it to go", "node", a.n.id, "other", a.peers[a.n.id][0].name)
	}
	grace := max(duplicateGrace*a.n.cfg.Broker.Millis("broker.session.timeout.ms"), 4*a.n.profile().ExpectedDetection())
	if a.ticks-d.othersSince > a.ticksOf(grace) {
		a.fail(fmt.Errorf("%w: another live process is registered as node %d (gossip name %s); stop it, or give this process another node.id",
			ErrDuplicateNode, a.n.id, a.peers[a.n.id][0].name))
	}
	return true
}

// brokerDuties takes this node's next steps as a broker: register once
// the cluster exists, heartbeat every broker.heartbeat.interval.ms (the
// answer unfences it once it caught up, and renews the lease), and propose
// itself for the leaderless partitions it may lead. The node is ready once
// registered, unfenced, and no partition waits for it as the preferred
// leader.
func (a *metadataActor) brokerDuties() {
	if a.failed != nil {
		return
	}
	d := &a.duty
	if d.elector == nil {
		d.elector = newElector(a.ticksOf(electionStagger), a.ticksOf(uncleanElectionDelay))
	}
	if d.epoch == 0 && a.otherProcessLives() {
		return
	}
	img := a.applied
	if img.ClusterID() == "" {
		return // the controller names the cluster first
	}
	br, registered := img.Broker(a.n.id)
	if d.epoch != 0 && registered && br.Epoch > d.epoch {
		// Our registration was replaced: another process with our id.
		a.fail(fmt.Errorf("registration of node %d epoch %d replaced by epoch %d: another process runs as node %d", a.n.id, d.epoch, br.Epoch, a.n.id))
		return
	}
	if d.epoch == 0 {
		a.register()
		return
	}
	if !d.fencing && a.ticks-d.heartbeatAt >= a.ticksOf(a.n.cfg.Broker.Millis("broker.heartbeat.interval.ms")) {
		// Every interval, answered or not: one lost heartbeat must not
		// cost the session (the one in flight is given up).
		a.heartbeat()
	}
	if !registered || br.Fenced {
		return
	}
	if !d.shuttingDown && (!d.electing || a.ticks-d.electAt >= forwardTimeoutTicks) {
		unclean := func(t *metadata.Topic) bool {
			if v, ok := img.ConfigValue(metadata.TopicResource(t.Name()), "unclean.leader.election.enable"); ok {
				return v == "true"
			}
			return a.n.cfg.Broker.Bool("unclean.leader.election.enable")
		}
		if props := d.elector.proposals(img, a.n.id, d.epoch, a.ticks, unclean); len(props) > 0 {
			d.electing, d.electAt = true, a.ticks
			a.submit(&metadata.ElectLeadersRequest{Proposals: props}, func(metadata.Result) {
				// The image tells the outcome; a lost or refused
				// proposal is made again while the partition is
				// leaderless.
				d.electing = false
			})
		}
	}
	if changes := a.n.replicas.isr.take(a.n.id, d.epoch); len(changes) > 0 {
		// The leaders propose again while the image does not show their
		// change, so a lost or refused request needs no retry here.
		a.submit(&metadata.AlterPartitionRequest{BrokerID: a.n.id, BrokerEpoch: d.epoch, Changes: changes}, func(r metadata.Result) {
			for i, it := range r.(*metadata.AlterPartitionResult).Partitions {
				if !it.Error.Failed() || i >= len(changes) {
					continue
				}
				a.log.Debug("ISR change refused", "topic_id", it.TopicID.String(), "partition", it.Partition, "code", it.Error.Code, "message", it.Error.Message)
				if c := a.n.replicas.get(changes[i].TopicID, changes[i].Partition); c != nil {
					c.ISRChangeRefused(changes[i].LeaderEpoch, changes[i].PartitionEpoch)
				}
			}
		})
	}
	if !a.ready && !d.elector.waiting(img, a.n.id) {
		a.ready = true
		a.n.signalReady(nil)
	}
}

// register asks the controller to register this process.
func (a *metadataActor) register() {
	d := &a.duty
	if d.registering {
		return
	}
	d.registering = true
	req := &metadata.RegisterBrokerRequest{
		NodeID: a.n.id, IncarnationID: a.incarnation,
		Host: a.n.advertisedHost, Port: a.n.advertisedPort, Rack: a.n.rack,
		PreviousBrokerEpoch: a.n.previousEpoch,
	}
	if a.remote != nil {
		req.ActorAddress = a.remote.Address()
	}
	a.submit(req, func(r metadata.Result) {
		d.registering = false
		res := r.(*metadata.RegisterBrokerResult)
		switch {
		case !res.Error.Failed():
			d.epoch = res.BrokerEpoch
			a.n.brokerEpoch.Store(d.epoch)
			a.n.registered(d.epoch)
			a.log.Info("broker registered", "broker_epoch", d.epoch)
		case res.Error.Code == kerr.DuplicateBrokerRegistration.Code:
			if d.duplicate && a.ticks-d.duplicateAt > a.ticksOf(duplicateGrace*a.n.cfg.Broker.Millis("broker.session.timeout.ms")) {
				// Still refused long after a dead predecessor's session
				// would have expired: the other process is alive.
				a.fail(fmt.Errorf("%w: another live process is registered as node %d (%s); stop it, or give this process another node.id",
					ErrDuplicateNode, a.n.id, res.Error.Message))
				return
			}
			if !d.duplicate {
				d.duplicate, d.duplicateAt = true, a.ticks
				a.log.Warn("another live process is registered as this node; waiting for its session to expire",
					"node", a.n.id, "message", res.Error.Message)
				a.n.duplicateRegistration(res.Error.Message)
			}
		default:
			a.log.Debug("registration refused; retrying", "code", res.Error.Code, "message", res.Error.Message)
		}
	})
}

// heartbeat sends one heartbeat; its answer renews the lease from the
// moment it was sent, and tells whether the node is fenced.
func (a *metadataActor) heartbeat() {
	d := &a.duty
	if d.heartbeat != 0 {
		a.withdraw(d.heartbeat)
	}
	d.heartbeatAt = a.ticks
	sent := time.Now()
	epoch := d.epoch
	var id uint64
	id = a.submit(&metadata.BrokerHeartbeatRequest{NodeID: a.n.id, BrokerEpoch: epoch, MetadataOffset: a.applied.Offset()},
		func(r metadata.Result) {
			if d.heartbeat == id {
				d.heartbeat = 0
			}
			res := r.(*metadata.BrokerHeartbeatResult)
			switch {
			case !res.Error.Failed():
				a.n.renewLease(sent)
			case res.Error.Code == kerr.StaleBrokerEpoch.Code && d.epoch == epoch:
				a.log.Warn("the controller no longer knows this registration", "broker_epoch", epoch, "message", res.Error.Message)
			}
		})
	if _, waiting := a.routes[id]; waiting {
		d.heartbeat = id
	}
}

// duplicateGrace is how many session timeouts a registration refused as
// a duplicate is retried before the node gives up: a process restarted
// after a crash waits out its predecessor's session, which ends within one.
const duplicateGrace = 3

// ErrDuplicateNode is StartNode's error when another live process holds
// the node id.
var ErrDuplicateNode = errors.New("cluster: node id in use")

// The election delays (elector).
const (
	electionStagger      = 100 * time.Millisecond
	uncleanElectionDelay = time.Second
)

// ticksOf converts a duration to ticks of the node's ticker, at least 1.
func (a *metadataActor) ticksOf(d time.Duration) int64 {
	return max(1, int64((d+a.n.cfg.TickInterval-1)/a.n.cfg.TickInterval))
}
