package cluster

import (
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/cluster/quorum"
	"github.com/weirmq/weir/cluster/transport"
	"github.com/weirmq/weir/internal/kafkaerr"
)

// ErrNodeFailed wraps the error that stopped the metadata actor (a storage
// or apply failure of the quorum); the node serves no metadata changes
// after it, and answers every controller request UNKNOWN_SERVER_ERROR
// (internal/kafkaerr).
var ErrNodeFailed = kafkaerr.New(kafkaerr.NodeFailed, "cluster: metadata actor failed")

// settled is a batch whose outcome is known, to be answered once the image
// that holds it has been reconciled.
type settled struct {
	done  func(index int64, err error)
	index int64
	err   error
}

// metadataActor owns the quorum node (see the package doc): raft ticks,
// messages and Ready handling, the routing of controller requests
// (routing.go), the controller's decisions and duties while this node
// leads the quorum (controller_duties.go), the node's own duties as a
// broker (broker_duties.go: registration, heartbeats, elections), and the
// reconciliation of partition actors with every applied image.
type metadataActor struct {
	n    *Node
	q    *quorum.Node
	log  *slog.Logger
	self *actor.PID
	// remote reaches the other nodes' metadata actors; nil for a single
	// node without gossip.
	remote *transport.Transport
	peers  peerBook
	// born is when the actor was made: controller time (sessions) counts
	// from it on the monotonic clock.
	born time.Time

	applied  *metadata.Image // the last image reconciled and published
	spec     *metadata.Image // applied plus the proposals in flight
	inflight int
	settled  []settled
	// proposed and answered count the proposals made and settled, and
	// dropped those settled with an error; onSpec are the answers decided
	// against proposals still in flight (decide), each released once they
	// settled.
	proposed, answered, dropped uint64
	onSpec                      []specAnswer
	// confirmed are answers whose ConfirmLeadership came back, to run
	// after the Ready that brought it.
	confirmed []func()
	failed    error
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

	// routing (routing.go)
	ticks     int64
	routes    map[uint64]*route
	nextRoute uint64
	parked    []parkedAnswer

	ctl   controllerState // controller_duties.go
	duty  brokerState     // broker_duties.go
	ready bool
	// wakeSent is set while a writesDone is on its way to the actor.
	wakeSent atomic.Bool
	// watches hold a connection to every other broker (peer_watch.go);
	// nil for a single node without gossip.
	watches *peerWatches
	// incarnation identifies this process in its registration.
	incarnation metadata.UUID
	// selfRegistered is set once an applied image held this process's
	// registration (registeredIn).
	selfRegistered bool
}

func newMetadataActor(n *Node, q *quorum.Node, remote *transport.Transport) *metadataActor {
	img := q.Image()
	a := &metadataActor{n: n, q: q, log: n.log, remote: remote, applied: img, spec: img, incarnation: n.incarnation,
		born: time.Now(), routes: map[uint64]*route{}, peers: peerBook{}, duty: newBrokerState(),
		controller: metadata.Controller{Config: n.cfg.Broker, Rand: rand.Reader, Voters: len(n.voters)}}
	if n.clustered {
		a.controller.Sessions = metadata.NewSessions(n.cfg.Broker.Int("broker.session.timeout.ms"),
			n.cfg.Broker.Int("broker.heartbeat.interval.ms"))
	}
	return a
}

// Receive handles one message.
func (a *metadataActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.self = ctx.Self()
		// The quorum's writes run on a goroutine of their own: the
		// mailbox never waits on an fsync (raft ticks, heartbeats and
		// elections go on while the disk is slow). A finished write
		// wakes the actor, once for as many as finish meanwhile.
		system, self := ctx.ActorSystem(), ctx.Self()
		a.q.Async(func() {
			if a.wakeSent.CompareAndSwap(false, true) {
				system.Root.Send(self, &writesDone{})
			}
		})
		if a.n.clustered {
			a.watches = newPeerWatches(a.n.id, func(node int32) {
				system.Root.Send(self, &processGone{node: node, watched: true})
			})
			a.n.watches.Store(a.watches)
		}
	case *startMetadata:
		a.handleReady()
	case *writesDone:
		a.wakeSent.Store(false)
		a.handleReady()
	case *tickMetadata:
		if a.failed == nil {
			a.ticks++
			a.q.Tick()
			if !a.stall.stalled || a.stall.tick() {
				a.handleReady()
			}
		}
	case *raftMessage:
		a.onRaft(m)
	case *controllerRequest:
		reply := m.ReplyTo
		id := m.ID
		a.submit(m.Request, func(res metadata.Result) {
			a.n.system.Root.Send(reply, &controllerReply{ID: id, Result: res})
		})
		if !a.stall.stalled { // while stalled only the tick retries
			a.handleReady()
		}
	case *submitted:
		a.submit(m.req, m.done)
		a.handleReady()
	case *forwardedRequest:
		a.onForwarded(ctx, m)
		a.handleReady()
	case *forwardedAnswer:
		a.onAnswer(m)
	case *actor.DeadLetterResponse:
		// A forward reached a node whose metadata actor is gone (the
		// process restarted, or stops): send the waiting requests again
		// at the next tick rather than after the forward timeout.
		a.onDeadLetter(m)
	case *memberChanged:
		a.onMember(m.event)
	case *processGone:
		if s := a.controller.Sessions; s != nil {
			why := "gossip says it failed"
			if m.watched {
				why = "its connection closed"
			}
			a.log.Info("a node's listener refuses connections: its process is gone", "node", m.node, "after", why, "controller", a.q.IsLeader())
			s.ProcessGone(m.node, a.nowMs())
			a.leaderGone(m.node)
			a.handleReady() // the controller fences now, not at the next tick
		}
	case *shutdownStarted:
		a.duty.shuttingDown = true
		a.duty.fencing = a.duty.fencing || m.fence
	case *describeQuorum:
		if m.raw != nil {
			m.raw(a.q.Status())
			return
		}
		m.reply(quorumStatus(a.q.Status(), a.n.MetadataHealth(), a.n))
	case *actor.Stopping:
		a.failAll(fmt.Errorf("%w: node stopping", ErrNodeFailed))
		a.q.Close()
		if a.watches != nil {
			a.watches.stopAll()
		}
	}
}

