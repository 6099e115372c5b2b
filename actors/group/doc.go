// Package group holds the decision logic of the classic consumer-group
// coordinator, Kafka's GroupCoordinator, GroupMetadata and
// GroupMetadataManager for one group id at a time: JoinGroup (v0-9, with
// KIP-394's MEMBER_ID_REQUIRED and KIP-345's static members), SyncGroup,
// Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch, OffsetDelete,
// DescribeGroups, ListGroups and DeleteGroups; the state machine Empty,
// PreparingRebalance, CompletingRebalance, Stable, Dead; session,
// rebalance and sync timeouts and group.initial.rebalance.delay.ms;
// committed offsets and their expiry (KIP-211); and the __consumer_offsets
// records in Kafka's key and value schemas, with a Loader that rebuilds a
// partition's groups from them.
//
// Group is a plain struct with no I/O, no goroutines and no clock reads:
// the actor shell steps it with messages (messages.go) and performs the
// Output each step returns. Time is an input (every message's NowMs,
// Tick). Requests and responses are kmsg types of the request's version,
// so the wire layer only decodes, routes and encodes.
//
// Files:
//   - messages.go: commands, events, Reply, Append and Output.
//   - config.go: Config with Kafka's names and defaults.
//   - state.go: State and its valid transitions.
//   - group.go: Group, membership bookkeeping, deadlines, Tick, Unload,
//     AppendCompleted.
//   - member.go: a member's protocols, votes and parked requests.
//   - join.go, sync.go, membership.go: JoinGroup, SyncGroup, Heartbeat,
//     LeaveGroup.
//   - rebalance.go: the rebalance itself (delayed join, generation,
//     leader, sync expiry) and the join and sync answers.
//   - offsets.go, commit.go: committed offsets, expiry, OffsetCommit,
//     OffsetFetch, OffsetDelete.
//   - admin.go: DescribeGroups, ListGroups, DeleteGroups.
//   - errors.go: group id validation, coordinator-level error answers,
//     Kafka's mapping of append errors.
//   - records.go: record keys and values, PartitionFor, Append.Batch.
//   - loader.go: Loader, the partition load on becoming coordinator.
//
// The actor shell, which performs the duties below for a node:
//   - coordinators.go: Coordinators, a node's coordinators (Load, Unload,
//     Get, All, Tick, Stop), and Coordinator, one partition's handle (Send
//     a Route, SendListGroups).
//   - manager.go: the coordinator actor of one __consumer_offsets
//     partition: loading, routing Routes to group actors (creating a group
//     only when a request creates it), Ticks, ListGroups, unloading.
//   - load.go: the load, on a goroutine of its own: wait until the replica
//     leads at the epoch with its high watermark at its log end offset,
//     then read the partition into a Loader.
//   - actor.go: the group actor, one per group: steps the Group and
//     performs each Output (appends to the partition actor with acks=all,
//     AppendCompleted from the answers).
//   - shell.go: ShellConfig (from the broker configs), the Partition the
//     shell needs (*partition.Client), and the stepping shared by the
//     manager and the group actors.
//
// A node uses the shell like this: NewCoordinators with
// ShellConfigFromBroker; Load(partition, replica, leader epoch) when it
// becomes leader of a __consumer_offsets partition and Unload when it
// stops leading it or the partition goes away (both return at once); Tick
// from its ticker; Stop on shutdown, before the partition actors stop. The
// wire layer finds a group's coordinator with Get(PartitionFor(group id,
// partition count)) (nil: NOT_COORDINATOR), validates the group id, and
// sends Routes from one goroutine in request order with an Inbox as the
// sender; a *actor.DeadLetterResponse means the coordinator stopped
// (NOT_COORDINATOR). While the node's leader lease (docs/DESIGN.md
// "Leader lease") has lapsed the wire layer answers every group
// NOT_COORDINATOR itself (wire/groups.go), and its FindCoordinator names no
// coordinator for the groups it would coordinate.
//
// # The caller's duties
//
//  1. Own the groups of every __consumer_offsets partition this node
//     leads, one Group per group id, each stepped in its own mailbox (one
//     actor per group). A group lives in partition PartitionFor(group id,
//     offsets.topic.num.partitions).
//  2. On becoming the partition's leader, answer its groups'
//     requests COORDINATOR_LOAD_IN_PROGRESS (CoordinatorError) while
//     reading the partition from its log start offset to its log end
//     offset into a Loader (AddBatch, in order); then start one actor per
//     Loader.Groups entry. Elsewhere, and for partitions not led here,
//     answer NOT_COORDINATOR; obey the leader lease.
//  3. On losing leadership, step Unload on every group of the partition,
//     send its replies, and drop the groups.
//  4. For each request, check ValidateGroupID first (INVALID_GROUP_ID
//     before any coordinator error, as Kafka). Route to the group; if none
//     exists, create one with NewGroup (it answers as Kafka answers an
//     unknown group, and comes into being only if the request creates
//     it). Split OffsetFetch with OffsetFetchGroups and assemble with
//     OffsetFetchResponse; DescribeGroups and DeleteGroups per group;
//     ListGroups from every group's Overview (Matches, Listed).
//  5. Pass NowMs from the injected clock, ClientID and ClientHost ("/" +
//     IP, as Kafka) with JoinGroup, and for OffsetCommit and OffsetDelete
//     the partitions missing from the metadata image as
//     PartitionErrors (UNKNOWN_TOPIC_OR_PARTITION).
//  6. Handle each Output fully before stepping the next message: send
//     Replies to the requests with those IDs (responses on one connection
//     leave in request order, so a parked JoinGroup or SyncGroup holds
//     the ones behind it); for each Append, in order, call Batch and
//     append it to the partition with acks=all, then step
//     AppendCompleted{ID, BaseOffset, ErrorCode} when the append is
//     acknowledged or fails (a local error as KAFKA_STORAGE_ERROR); log
//     Logs; drop the group if Removed.
//  7. Send Tick from the node's ticker (and, if wanted, at
//     Output.NextDeadlineMs): it expires sessions, completes rebalances
//     and expires offsets.
//  8. Reads (FetchOffsets, Describe, Overview) change nothing and may be
//     answered from the group directly in its mailbox.
//
// Departures from Kafka, each deliberate: a member's superseded JoinGroup
// or SyncGroup (a client retry), which Kafka silently drops, is answered
// REBALANCE_IN_PROGRESS; DeleteGroups and OffsetDelete answer after their
// tombstones are durable, with the commit error mapping if the append
// fails (Kafka appends with acks=0 and always answers success); the
// retention time of OffsetCommit v2-4 is ignored (weir's wire rule), so
// commits never carry an explicit expiry; ties in protocol selection go to
// the protocol voted for first in join order (Kafka: arbitrary).
package group
