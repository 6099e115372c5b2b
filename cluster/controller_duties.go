package cluster

import (
	"crypto/rand"

	"github.com/weirmq/weir/cluster/metadata"
)

// controllerState is what the metadata actor keeps while, and about, this
// node leading the quorum.
type controllerState struct {
	// term is the raft term this node last took up the controller's
	// duties in: a new term resets the broker sessions.
	term uint64
	// creating and fencing are set while the cluster's creation or a
	// fencing batch is in flight.
	creating bool
	fencing  bool
	// lastMs is when the duties last ran (controller time): a long gap
	// means the controller itself was not running.
	lastMs int64
	// learnerAsked is the tick each learner's addition was last proposed
	// at, for the nodes not yet in the raft configuration (learners.go).
	learnerAsked map[int32]int64
}

// controllerDuties runs the controller's own work while this node leads
// the quorum: it names a new cluster, gives every broker a full session
// when it takes over (it has no heartbeat history), and fences the brokers
// whose sessions expired (docs/DESIGN.md "Brokers and fencing"), and adds
// the learners gossip shows to the raft configuration (learners.go).
func (a *metadataActor) controllerDuties() {
	if a.failed != nil || !a.controllerReady() {
		a.ctl.lastMs = 0 // a gap while not leading is no stall
		return
	}
	img := a.spec
	if term := a.q.Term(); term != a.ctl.term {
		a.ctl.term = term
		a.ctl.lastMs = a.nowMs()
		if s := a.controller.Sessions; s != nil {
			s.Reset(img, a.nowMs())
		}
	}
	if img.ClusterID() == "" {
		if !a.ctl.creating {
			a.ctl.creating = true
			a.propose(createClusterRecords(), func(_ int64, err error) {
				a.ctl.creating = false
				if err != nil {
					a.log.Warn("creating the cluster failed; retrying", "err", err)
				}
			})
		}
		return
	}
	a.addLearners()
	if a.controller.Sessions == nil || a.ctl.fencing {
		return
	}
	now := a.nowMs()
	interval := a.n.cfg.Broker.Int("broker.heartbeat.interval.ms")
	if gap := now - a.ctl.lastMs; a.ctl.lastMs > 0 && gap > 2*interval {
		// The controller did not run for a while: the heartbeats that
		// waited in its mailbox must not cost the brokers their sessions.
		a.controller.Sessions.Extend(gap - interval)
	}
	a.ctl.lastMs = now
	fenced, recs := a.controller.FenceExpired(img, a.nowMs())
	if len(recs) == 0 {
		return
	}
	a.ctl.fencing = true
	a.log.Warn("fencing brokers whose sessions expired", "brokers", fenced)
	a.propose(recs, func(_ int64, err error) {
		a.ctl.fencing = false
		if err != nil {
			a.log.Warn("fencing failed; retrying", "brokers", fenced, "err", err)
		}
	})
}

// createClusterRecords names a new cluster with a random id.
func createClusterRecords() []metadata.Record {
	var id metadata.UUID
	for id.IsZero() {
		_, _ = rand.Read(id[:])
	}
	return []metadata.Record{metadata.ClusterCreatedRecord{ClusterID: id.String()}}
}