// nowMs is the controller's clock: milliseconds since the actor was made,
// on the monotonic clock.
func (a *metadataActor) nowMs() int64 { return time.Since(a.born).Milliseconds() }

// decide decides one controller request against the latest image and
// proposes its records as one batch, or answers at once: a request that
// only validates, or changes nothing, or that the controller cannot take
// now (failed, stalled: every item gets the error). This node leads the
// quorum. done gets the result and the metadata offset an image must reach
// to hold it.
func (a *metadataActor) decide(req metadata.Request, done func(metadata.Result, int64)) {
	if a.failed != nil {
		done(req.Refused(metadata.ErrorOf(a.failed)), a.applied.Offset())
		return
	}
	a.stampNow(req)
	res, recs := a.controller.Evaluate(a.spec, req)
	if len(recs) == 0 && a.inflight > 0 && !a.stall.stalled && len(a.n.voters) > 1 {
		// The answer rests on proposals still in flight (a retried
		// registration finds its first attempt's; a heartbeat, the
		// unfencing it asked for): given now, a node could act on what
		// the log may never hold. It waits until they settled, and is
		// decided again if one failed. (While writes stall it is given
		// at once, as before: nothing in flight settles meanwhile. A
		// single voter's proposals fail only when its writes stall, so
		// it answers at once too.)
		a.onSpec = append(a.onSpec, specAnswer{req: req, done: done, res: res, after: a.proposed, dropped: a.dropped})
		return
	}
	a.carryOut(req, res, recs, done)
}

// specAnswer is an answer decided against proposals in flight.
type specAnswer struct {
	req  metadata.Request
	done func(metadata.Result, int64)
	res  metadata.Result
	// after is the count of proposals made when it was decided; dropped
	// the count of failed ones then.
	after, dropped uint64
}

// releaseSpecAnswers gives the answers whose proposals have settled: as
// decided if none of them failed since, else decided again.
func (a *metadataActor) releaseSpecAnswers() {
	if len(a.onSpec) == 0 {
		return
	}
	waiting := a.onSpec
	a.onSpec = nil
	for i, w := range waiting {
		if w.after > a.answered {
			a.onSpec = append(a.onSpec, waiting[i:]...)
			return
		}
		if a.dropped != w.dropped || a.failed != nil {
			a.decide(w.req, w.done)
			continue
		}
		a.carryOut(w.req, w.res, nil, w.done)
	}
}

// carryOut answers a decided request: at once when it writes nothing (a
// heartbeat once the quorum confirmed this leadership), else once its
// records are applied.
func (a *metadataActor) carryOut(req metadata.Request, res metadata.Result, recs []metadata.Record, done func(metadata.Result, int64)) {
	if len(recs) == 0 {
		if _, ok := req.(*metadata.BrokerHeartbeatRequest); ok {
			// The answer renews the broker's lease: only a controller a
			// quorum still follows may give it (ConfirmLeadership), or a
			// deposed one that has not noticed would keep a cut-off
			// leader acknowledging writes.
			offset := a.applied.Offset()
			a.q.ConfirmLeadership(func(ok bool) {
				a.confirmed = append(a.confirmed, func() {
					if !ok {
						res = req.Refused(metadata.APIError{Code: kerr.NotController.Code, Message: "no longer the controller"})
					}
					done(res, offset)
				})
			})
			return
		}
		// Nothing to write (validate_only, or every item refused): the
		// answer needs no write, so a stall does not delay it.
		done(res, a.applied.Offset())
		return
	}
	if a.stall.stalled {
		done(req.Refused(metadata.ErrorOf(a.stallErr)), a.applied.Offset())
		return
	}
	a.propose(recs, func(index int64, err error) {
		if err != nil {
			res.Fail(metadata.ErrorOf(err))
		}
		done(res, max(index, a.applied.Offset()))
	})
}

