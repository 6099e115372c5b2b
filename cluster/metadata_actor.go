package cluster

import (
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/cluster/quorum"
)

// ErrNodeFailed wraps the error that stopped the metadata actor (a storage
// or apply failure of the quorum); the node serves no metadata changes
// after it.
var ErrNodeFailed = errors.New("cluster: metadata actor failed")

// settled is a batch whose outcome is known, to be answered once the image
// that holds it has been reconciled.
type settled struct {
	done func(err error)
	err  error
}

// metadataActor owns the quorum node (see the package doc): proposals,
// raft ticks and Ready handling, the start-up sequence, elections, and the
// reconciliation of partition actors with every applied image.
type metadataActor struct {
	n   *Node
	q   *quorum.Node
	log *slog.Logger

	applied  *metadata.Image // the last image reconciled and published
	spec     *metadata.Image // applied plus the proposals in flight
	inflight int
	settled  []settled
	queued   []*controllerRequest // requests that arrived before this node led
	failed   error
	// controller decides the requests (validation and placement).
	controller metadata.Controller
	// While the quorum cannot write (quorum.ErrStorageUnavailable), stall
	// paces the retries; proposals are refused with stallErr meanwhile.
	stall      writeStall
	stallErr   error
	stallSince time.Time
	// straysRemoved is set once the partition logs of topics deleted
	// before the start were set aside (replicaSet.removeStrays).
	straysRemoved bool

	// start-up sequence and elections
	stepInFlight bool  // an internal proposal is in flight
	epoch        int64 // this process's broker epoch once registered
	pendingEpoch int64
	incarnation  metadata.UUID
	ready        bool
}

func newMetadataActor(n *Node, q *quorum.Node) *metadataActor {
	var inc metadata.UUID
	for inc.IsZero() {
		_, _ = rand.Read(inc[:])
	}
	img := q.Image()
	return &metadataActor{n: n, q: q, log: n.log, applied: img, spec: img, incarnation: inc,
		controller: metadata.Controller{Config: n.cfg.Broker, Rand: rand.Reader}}
}

// Receive handles one message.
func (a *metadataActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *startMetadata:
		a.handleReady()
	case *tickMetadata:
		if a.failed == nil {
			a.q.Tick()
			if !a.stall.stalled || a.stall.tick() {
				a.handleReady()
			}
		}
	case *controllerRequest:
		a.request(m)
		if !a.stall.stalled { // while stalled only the tick retries
			a.handleReady()
		}
	case *describeQuorum:
		m.reply(quorumStatus(a.q.Status(), a.n.MetadataHealth(), a.n))
	case *actor.Stopping:
		a.failAll(fmt.Errorf("%w: node stopping", ErrNodeFailed))
	}
}

// request decides one controller request against the latest image and
// proposes its records as one batch, or answers at once: a request that
// only validates, or changes nothing, or that the controller cannot take
// now (failed, stalled: every item gets the error). Requests wait while
// this node does not lead the quorum.
func (a *metadataActor) request(m *controllerRequest) {
	if a.failed != nil {
		a.answer(m, m.Request.Refused(metadata.ErrorOf(a.failed)))
		return
	}
	if !a.q.IsLeader() {
		a.queued = append(a.queued, m)
		return
	}
	res, recs := a.controller.Evaluate(a.spec, m.Request)
	if len(recs) == 0 {
		// Nothing to write (validate_only, or every item refused): the
		// answer needs no write, so a stall does not delay it.
		a.answer(m, res)
		return
	}
	if a.stall.stalled {
		a.answer(m, m.Request.Refused(metadata.ErrorOf(a.stallErr)))
		return
	}
	a.propose(recs, func(err error) {
		if err != nil {
			res.Fail(metadata.ErrorOf(err))
		}
		a.answer(m, res)
	})
}

// answer sends a request's result to the node that asked.
func (a *metadataActor) answer(m *controllerRequest, res metadata.Result) {
	a.n.system.Root.Send(m.ReplyTo, &controllerReply{ID: m.ID, Result: res})
}

