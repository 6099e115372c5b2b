package cluster

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirmq/weir/cluster/membership"
	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/cluster/quorum"
	"github.com/weirmq/weir/cluster/transport"
	"github.com/weirmq/weir/wire"
)

// Messages of the metadata actor. The first group stays in the process;
// the second (remoteTypes) crosses nodes over protoactor remote, msgpack
// in the transport's envelope.

// controllerRequest asks the metadata actor, as the controller, to decide
// Request against its latest image (applied plus in flight) and propose
// the records as one batch. The answer, a *controllerReply with the same
// ID, goes to ReplyTo once the batch is applied and the partition actors
// reconciled (at once when nothing is to be written). Both messages are
// plain data (metadata.EncodeRequest and EncodeResult give their bytes),
// so a node can send them to the controller on another node.
type controllerRequest struct {
	ID      uint64
	ReplyTo *actor.PID
	Request metadata.Request
}

// controllerReply is the controller's answer to a controllerRequest.
type controllerReply struct {
	ID     uint64
	Result metadata.Result
}

// tickMetadata is the node ticker's beat: one raft tick.
type tickMetadata struct{}

// startMetadata begins the start-up sequence once the actor runs.
type startMetadata struct{}

// writesDone says the quorum's writer finished (or failed) a write: the
// metadata actor calls HandleReady to deliver what waited for it.
type writesDone struct{}

// memberChanged is a membership event (the gossip hint), handed to the
// metadata actor in order.
type memberChanged struct {
	event membership.Event
}

// submitted is a controller request of the node's own duties (register,
// heartbeat, elect, change an ISR) routed like a client's, whose answer
// runs done in the actor.
type submitted struct {
	req  metadata.Request
	done func(metadata.Result)
}

// Cross-node messages: plain data with msgpack field order fixed.

// raftMessage carries one raft message (raftpb.Message, protobuf bytes)
// between the metadata actors of two voters or a voter and a learner.
type raftMessage struct {
	_msgpack struct{} `msgpack:",as_array"`
	Data     []byte
}

// forwardedRequest is a controller request a node forwards to the node it
// believes leads the quorum. ID is the forwarder's; Request is
// metadata.EncodeRequest's bytes.
type forwardedRequest struct {
	_msgpack struct{} `msgpack:",as_array"`
	ID       uint64
	From     int32
	Request  []byte
}

// forwardedAnswer answers a forwardedRequest. NotController: the receiver
// does not lead the quorum (Leader is who it believes does, -1 if none);
// otherwise Result is metadata.EncodeResult's bytes and Offset the
// metadata offset the forwarder's image must reach before it answers, so
// that its image holds the change (read your writes).
type forwardedAnswer struct {
	_msgpack      struct{} `msgpack:",as_array"`
	ID            uint64
	NotController bool
	Leader        int32
	Result        []byte
	Offset        int64
}

// remoteTypes are the messages the metadata actors send each other.
var remoteTypes = []transport.Type{
	{Name: "cluster.raftMessage", New: func() any { return new(raftMessage) }},
	{Name: "cluster.forwardedRequest", New: func() any { return new(forwardedRequest) }},
	{Name: "cluster.forwardedAnswer", New: func() any { return new(forwardedAnswer) }},
}

// describeQuorum asks the metadata actor for the quorum's status
// (DescribeQuorum); reply (or, when set, raw with the driver's own
// status) runs in the actor.
type describeQuorum struct {
	reply func(wire.QuorumStatus)
	raw   func(quorum.Status)
}
