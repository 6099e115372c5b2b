package group

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Commands: requests the group steps. Every command carries NowMs, the
// injected clock's reading when it arrived; the group first fires every
// deadline at or before it (as if Kafka's timers were exact), then steps
// the request. ID is chosen by the shell and names the request in the
// Reply that answers it, now or in a later Output.

// JoinGroup is a JoinGroup request (versions 0-9) for this group.
type JoinGroup struct {
	ID uint64
	// Req's protocol metadata is kept by the group as is (a member's
	// metadata, and the leader's JoinGroup answer): it must not alias a
	// buffer that is reused, and should not alias a larger one (package
	// wire copies it out of the request frame).
	Req *kmsg.JoinGroupRequest
	// ClientID is the request header's client.id.
	ClientID string
	// ClientHost is the client's address as Kafka reports it ("/" + IP).
	ClientHost string
	NowMs      int64
}

// SyncGroup is a SyncGroup request (versions 0-5).
type SyncGroup struct {
	ID uint64
	// Req's assignments are kept by the group as JoinGroup's metadata is.
	Req   *kmsg.SyncGroupRequest
	NowMs int64
}

// Heartbeat is a Heartbeat request (versions 0-4).
type Heartbeat struct {
	ID    uint64
	Req   *kmsg.HeartbeatRequest
	NowMs int64
}

// LeaveGroup is a LeaveGroup request (versions 0-5).
type LeaveGroup struct {
	ID    uint64
	Req   *kmsg.LeaveGroupRequest
	NowMs int64
}

// OffsetCommit is an OffsetCommit request (versions 2-9).
type OffsetCommit struct {
	ID  uint64
	Req *kmsg.OffsetCommitRequest
	// PartitionErrors holds the partitions the shell already answered
	// (UNKNOWN_TOPIC_OR_PARTITION for a partition missing from the
	// metadata image, TOPIC_AUTHORIZATION_FAILED): they get that code and
	// are not committed, whatever the group says, as in KafkaApis.
	PartitionErrors map[TopicPartition]int16
	NowMs           int64
}

// OffsetDelete is an OffsetDelete request (versions 0-1).
type OffsetDelete struct {
	ID  uint64
	Req *kmsg.OffsetDeleteRequest
	// PartitionErrors: as OffsetCommit.PartitionErrors.
	PartitionErrors map[TopicPartition]int16
	NowMs           int64
}

// DeleteGroup is this group's part of a DeleteGroups request; it is
// answered with a DeleteGroupsResponse holding this one group.
type DeleteGroup struct {
	ID      uint64
	Version int16
	NowMs   int64
}

// Tick carries the injected clock's reading; it fires session timeouts,
// rebalance and sync deadlines, the initial rebalance delay, pending
// member expiry and offset expiry.
type Tick struct{ NowMs int64 }

// TopicsDeleted tells the groups that topics were deleted: their
// committed offsets go, with tombstones, so that a topic created again
// under the name is not read from the deleted one's positions (Kafka's
// onPartitionsDeleted).
type TopicsDeleted struct {
	NowMs  int64
	Topics []string
}

// Unload tells the group its __consumer_offsets partition is no longer
// led here: it turns Dead and answers every parked or waiting request
// NOT_COORDINATOR (Kafka's onGroupUnloaded).
type Unload struct{ NowMs int64 }

// Events: what happened, fed back by the shell.

// AppendCompleted reports the outcome of an Append: BaseOffset is the
// offset of the batch's first record in __consumer_offsets, ErrorCode the
// Kafka error code of the append (the partition's Produce error, 0 for
// success; the shell turns a local I/O error into KAFKA_STORAGE_ERROR).
type AppendCompleted struct {
	ID         uint64
	BaseOffset int64
	ErrorCode  int16
	NowMs      int64
}

// Outputs: what the group asks the shell to do.

// Reply answers the request named ID with a complete kmsg response of the
// request's version (for DeleteGroup: a DeleteGroupsResponse holding this
// group only, which the shell merges with the other groups').
type Reply struct {
	ID       uint64
	Response kmsg.Response
}

// Record is one __consumer_offsets record: a key in Kafka's schema and its
// value, nil for a tombstone.
type Record struct {
	Key   []byte
	Value []byte
}

