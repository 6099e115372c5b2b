package cluster

import (
	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/wire"
)

// Messages of the metadata actor. They never leave the process yet: the
// replicated cluster adds the raft and registration messages that do.

// proposeRecords asks the metadata actor to build records against its
// latest image (applied plus in flight), propose them as one batch and call
// reply once they are applied and the partition actors reconciled (or with
// the error that stopped them). reply runs inside the actor: it must not
// block.
type proposeRecords struct {
	build func(img *metadata.Image) ([]metadata.Record, error)
	reply func(img *metadata.Image, err error)
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
