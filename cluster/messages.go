package cluster

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/wire"
)

// Messages of the metadata actor. They never leave the process yet: the
// replicated cluster adds the raft and registration messages that do.

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

// describeQuorum asks the metadata actor for the quorum's status
// (DescribeQuorum); reply runs in the actor.
type describeQuorum struct {
	reply func(wire.QuorumStatus)
}
