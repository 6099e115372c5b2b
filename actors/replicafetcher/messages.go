package replicafetcher

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster/metadata"
)

// Followed is one partition this node follows from the fetcher's leader.
type Followed struct {
	TopicID metadata.UUID
	// Topic is the topic's name: Fetch v12 names topics (topic ids come
	// with v13, which weir does not serve).
	Topic     string
	Partition int32
	// LeaderEpoch is the leader epoch the follower replica was told of
	// (its BecomeFollower's): the Fetch's current_leader_epoch, and the
	// epoch the follower's appends are checked against.
	LeaderEpoch int32
	// Replica is this node's follower partition actor.
	Replica *partition.Client
}

// Ref names the partition.
func (f Followed) Ref() PartitionRef { return PartitionRef{TopicID: f.TopicID, Partition: f.Partition} }

// PartitionRef names a partition.
type PartitionRef struct {
	TopicID   metadata.UUID
	Partition int32
}

// Follow adds partitions to the fetcher or updates them: an entry with a
// newer LeaderEpoch (or, at the same epoch, another Replica) replaces the
// one held, which starts over from the follower's position; an older
// epoch, or the same epoch and replica, is ignored.
type Follow struct{ Partitions []Followed }

// Unfollow removes partitions; answers still on their way for them are
// dropped. Unknown partitions are ignored.
type Unfollow struct{ Partitions []PartitionRef }

// Position is one followed partition as the fetcher last saw it, for
// status pages and tests.
type Position struct {
	TopicID   metadata.UUID
	Partition int32
	// FetchOffset and LastFetchedEpoch are where the next Fetch starts,
	// as the follower replica last answered (-1, -1 until it has).
	FetchOffset      int64
	LastFetchedEpoch int32
	// LeaderEpoch is the epoch of the Follow the partition was last given.
	LeaderEpoch int32
	// LastError is the last failure of the partition (a Kafka error from
	// the leader or the follower replica) or of the fetcher's Fetch; ""
	// once the partition was fetched again.
	LastError string
	// Paused is set while the partition waits for a Follow with a newer
	// epoch (or, for errors that may clear on the leader's side, for its
	// retry after the backoff).
	Paused bool
}

// Messages of the actor shell (fetcher.go) to itself.

// fetchDone is the outcome of one Fetch, sent by its goroutine.
type fetchDone struct {
	id   uint64
	resp *kmsg.FetchResponse
	err  error
}

// wake is the timer's tick: a backoff or a wait ended.
type wake struct{}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging):
// a fetch that ends while the fetcher stops has nobody to tell.
func (*fetchDone) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*wake) IgnoreDeadLetterLogging() {}