// stampNow sets the controller's clock on the requests that carry it: the
// sessions are the controller's, so the sender's clock is never used.
func (a *metadataActor) stampNow(req metadata.Request) {
	switch r := req.(type) {
	case *metadata.RegisterBrokerRequest:
		r.NowMs = a.nowMs()
	case *metadata.BrokerHeartbeatRequest:
		r.NowMs = a.nowMs()
	}
}

// propose proposes recs, built against the speculative image, as one
// batch; done runs in the actor with its outcome (and the batch's offset
// once applied) once it is settled and, if applied, the image that holds
// it reconciled.
func (a *metadataActor) propose(recs []metadata.Record, done func(index int64, err error)) {
	// One operation is one raft entry: bounded so that it always fits the
	// metadata log (Kafka's MAX_RECORDS_PER_USER_OP, and bytes). The
	// controller's evaluation keeps to it; this is the backstop.
	if err := metadata.CheckOp(recs); err != nil {
		done(-1, err)
		return
	}
	// Apply to the speculative image first: a record that would not apply
	// must never reach the log, where it would stop every node.
	next, err := applyAll(a.spec, recs)
	if err != nil {
		done(-1, err)
		return
	}
	err = a.q.Propose(recs, func(index uint64, err error) {
		a.settled = append(a.settled, settled{done: done, index: int64(index), err: err})
	})
	if err != nil {
		done(-1, fmt.Errorf("cluster: propose: %w", err))
		return
	}
	a.spec = next
	a.inflight++
	a.proposed++
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

// handleReady moves the quorum on (quorum.Node.HandleReady: writes handed
// to the writer, those done delivered, committed entries applied), sends
// raft's messages, reconciles the partition actors with a new image, publishes
// it, answers the proposals it settled and moves the duties on.
func (a *metadataActor) handleReady() {
	if a.failed != nil {
		return
	}
	writable := true
	for a.q.HasReady() {
		msgs, err := a.q.HandleReady()
		// Messages of Readys persisted before a failed write are still to
		// be sent.
		a.sendRaft(msgs)
		if err != nil {
			if !errors.Is(err, quorum.ErrStorageUnavailable) {
				a.fail(err)
				return
			}
			if !a.q.Retrying() {
				// (While a retry runs on the writer its outcome is not
				// known yet: it is counted when it comes.)
				a.cannotWrite(err)
			}
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
		if a.registeredIn(img) {
			a.n.replicas.reconcile(img)
		}
		if a.watches != nil {
			a.watches.sync(img)
		}
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
		a.answered++
		if s.err != nil {
			a.dropped++
		}
		s.done(s.index, s.err)
	}
	if a.inflight <= 0 {
		a.inflight = 0
		a.spec = a.applied
	}
	a.releaseSpecAnswers()
	a.releaseParked()
	confirmed := a.confirmed
	a.confirmed = nil
	for _, f := range confirmed {
		f()
	}
	a.n.quorumLeader.Store(a.q.Leader())
	if a.stall.stalled {
		return // no new proposals until the quorum writes again
	}
	a.rerouteStale()
	a.controllerDuties()
	a.brokerDuties()
	if a.q.HasReady() {
		a.handleReady()
	}
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
	// Nothing in flight settles while writes stall: the answers waiting
	// for it are given as decided, as every answer that writes nothing is
	// during a stall.
	waiting := a.onSpec
	a.onSpec = nil
	for _, w := range waiting {
		a.carryOut(w.req, w.res, nil, w.done)
	}
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
		s.done(-1, err)
	}
	for _, r := range sortedRoutes(a.routes) {
		r.done(r.req.Refused(metadata.ErrorOf(err)))
	}
	for _, p := range a.parked {
		p.done(p.res)
	}
	for _, w := range a.onSpec {
		w.done(w.req.Refused(metadata.ErrorOf(err)), a.applied.Offset())
	}
	a.onSpec = nil
	a.settled, a.routes, a.parked = nil, map[uint64]*route{}, nil
}

// registeredIn reports whether the partitions may follow img: once an
// image has held this process's registration (its incarnation id), and
// from then on. Before, a restarted process would lead from its stale
// image at its predecessor's leader epoch without the ISR addition its
// predecessor proposed and the quorum may yet commit, and advance the
// high watermark past a replica the controller then counts in sync; its
// registration fences the predecessor's, moving those leaderships, in
// the same batch (Kafka's broker likewise publishes no metadata to its
// replica manager before it has registered and caught up).
func (a *metadataActor) registeredIn(img *metadata.Image) bool {
	if !a.selfRegistered {
		b, ok := img.Broker(a.n.id)
		a.selfRegistered = ok && b.IncarnationID == a.incarnation
	}
	return a.selfRegistered
}
