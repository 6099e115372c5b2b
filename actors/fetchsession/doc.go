// Package fetchsession holds the decision logic of Kafka's incremental
// fetch sessions (KIP-227): the session cache with its rules for a Fetch
// request's (session id, epoch), the errors FETCH_SESSION_ID_NOT_FOUND
// (70) and INVALID_FETCH_SESSION_EPOCH (71), one session's partitions and
// the values last sent for them, which partitions an incremental response
// carries, and a bounded cache with eviction. Cache and Session are plain
// structs with no I/O, no goroutines and no clock reads; time is an input
// (Request.NowMs, the nowMs of Respond). The fetch session actor is the
// thin shell around them.
//
// Files:
//   - config.go: Config with Kafka's names and defaults.
//   - cache.go: Cache, NewContext/Respond, ids, eviction.
//   - session.go: Session, partitions, the incremental response rule.
//   - actor.go, messages.go: the cache actor that owns the Cache
//     (BeginFetch -> NewContext, FinishFetch -> Respond) and its
//     non-blocking Client; the reads and the long poll between the two
//     run in the requester's goroutine (wire's Fetch Defer), which waits
//     on partition actors' watches, so the actor never waits.
//   - testdata/*.txt: datadriven scenarios (scenario_test.go lists the
//     commands).
//
// # Rules
//
// A request's (SessionID, SessionEpoch):
//
//	(0, -1)    sessionless full fetch; response session id 0
//	(X, -1)    close X; sessionless full fetch
//	(0, 0)     full fetch; a new session if a slot is free or can be freed
//	(X, 0)     close X; then as (0, 0)
//	(0, < -1)  sessionless full fetch (no session error without a session)
//	(X, N)     incremental: unknown X -> 70; N != expected epoch -> 71;
//	           otherwise apply the request, expected epoch + 1 (MaxInt32 -> 1)
//
// Session ids are non-zero, drawn from an injected IDSource and never
// equal to a live session's id. A full response carries every requested
// partition; an incremental one only partitions with records, a changed
// high watermark, last stable offset or log start offset, an error, a
// preferred read replica or a diverging epoch; partitions that returned
// records move to the end of the session's order. Sessions of followers
// (replica id >= 0) are privileged: a consumer's session is always
// evicted first. See Cache for the eviction policy.
//
// # The caller's duties
//
//  1. One actor owns the Cache (all sessions of a node); it may hand each
//     incremental session's requests to that session's fetch session
//     actor, but only the owner calls NewContext, Respond and Remove, in
//     mailbox order.
//  2. For every Fetch request, decode it (kmsg) into a Request: the session
//     id and epoch (0 and -1 before v7), the replica id, the partitions,
//     the forgotten topics, and NowMs from the injected clock. Call
//     NewContext.
//  3. If Context.Kind is KindError, answer at once with Respond's
//     Response: the top-level error code and no partitions.
//  4. Otherwise send one read to each partition actor for each entry of
//     Context.Reads (fetch offset, partition max bytes, current leader
//     epoch, isolation level); the partition actors read the log and
//     answer with a PartitionResult each (error code, high watermark,
//     last stable offset, log start offset, records). Never block the
//     mailbox waiting for them.
//  5. Long polling: if the reads returned fewer than the request's min
//     bytes and max wait has not passed, park the request in the fetch
//     session actor, register with the partition actors to be woken by an
//     append (or a high watermark change), and re-read when woken or
//     when max wait expires (the node's ticker delivers the time); there
//     is no polling loop. Step 6 runs once, with the final results.
//  6. Trim the records to the request's max bytes in Context.Reads order
//     (keeping at least the first batch of the first partition with data,
//     KIP-74), so the session sees what is really sent. Call Respond with
//     the context, the injected clock's time and one result per read. It creates the session for KindFull
//     (Response.SessionID is 0 when no slot could be had), records what is sent,
//     and returns the partitions to put in the response, in order.
//  7. Assemble the FetchResponse: top-level error code, SessionID, then
//     Response.Partitions grouped by topic in order, empty (never null)
//     records for error
//     partitions (kafka-wire.md rule 8), aborted transactions for
//     READ_COMMITTED. Write it in the connection's request order.
//  8. Close every session with Remove when the node shuts down; there is
//     nothing to persist: clients recover from 70 with a new session.
package fetchsession
