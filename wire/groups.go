package wire

// Routing of the group APIs (08_offsetcommit.go, 09_offsetfetch.go,
// 11_joingroup.go ... 16_listgroups.go, 42_deletegroups.go,
// 47_offsetdelete.go) to the group coordinators (actors/group): a group
// lives in __consumer_offsets partition PartitionFor(group id, partition
// count), and its coordinator runs on the node leading that partition.
// Handle validates the group id (INVALID_GROUP_ID comes before any
// coordinator error, as in Kafka), sends one group.Route per group to the
// local coordinator in request order, and the Defer waits for the
// answers. A group whose partition is not led here, or whose coordinator
// stopped before answering, gets NOT_COORDINATOR (the client looks the
// coordinator up again), as does every group while the node's lease has
// lapsed; a loading coordinator answers COORDINATOR_LOAD_IN_PROGRESS
// itself.

import (
	"context"
	"net"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/group"
	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster/metadata"
)

// Backstops for a coordinator's answer: it always answers (parked joins
// and syncs end with the group's own timers, appends with
// offsets.commit.timeout.ms), so these fire only when something is broken.
const (
	groupBackstop = 30 * time.Second
	// rebalanceBackstop bounds a JoinGroup or SyncGroup, which may be
	// parked for a member's rebalance timeout (or five minutes for a new
	// member).
	rebalanceBackstop = time.Hour
)

// groupCall is one group's part of a request routed to its coordinator.
type groupCall struct {
	group string
	op    group.Op
	// done receives the coordinator's response, or nil and the error code
	// of a coordinator that is not here or did not answer.
	done func(resp kmsg.Response, code int16)
}

// groupCoordinator returns the local coordinator of a group, or nil.
func (h *BrokerHandler) groupCoordinator(img *metadata.Image, groupID string) *group.Coordinator {
	t, ok := img.Topic(metadata.ConsumerOffsetsTopic)
	if !ok {
		return nil
	}
	coords := h.broker.GroupCoordinators()
	if coords == nil {
		return nil
	}
	return coords.Get(group.PartitionFor(groupID, t.NumPartitions()))
}

// callGroups sends each call's Route to its group's coordinator, in
// order, and answers with finish once every call is done: at once when no
// call reached a coordinator, else in a Defer.
func (h *BrokerHandler) callGroups(calls []groupCall, backstop time.Duration, finish func() Response) Response {
	img := h.broker.Image()
	type sent struct {
		call groupCall
		pid  *actor.PID
	}
	var inbox *partition.Inbox
	pending := map[uint64]sent{}
	leased := h.broker.LeaseValid()
	for _, c := range calls {
		co := h.groupCoordinator(img, c.group)
		if co == nil || !leased {
			// Without the lease (docs/DESIGN.md "Leader lease") another
			// node may lead the group's partition, and coordinate it, by
			// now: the client looks the coordinator up again.
			c.done(nil, kerr.NotCoordinator.Code)
			continue
		}
		if inbox == nil {
			inbox = partition.NewInbox(h.cfg.System)
		}
		id := inbox.NextID()
		pending[id] = sent{call: c, pid: co.PID()}
		inbox.Watch(co.PID()) // before the Route: a stop after it is seen
		co.Send(&group.Route{ID: id, Group: c.group, Op: c.op}, inbox.PID())
	}
	if inbox == nil {
		return finish()
	}
	return Defer(func(ctx context.Context) Response {
		defer inbox.Close()
		wctx, cancel := context.WithTimeout(ctx, backstop)
		defer cancel()
		for len(pending) > 0 {
			m, err := inbox.Receive(wctx)
			if err != nil {
				if ctx.Err() != nil {
					return CloseConnection(ctx.Err())
				}
				h.log.Error("group coordinator did not answer", "groups", len(pending), "after", backstop)
				break
			}
			switch m := m.(type) {
			case *group.RouteResult:
				if s, ok := pending[m.ID]; ok {
					delete(pending, m.ID)
					s.call.done(m.Response, 0)
				}
			case *actor.Terminated:
				// The coordinator stopped: what it had not answered, it
				// never will (its answers arrive before this).
				failGone(pending, func(s sent) bool { return s.pid.Equal(m.Who) }, func(s sent) { s.call.done(nil, kerr.NotCoordinator.Code) })
			case *actor.DeadLetterResponse:
				// A Route reached a coordinator already gone; the dead
				// letter does not say which, the registry does.
				failGone(pending, func(s sent) bool { return !inbox.Alive(s.pid) }, func(s sent) { s.call.done(nil, kerr.NotCoordinator.Code) })
			}
		}
		for _, s := range pending {
			s.call.done(nil, kerr.NotCoordinator.Code)
		}
		return finish()
	})
}

// failGone ends, with fail, every pending call that gone says will never
// be answered.
func failGone[S any](pending map[uint64]S, gone func(S) bool, fail func(S)) {
	for id, s := range pending {
		if gone(s) {
			delete(pending, id)
			fail(s)
		}
	}
}

// callGroup routes a request of one group (JoinGroup, SyncGroup,
// Heartbeat, LeaveGroup, OffsetCommit, OffsetDelete): an invalid group id
// is answered at once, coordinator errors in the request's shape.
func (h *BrokerHandler) callGroup(req *Request, groupID string, op group.Op, backstop time.Duration) Response {
	if code := group.ValidateGroupID(req.Key, groupID); code != 0 {
		h.log.Info("group request refused", "api", apiKeyName(req.Key), "client", req.ClientID,
			"reason", "invalid group id", "group_bytes", len(groupID))
		return Reply(group.CoordinatorError(req.Body, code))
	}
	var resp kmsg.Response
	call := groupCall{group: groupID, op: op, done: func(r kmsg.Response, code int16) {
		if r == nil {
			r = group.CoordinatorError(req.Body, code)
		}
		resp = r
	}}
	return h.callGroups([]groupCall{call}, backstop, func() Response { return Reply(resp) })
}

// partitionErrors returns UNKNOWN_TOPIC_OR_PARTITION for each partition a
// commit or offset delete names that the image does not hold, as Kafka's
// KafkaApis answers them before the coordinator sees the request.
func partitionErrors(img *metadata.Image, parts func(yield func(topic string, idx int32) bool)) map[group.TopicPartition]int16 {
	var out map[group.TopicPartition]int16
	parts(func(topic string, idx int32) bool {
		if t, ok := img.Topic(topic); ok {
			if _, ok := t.Partition(idx); ok {
				return true
			}
		}
		if out == nil {
			out = map[group.TopicPartition]int16{}
		}
		out[group.TopicPartition{Topic: topic, Partition: idx}] = kerr.UnknownTopicOrPartition.Code
		return true
	})
	return out
}

// clientHost is the client's address as Kafka reports it in
// DescribeGroups: "/" and the IP.
func clientHost(ci *ConnInfo) string {
	if ci == nil || ci.Remote == nil {
		return ""
	}
	if tcp, ok := ci.Remote.(*net.TCPAddr); ok {
		return "/" + tcp.IP.String()
	}
	host, _, err := net.SplitHostPort(ci.Remote.String())
	if err != nil {
		return "/" + ci.Remote.String()
	}
	return "/" + host
}