// propose proposes recs, built against the speculative image, as one
// batch; done runs in the actor with its outcome once it is settled and,
// if applied, the image that holds it reconciled.
func (a *metadataActor) propose(recs []metadata.Record, done func(error)) {
	// One operation is one raft entry: bounded so that it always fits the
	// metadata log (Kafka's MAX_RECORDS_PER_USER_OP, and bytes). The
	// controller's evaluation keeps to it; this is the backstop.
	if err := metadata.CheckOp(recs); err != nil {
		done(err)
		return
	}
	// Apply to the speculative image first: a record that would not apply
	// must never reach the log, where it would stop every node.
	next, err := applyAll(a.spec, recs)
	if err != nil {
		done(err)
		return
	}
	err = a.q.Propose(recs, func(_ uint64, err error) {
		a.settled = append(a.settled, settled{done: done, err: err})
	})
	if err != nil {
		done(fmt.Errorf("cluster: propose: %w", err))
		return
	}
	a.spec = next
	a.inflight++
}

// applyAll applies recs to img as one batch at the next offset.
func applyAll(img *metadata.Image, recs []metadata.Record) (*metadata.Image, error) {
	b := metadata.NewBuilder(img)
	off := img.Offset() + 1
	for _, r := range recs {
		if err := b.Apply(r, off); err != nil {
			return nil, fmt.Errorf("cluster: proposal does not apply: %w", err)
		}
	}
	return b.Image(), nil
}

// handleReady persists and applies what raft has ready, reconciles the
// partition actors with a new image, publishes it, answers the proposals
// it settled and moves the start-up sequence on.
func (a *metadataActor) handleReady() {
	if a.failed != nil {
		return
	}
	writable := true
	for a.q.HasReady() {
		// A single voter has no one to send to; the replicated cluster
		// routes these messages to the other voters (also those returned
		// with ErrStorageUnavailable).
		if _, err := a.q.HandleReady(); err != nil {
			if !errors.Is(err, quorum.ErrStorageUnavailable) {
				a.fail(err)
				return
			}
			a.cannotWrite(err)
			writable = false
			break
		}
	}
	// Partition actors start only from an image that holds every entry
	// applied before the restart: an older one could name a topic since
	// deleted (or recreated under a new id) and open, then delete, the
	// directory that now holds another topic's data.
	if img := a.q.Image(); img != a.applied && uint64(img.Offset()) >= a.q.StartCommit() {
		if !a.straysRemoved {
			// A node without metadata from before has no history to judge
			// directories by: whatever is in its data directory is left.
			if a.q.StartCommit() > 0 {
				a.n.replicas.removeStrays(img)
			}
			a.straysRemoved = true
		}
		a.n.replicas.reconcile(img)
		a.n.groups.topicsDeleted(a.applied, img)
		a.applied = img
		a.n.image.Store(img)
	}
	if writable && a.stall.stalled {
		a.canWrite() // after the image it wrote is published
	}
	done := a.settled
	a.settled = nil
	for _, s := range done {
		a.inflight--
		s.done(s.err)
	}
	if a.inflight <= 0 {
		a.inflight = 0
		a.spec = a.applied
	}
	if a.stall.stalled {
		return // no new proposals until the quorum writes again
	}
	if a.q.IsLeader() && len(a.queued) > 0 {
		queued := a.queued
		a.queued = nil
		for _, m := range queued {
			a.request(m)
		}
		if a.q.HasReady() {
			a.handleReady()
			return
		}
	}
	a.advance()
}

// cannotWrite records a failed metadata write: the first of a stall is
// logged and published, later ones only pace the retries.
func (a *metadataActor) cannotWrite(err error) {
	if !a.stall.failed() {
		return
	}
	cause := stallCause(err)
	a.stallSince = a.n.cfg.Now()
	a.stallErr = fmt.Errorf("%w (%s); metadata changes are refused until it can", metadata.ErrLogUnavailable, cause)
	a.log.Error("metadata quorum cannot write its log; refusing metadata changes and retrying", "err", err)
	a.n.health.Store(&MetadataHealth{Since: a.stallSince, Cause: cause})
}

// canWrite ends a stall: a write succeeded again.
func (a *metadataActor) canWrite() {
	attempts := a.stall.recovered()
	a.log.Info("metadata quorum writes again", "stalled_for", a.n.cfg.Now().Sub(a.stallSince).Round(time.Millisecond), "failed_attempts", attempts)
	a.stallErr = nil
	a.n.health.Store(&MetadataHealth{Writable: true})
}