// Append asks the shell to append Records as one batch (Batch builds it)
// to the group's __consumer_offsets partition with acks=all, and to feed
// the outcome back as AppendCompleted with the same ID. The requests in
// Waiting are answered only then.
type Append struct {
	ID          uint64
	TimestampMs int64
	Records     []Record
	// Waiting lists the requests whose replies wait for this append.
	Waiting []uint64
}

// Output is everything one step asks of the shell, in this order: send
// Replies, then perform Appends in order (each answered later by an
// AppendCompleted), then log Logs.
type Output struct {
	Replies []Reply
	Appends []*Append
	// Logs are one-line notes on what happened (rebalances, members
	// removed, bad input), for the shell's logger at info level.
	Logs []string
	// NextDeadlineMs is the earliest time a Tick has work to do (0:
	// none); a shell may arm a timer for it instead of, or besides,
	// waiting for the node's ticker.
	NextDeadlineMs int64
	// Removed tells the shell to drop the group: it never existed for
	// Kafka (a request to an unknown group that did not create it), or it
	// is Dead with no reply left waiting.
	Removed bool
}

// Shell messages: what the coordinator actors (manager.go, actor.go)
// exchange with their callers. Requests are sent with the caller as the
// sender (Coordinator.Send) and answered to it; a coordinator that is gone
// makes protoactor answer *actor.DeadLetterResponse instead, which callers
// treat as NOT_COORDINATOR.

// Op is what a Route asks of one group: *JoinGroup, *SyncGroup,
// *Heartbeat, *LeaveGroup, *OffsetCommit, *OffsetDelete, *DeleteGroup,
// *FetchOffsets or *DescribeGroup. The shell sets each command's NowMs
// from its clock when the group steps it; ID is the shell's too.
type Op interface{ isOp() }

func (*JoinGroup) isOp()     {}
func (*SyncGroup) isOp()     {}
func (*Heartbeat) isOp()     {}
func (*LeaveGroup) isOp()    {}
func (*OffsetCommit) isOp()  {}
func (*OffsetDelete) isOp()  {}
func (*DeleteGroup) isOp()   {}
func (*FetchOffsets) isOp()  {}
func (*DescribeGroup) isOp() {}

// FetchOffsets reads one group's committed offsets for an OffsetFetch
// (Group.FetchOffsets); answered with an OffsetFetchResponse of version 8
// holding this group only.
type FetchOffsets struct {
	// Topics nil asks for every committed partition (a null topic array).
	Topics        []kmsg.OffsetFetchRequestGroupTopic
	RequireStable bool
}

// DescribeGroup reads one group for a DescribeGroups of Version
// (Group.Describe); answered with a DescribeGroupsResponse holding this
// group only.
type DescribeGroup struct {
	Version int16
}

// Route asks a __consumer_offsets partition's coordinator to step Op on
// the group Group (its group id). It is answered with one RouteResult
// carrying the same ID, possibly much later (a parked JoinGroup). Routes
// sent in order by one sender are stepped in that order.
type Route struct {
	ID    uint64
	Group string
	Op    Op
}

// RouteResult answers a Route: a complete kmsg response of the request's
// version (see each Op for its shape), with the coordinator's errors
// (COORDINATOR_LOAD_IN_PROGRESS while loading, NOT_COORDINATOR once
// unloaded) in it.
type RouteResult struct {
	ID       uint64
	Response kmsg.Response
}

// ListGroups asks a coordinator for the overview of every group it holds.
type ListGroups struct {
	ID uint64
}

// GroupsListed answers ListGroups; ErrorCode is
// COORDINATOR_LOAD_IN_PROGRESS while the partition loads (Groups empty)
// and NOT_COORDINATOR once it is unloaded.
type GroupsListed struct {
	ID        uint64
	ErrorCode int16
	Groups    []Overview
}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging):
// a request to an unloaded coordinator is answered by protoactor.
func (*Route) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging):
// an answer may reach a caller that gave up.
func (*RouteResult) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*ListGroups) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging).
func (*GroupsListed) IgnoreDeadLetterLogging() {}

// IgnoreDeadLetterLogging marks the message (actor.IgnoreDeadLetterLogging):
// a tick may reach a group actor that was just removed.
func (*Tick) IgnoreDeadLetterLogging() {}
