// Package partition holds the decision logic of one partition replica:
// validation of producers' batches, the idempotent-producer state, the log
// end offset, high watermark and log start offset, the acks=0/1/all
// answers, and replication: the leader's view of its followers and its ISR
// proposals, and the follower's appends and truncations. Replica and
// ProducerState are plain structs with no I/O, no goroutines and no clock
// reads: the actor shell steps them with messages (messages.go,
// replication_messages.go) and performs the Output they return. Time is an
// input (AppendBatches.NowMs, FollowerFetched.NowMs, Tick).
//
// Files:
//   - messages.go: commands, results, events and Output.
//   - config.go: Config with Kafka's names and defaults.
//   - replica.go: Replica, roles, high watermark.
//   - replication_messages.go: the replica fetcher's requests and answers,
//     follower fetch reports, ISR proposals, truncation.
//   - isr.go: the leader's follower positions, caught-up times, the high
//     watermark over the maximal ISR, ISR expand and shrink proposals.
//   - follower.go: replicated appends, truncation to a diverging epoch or
//     the leader's log start, the follower's high watermark.
//   - replication_actor.go: the shell's side of replication (truncation
//     with the producer-state rebuild, positions, DivergingEpoch).
//   - append.go: the two-phase append and Kafka's batch checks.
//   - acks.go: parked acknowledgements, flushes, ticks.
//   - producer_state.go, sequence.go: Kafka's ProducerStateManager rules.
//   - producer_snapshot.go: the producer snapshot encoding.
//   - actor.go: the protoactor shell (Props, Spawn, Client, Board), which
//     performs each Output: log appends, flush callbacks, replies, parked reads.
//   - watch.go: WatchHighWatermark, parked until the high watermark passes
//     an offset (what long-poll fetches wait on), expired by Tick.
//   - admin.go: DeleteRecords (its file removals on a goroutine) and
//     DescribeProducers in the actor.
//   - snapshots.go: producer snapshot files: recovery from the newest
//     usable one plus the log's tail, and the writer that takes them off
//     the mailbox at each segment roll and at shutdown.
//   - reads.go: reads served on the caller's goroutine from the log and
//     the published Status (Fetch, ListOffsets, OffsetForLeaderEpoch),
//     with Kafka's leader-epoch fencing.
//   - client_send.go, inbox.go: the non-blocking facade (SendAppend,
//     SendWatch, ...) and Inbox, where a caller outside actors collects
//     answers under a context.
//
// # The caller's duties
//
//  1. Open the partition's log (log.Manager.OpenLog). Rebuild the producer
//     state: delete the "<offset>.snapshot" files outside [log start
//     offset, log end offset], LoadSnapshot from the newest remaining one
//     (if it fails, log it, delete it and try the next older; with none,
//     start from NewProducerState), then read every batch from
//     ProducerState.EndOffset (or the log start offset, whichever is
//     larger) to the log end offset and call ObserveBatch(BatchFromHeader)
//     on each, in order. Create the Replica with NewReplica and Start
//     (with the high watermark at the log start offset unless a
//     checkpointed one is known).
//  2. Apply leadership from the metadata image with BecomeLeader or
//     BecomeFollower whenever this partition's leader, leader epoch or
//     (on the leader) partition epoch and ISR change.
//  3. Step every message in mailbox order with its method: OnAppendBatches,
//     OnLogAppended, OnFlushCompleted, OnTick, BecomeLeader,
//     BecomeFollower, OnFollowerFetched (unless the fetch diverges from
//     the log or is out of its range), OnAppendReplicated,
//     OnTruncateDiverging (with the log's own end of the epoch),
//     OnResetToLeaderStart. Each returns an Output; handle it fully, in
//     the order of steps 4 to 7, before stepping the next message.
//  4. Send each of Output.Replies to the request with that ID (for acks=0:
//     nothing on success, close the connection on an error), and each of
//     Output.Positions, with LastFetchedEpoch set to the log's epoch at
//     FetchOffset-1. Hand Output.ProposeISR to the cluster; move the log
//     start to Output.AdvanceLogStart off the mailbox and report it with
//     OnLogStartAdvanced.
//  5. If Output.FlushUpTo > 0, call log.OnFlushed(FlushUpTo, fn) and have
//     fn send FlushCompleted{UpTo, Err} to the actor's mailbox (never step
//     the replica from the callback's goroutine).
//  6. If Output.Append is set, call log.Append(Append.Records,
//     Append.Options) and step LogAppended{Seq, Result, Err} at once,
//     before any other message, handling its Output the same way. If
//     Output.Truncate is set, wait for the snapshot writer, cut the log
//     (TruncateTo, or TruncateFullyAndStartAt after deleting every
//     snapshot), rebuild the producer state as in duty 1 and step
//     OnLogTruncated at once the same way.
//  7. If Output.HighWatermarkChanged, publish Status (and wake parked
//     fetches and watches). The shell publishes before it sends a step's
//     replies, so acknowledged records are readable from the Status.
//  8. Send Tick with the injected clock's time from the node's ticker; it
//     times out acks=all waits and expires producers.
//  9. Write ProducerState.Snapshot to "<EndOffset>.snapshot" (20 digits)
//     when a segment rolls (log.ActiveSegmentBase changed after an append)
//     and at shutdown, durably (log.WriteFileAtomic), off the mailbox, and
//     keep only the newest two.
//  10. Do not let AppendBatches.Records be shared: the log sets offsets and
//     the leader epoch in place in it (and, under LogAppendTime, the max
//     timestamp, attributes and CRC).
//  11. Apply Reconfigure (Replica.Reconfigure) when the topic's configs
//     change.
package partition