// fail stops the actor's metadata work for good.
func (a *metadataActor) fail(err error) {
	a.failed = fmt.Errorf("%w: %w", ErrNodeFailed, err)
	a.log.Error("metadata quorum stopped", "err", err)
	a.n.health.Store(&MetadataHealth{Since: a.n.cfg.Now(), Cause: "stopped: " + stallCause(err), Stopped: true})
	a.failAll(a.failed)
	a.n.signalReady(a.failed)
}

// failAll answers every waiting proposal and request with err.
func (a *metadataActor) failAll(err error) {
	for _, s := range a.settled {
		s.done(err)
	}
	for _, m := range a.queued {
		a.answer(m, m.Request.Refused(metadata.ErrorOf(err)))
	}
	a.settled, a.queued = nil, nil
}

// internal proposes one step of the start-up sequence or an election,
// built against the speculative image; the next step waits for its
// outcome. (These steps become controller requests from other nodes with
// the replicated cluster: RegisterBroker, Heartbeat, ElectLeader.)
func (a *metadataActor) internal(what string, build func(*metadata.Image) ([]metadata.Record, error), applied func()) {
	finish := func(err error) {
		a.stepInFlight = false
		if err != nil {
			a.log.Warn("metadata proposal failed; retrying", "step", what, "err", err)
			return
		}
		if applied != nil {
			applied()
		}
	}
	recs, err := build(a.spec)
	if err != nil || len(recs) == 0 {
		finish(err)
		return
	}
	a.stepInFlight = true
	a.propose(recs, finish)
}

// advance takes the next step of the start-up sequence, then keeps
// electing this node for leaderless partitions it may lead.
func (a *metadataActor) advance() {
	if a.failed != nil || a.stepInFlight || !a.q.IsLeader() {
		return
	}
	img := a.applied
	br, registered := img.Broker(a.n.id)
	switch {
	case img.ClusterID() == "":
		a.internal("create cluster", createClusterRecords, nil)
	case a.epoch == 0 || !registered || br.Epoch != a.epoch:
		if a.epoch != 0 {
			// Our registration was replaced: another process with our id.
			a.fail(fmt.Errorf("registration of node %d epoch %d replaced by epoch %d", a.n.id, a.epoch, br.Epoch))
			return
		}
		a.internal("register broker", a.registerRecords, func() {
			a.epoch = a.pendingEpoch
			a.n.brokerEpoch.Store(a.epoch)
		})
	case br.Fenced:
		a.internal("unfence broker", func(*metadata.Image) ([]metadata.Record, error) {
			return []metadata.Record{metadata.BrokerUnfencedRecord{NodeID: a.n.id, BrokerEpoch: a.epoch}}, nil
		}, nil)
	default:
		if recs := electionRecords(img, a.n.id, a.epoch); len(recs) > 0 {
			a.internal("elect leaders", func(img *metadata.Image) ([]metadata.Record, error) {
				return electionRecords(img, a.n.id, a.epoch), nil
			}, nil)
			return
		}
		if !a.ready {
			a.ready = true
			a.n.signalReady(nil)
		}
	}
}

// createClusterRecords names a new cluster with a random id.
func createClusterRecords(img *metadata.Image) ([]metadata.Record, error) {
	if img.ClusterID() != "" {
		return nil, nil
	}
	var id metadata.UUID
	for id.IsZero() {
		_, _ = rand.Read(id[:])
	}
	return []metadata.Record{metadata.ClusterCreatedRecord{ClusterID: id.String()}}, nil
}

// registerRecords registers this process with the advertised listener.
func (a *metadataActor) registerRecords(img *metadata.Image) ([]metadata.Record, error) {
	recs, epoch, err := metadata.RegisterBrokerRecords(img, metadata.BrokerRegistrationRecord{
		NodeID:        a.n.id,
		IncarnationID: a.incarnation,
		Host:          a.n.advertisedHost,
		Port:          a.n.advertisedPort,
		Rack:          a.n.rack,
	})
	if err != nil {
		return nil, err
	}
	a.pendingEpoch = epoch
	return recs, nil
}
