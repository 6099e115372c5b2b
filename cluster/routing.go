package cluster

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirmq/weir/cluster/metadata"
)

// Routing of controller requests (docs/DESIGN.md "Controller requests"):
// every metadata change, a client's or the node's own (registration,
// heartbeats, elections, ISR changes), is a typed metadata.Request that
// the metadata actor routes. While this node leads the quorum it decides
// the request itself; otherwise it forwards the request's bytes to the
// leader's metadata actor, and sends it again when the leader changes or
// no answer came within forwardTimeoutTicks (protoactor remote delivers at
// most once). A request may therefore be decided twice, as a Kafka client's
// retry may; the requests are written so that a second decision answers
// sensibly (an existing topic, the same registration).

// route is one request on its way to the controller.
type route struct {
	id   uint64
	req  metadata.Request
	data []byte // EncodeRequest's bytes, made on the first forward
	done func(metadata.Result)
	// sentTo is the node the last forward went to (-1: not sent), at tick
	// sentAt.
	sentTo int32
	sentAt int64
}

// parkedAnswer is a forwarded request's answer waiting for this node's
// image to reach the offset the controller named.
type parkedAnswer struct {
	offset int64
	res    metadata.Result
	done   func(metadata.Result)
}

// forwardTimeoutTicks is how long a forward waits for its answer before it
// is sent again (in ticks of the node's ticker).
const forwardTimeoutTicks = 40

// submit routes req; done runs in the actor with the controller's answer
// once this node's image holds the change.
func (a *metadataActor) submit(req metadata.Request, done func(metadata.Result)) uint64 {
	a.nextRoute++
	r := &route{id: a.nextRoute, req: req, done: done, sentTo: -1}
	a.routes[r.id] = r
	a.route(r)
	return r.id
}

// withdraw forgets a route not answered yet: its done never runs.
func (a *metadataActor) withdraw(id uint64) { delete(a.routes, id) }

// route decides r here while this node leads the quorum, else forwards it
// to the leader when one is known (otherwise it waits for the next tick).
func (a *metadataActor) route(r *route) {
	if a.failed != nil {
		delete(a.routes, r.id)
		r.done(r.req.Refused(metadata.ErrorOf(a.failed)))
		return
	}
	if a.q.IsLeader() {
		if !a.controllerReady() {
			r.sentTo = -1 // decided at a later tick, once caught up
			return
		}
		delete(a.routes, r.id)
		a.decide(r.req, func(res metadata.Result, _ int64) { r.done(res) })
		return
	}
	leader := a.q.Leader()
	r.sentTo = -1
	if leader < 0 || a.remote == nil {
		return
	}
	pid := a.peerPID(leader)
	if pid == nil {
		return
	}
	if r.data == nil {
		data, err := metadata.EncodeRequest(r.req)
		if err != nil {
			delete(a.routes, r.id)
			r.done(r.req.Refused(metadata.ErrorOf(fmt.Errorf("cluster: encode request: %w", err))))
			return
		}
		r.data = data
	}
	if err := a.remote.Send(pid, &forwardedRequest{ID: r.id, From: a.n.id, Request: r.data}, a.self); err != nil {
		return
	}
	r.sentTo, r.sentAt = leader, a.ticks
}

// rerouteStale sends again every route that was not sent, went to a node
// that no longer leads, or waited too long; with this node now leading,
// it decides them all.
func (a *metadataActor) rerouteStale() {
	if len(a.routes) == 0 {
		return
	}
	leader := a.q.Leader()
	for _, r := range sortedRoutes(a.routes) {
		if r.sentTo < 0 || r.sentTo != leader || a.ticks-r.sentAt >= forwardTimeoutTicks {
			a.route(r)
		}
	}
}

// sortedRoutes returns the routes in the order they were submitted.
func sortedRoutes(m map[uint64]*route) []*route {
	out := make([]*route, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j-1].id > out[j].id; j-- {
			out[j-1], out[j] = out[j], out[j-1]
		}
	}
	return out
}

// onForwarded decides a request another node forwarded, when this node
// leads the quorum, and answers the forwarder.
func (a *metadataActor) onForwarded(ctx actor.Context, m *forwardedRequest) {
	reply := ctx.Sender()
	if reply == nil {
		reply = a.peerPID(m.From)
	}
	if reply == nil {
		return // no way to answer: the forwarder retries
	}
	if !a.q.IsLeader() {
		_ = a.remote.Send(reply, &forwardedAnswer{ID: m.ID, NotController: true, Leader: a.q.Leader()}, a.self)
		return
	}
	if !a.controllerReady() {
		return // not caught up with the log yet: the forwarder sends it again
	}
	req, err := metadata.DecodeRequest(m.Request)
	if err != nil {
		a.log.Warn("undecodable controller request dropped", "from", m.From, "err", err)
		return
	}
	a.decide(req, func(res metadata.Result, offset int64) {
		data, err := metadata.EncodeResult(res)
		if err != nil {
			a.log.Error("encoding a controller answer", "from", m.From, "err", err)
			return
		}
		_ = a.remote.Send(reply, &forwardedAnswer{ID: m.ID, Result: data, Offset: offset}, a.self)
	})
}

// onAnswer takes the controller's answer to a forwarded request.
func (a *metadataActor) onAnswer(m *forwardedAnswer) {
	r := a.routes[m.ID]
	if r == nil {
		return // answered already (a request sent twice)
	}
	if m.NotController {
		r.sentTo = -1 // the next tick forwards it to whoever leads then
		return
	}
	res, err := metadata.DecodeResult(m.Result)
	if err != nil {
		a.log.Warn("undecodable controller answer dropped", "err", err)
		return
	}
	delete(a.routes, r.id)
	if a.applied.Offset() >= m.Offset {
		r.done(res)
		return
	}
	a.parked = append(a.parked, parkedAnswer{offset: m.Offset, res: res, done: r.done})
}

// releaseParked answers the parked answers the applied image now holds.
func (a *metadataActor) releaseParked() {
	if len(a.parked) == 0 {
		return
	}
	kept := a.parked[:0]
	var ready []parkedAnswer
	for _, p := range a.parked {
		if a.applied.Offset() >= p.offset {
			ready = append(ready, p)
		} else {
			kept = append(kept, p)
		}
	}
	clear(a.parked[len(kept):])
	a.parked = kept
	for _, p := range ready {
		p.done(p.res)
	}
}

// onDeadLetter re-routes, at the next tick, the requests forwarded to the
// actor that is gone.
func (a *metadataActor) onDeadLetter(m *actor.DeadLetterResponse) {
	if m.Target == nil {
		return
	}
	for _, r := range a.routes {
		if r.sentTo >= 0 {
			if pid := a.peerPID(r.sentTo); pid != nil && pid.Address == m.Target.Address && pid.Id == m.Target.Id {
				r.sentTo = -1
			}
		}
	}
}

// controllerReady reports whether this node, leading the quorum, may
// decide requests: it has applied the record announcing its own term
// (quorum.Node proposes one on taking over), so every entry committed
// before, by earlier leaders, is in its image too. Deciding earlier could
// build a record against an image that lacks one of them, which would
// then fail to apply on every node (KRaft's controller waits the same way
// before it serves).
func (a *metadataActor) controllerReady() bool {
	return a.q.IsLeader() && a.applied.ControllerEpoch() == a.q.Term()
}
