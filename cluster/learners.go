package cluster

import (
	"errors"
	"maps"
	"slices"

	"github.com/weirmq/weir/cluster/quorum"
)

// Learners (docs/DESIGN.md "Metadata: one quorum holds the facts"). A
// node whose node.id is not in controller.quorum.voters is a raft learner: it starts knowing only
// the voters, never campaigns, and applies the committed log once the
// controller has added it to the raft configuration with a configuration
// change (quorum.Node.AddLearner). From then on it is a broker like any
// other: it registers, heartbeats, hosts replicas and takes leaderships,
// its requests forwarded to the controller that raft names.
//
// The controller adds a learner when gossip shows it live, not when it
// asks to register: a node outside the raft configuration gets no raft
// message, so it does not know the leader and cannot forward its
// registration (routing.go), while gossip's member meta carries its node
// id and says that it is no voter as soon as it joins. The address book
// (peerBook) holds those members. Gossip stays a hint: adding a learner
// changes who receives the log, never who votes (the voters are static
// and only learner changes are ever applied), and a learner that dies is
// fenced through its broker session like any broker while the voters keep
// quorum. A learner gone for good stays in the configuration (the leader
// keeps probing it, as it does a dead voter); it is added once, and
// restarts find it there.

// learnerRetryTicks paces the proposals that add one learner: raft takes
// one configuration change at a time, so one proposed while another is
// unapplied is dropped, and is proposed again after this many ticks.
const learnerRetryTicks = forwardTimeoutTicks

// addLearners has the controller add every live non-voter that gossip
// knows and the raft configuration lacks.
func (a *metadataActor) addLearners() {
	if a.remote == nil {
		return
	}
	for _, id := range slices.Sorted(maps.Keys(a.peers)) {
		p, _ := a.peers.active(id)
		if p.voter || slices.Contains(a.n.voters, id) || a.q.IsMember(id) {
			delete(a.ctl.learnerAsked, id)
			continue
		}
		if at, ok := a.ctl.learnerAsked[id]; ok && a.ticks-at < learnerRetryTicks {
			continue
		}
		if a.ctl.learnerAsked == nil {
			a.ctl.learnerAsked = map[int32]int64{}
		}
		a.ctl.learnerAsked[id] = a.ticks
		err := a.q.AddLearner(id)
		switch {
		case err == nil:
			a.log.Info("adding a learner to the metadata quorum", "learner", id)
		case errors.Is(err, quorum.ErrNotLeader), errors.Is(err, quorum.ErrStorageUnavailable):
			// Retried while this node leads.
		default:
			a.log.Warn("adding a learner to the metadata quorum failed", "learner", id, "err", err)
		}
	}
}
