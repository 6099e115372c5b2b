package wire

import (
	"context"
	"time"

	"github.com/weirmq/weir/actors/group"
	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/cluster/metadata"
)

// Broker is the node as the API handlers see it: the metadata image, the
// partition actors hosted here, the broker's configuration and the way to
// change metadata: typed requests to the controller (the metadata quorum's
// leader, on this node or another), which decides them against its own
// image and answers each item with a Kafka error code and message. wire
// only turns a Kafka request into a metadata.Request and the
// metadata.Result into the Kafka response. Package cluster implements it; tests implement it with
// an in-memory image. Every method is safe for concurrent use and returns
// promptly unless it takes a ctx.
type Broker interface {
	// NodeID is this broker's node.id.
	NodeID() int32
	// BrokerEpoch is the epoch of this process's registration (0 before
	// it registered).
	BrokerEpoch() int64
	// Image returns the latest applied metadata image.
	Image() *metadata.Image
	// Config returns the broker's static configuration (server.properties
	// and flags). It never changes while the broker runs.
	Config() *config.Broker
	// Replica returns the actor of the partition's replica on this node,
	// or nil when this node hosts none (yet): the image can name this node
	// a replica a moment before the actor is started.
	Replica(topicID metadata.UUID, partition int32) *partition.Client
	// Metadata sends req to the controller and returns its result, of
	// req's type (*metadata.CreateTopicsRequest gives a
	// *metadata.CreateTopicsResult, ...), once the change is applied and
	// Image holds it. The error is only the wait's: ctx ended (the change
	// may still apply) or the node stopped; every refusal of the
	// controller is in the result.
	Metadata(ctx context.Context, req metadata.Request) (metadata.Result, error)
	// ProducerID returns a producer id no broker of the cluster has handed
	// out (from this broker's block, which the controller allocates).
	// The error is the controller's refusal (a metadata.APIError:
	// UNKNOWN_SERVER_ERROR once the ids run out) or the wait's.
	ProducerID(ctx context.Context) (int64, error)
	// GroupCoordinators returns the node's group coordinators, one per
	// __consumer_offsets partition led here (nil: none are run). The
	// group APIs (08_offsetcommit.go ... 47_offsetdelete.go) route to them.
	GroupCoordinators() *group.Coordinators
	// LeaseValid reports whether this broker may act as a leader now: the
	// controller answered one of its heartbeats sent less than
	// broker.session.timeout.ms ago, so no other broker can have been
	// given its leaderships yet. Without the lease a leader answers
	// produce requests NOT_LEADER_OR_FOLLOWER, so that a paused or cut-off
	// node stops acknowledging writes by itself.
	LeaseValid() bool
	// PeerDown reports whether this node just lost its connection to
	// node's listener and could not connect again: a hint that the
	// process may be gone before the metadata says so. Metadata waits on
	// it as on an election (metadata_elections.go); nothing else does.
	PeerDown(node int32) bool
	// DescribeQuorum returns the metadata quorum's status as the node's
	// quorum driver last saw it (55_describequorum.go). It waits for the
	// metadata actor, at most until ctx ends.
	DescribeQuorum(ctx context.Context) (QuorumStatus, error)
}

// QuorumStatus is the metadata quorum as DescribeQuorum reports it.
// Offsets are the metadata log's (__cluster_metadata-0), exclusive.
type QuorumStatus struct {
	// Leader is true when this node leads the quorum; only the leader
	// answers with the voters' progress.
	Leader bool
	// LeaderID is the leader this node knows of, -1 if none.
	LeaderID int32
	// LeaderEpoch is the raft term.
	LeaderEpoch int32
	// HighWatermark is the offset past the last committed entry.
	HighWatermark int64
	// Voters and Observers, in node id order.
	Voters, Observers []QuorumReplica
	// Writable is false while the metadata log cannot be written (a
	// stall, or a quorum stopped for good: Stopped).
	Writable, Stopped bool
	// Since is when writes began to fail, Cause what failed them (an
	// errno's text); both zero while Writable.
	Since time.Time
	Cause string
	// Now is when the status was taken; the leader's own fetch and
	// caught-up times are Now, as Kafka reports its leader's.
	Now time.Time
}

// QuorumReplica is one voter or observer of the metadata quorum.
type QuorumReplica struct {
	ID int32
	// LogEndOffset is how far its log matches the leader's, in the
	// leader's offsets; -1 if unknown.
	LogEndOffset int64
	// LastFetch and LastCaughtUp are when it last fetched and was last
	// caught up with the leader; zero if unknown.
	LastFetch, LastCaughtUp time.Time
}
