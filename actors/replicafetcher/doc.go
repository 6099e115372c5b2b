// Package replicafetcher copies records from partition leaders to this
// node's follower replicas, as Kafka's replica fetcher threads do: one
// fetcher actor per (follower node, leader node) sends Kafka Fetch
// requests (v12, replica_id = this node, read_uncommitted) for every
// partition this node follows from that leader, long-polled by the leader
// (replica.fetch.wait.max.ms,
// replica.fetch.min.bytes), over a broker-to-broker Kafka connection the
// caller injects (Dialer; package cluster passes wire's BrokerConn, so
// actors never import wire). Each partition's answer goes to its follower
// partition actor (actors/partition): records as AppendReplicated, a
// diverging epoch (KIP-320/KIP-595) as TruncateDiverging,
// OFFSET_OUT_OF_RANGE as ResetToLeaderStart; the actor answers every one
// with a ReplicaPosition, where the partition's next fetch starts. The
// follower's position reaches the leader only in the fetch requests,
// which is how the leader learns it for its high watermark, acks=all and
// the ISR.
//
// The fetches run in an incremental fetch session (KIP-227, session.go):
// the first is full and asks for a session; later ones carry only the
// partitions new to it or whose position or leader epoch moved, forget
// the ones no longer fetched (unfollowed, paused, awaiting an answer),
// and leave out the rest, whose positions the leader's session keeps and
// counts at every fetch. A session error or a failed Fetch starts over
// with a full fetch.
//
// A newly followed partition's first position comes from its replica: a
// zero-record AppendReplicated (the probe) at the replica's published
// status (log end offset, high watermark, log start offset) appends
// nothing and changes nothing, and is answered, in mailbox order after the
// BecomeFollower the caller sent first, with the replica's own position
// (its log end offset, or flushed offset under group commit) and last
// epoch, or with an epoch error while the replica has not caught up with
// the Follow's epoch. A partition is never fetched again before its
// replica has answered for the last fetch: positions come only from the
// replica.
//
// Files:
//   - config.go: Config (Kafka's replica.fetch.* settings and defaults),
//     Conn and Dialer.
//   - messages.go: Followed, PartitionRef, the Follow and Unfollow
//     messages, Position.
//   - state.go: State, the decision logic (which partitions the next
//     Fetch carries and from where; what each response partition becomes;
//     backoffs, pauses and timeouts), a plain struct stepped by messages
//     with the time as an input.
//   - session.go: fetchSession, the session's side of State: which
//     partitions a Fetch carries, forgets or leaves out.
//   - fetcher.go: the actor shell (Spawn, Fetcher): it sends State's
//     commands, runs each Fetch on a goroutine of its own, never in the
//     mailbox, which reports back with a message, arms one timer for
//     State's next wake-up, and publishes Positions; and connHolder, the
//     leader's connection, dialed on first use and after each failure.
package replicafetcher
