// Package fetchsession holds the decision logic of Kafka's incremental
// fetch sessions (KIP-227): the session cache with its rules for a Fetch
// request's (session id, epoch), the errors FETCH_SESSION_ID_NOT_FOUND
// (70) and INVALID_FETCH_SESSION_EPOCH (71), one session's partitions and
// the values last sent for them, which partitions an incremental response
// carries, and a bounded cache with eviction. Slots, Session and Cache are
// plain structs with no I/O, no goroutines and no clock reads; time is an
// input (Request.NowMs, the nowMs of Respond). The actors are thin shells
// around them: one cache actor owns the Slots (routing, ids, eviction,
// the bounded slot count) and one fetch session actor per session owns
// its Session.
//
// Files:
//   - config.go: Config with Kafka's names and defaults.
//   - slots.go: Slots, the session table: Route (the (id, epoch) rules
//     that need no session state), ids, eviction.
//   - session.go: Session, partitions, Begin (the epoch rule) and Respond
//     (the incremental response rule).
//   - cache.go: Context, Response, and Cache, the Slots and every Session
//     in one struct (NewContext/Respond): the single-owner model the
//     scenario tests replay.
//   - actor.go, messages.go: the cache actor (Slots) and the session
//     actors (one Session each, children of the cache actor), and the
//     non-blocking Client. BeginFetch goes to the cache actor, which
//     answers it or, for an incremental fetch, hands it to the session's
//     actor; FinishFetch likewise (a full fetch's session actor is
//     spawned then). The reads and the long poll between the two run in
//     the requester's goroutine (wire's Fetch Defer), which waits on
//     partition actors' watches, so no actor waits. Eviction and closing
//     stop the session's actor after the messages it already holds.
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
// evicted first. See Slots for the eviction policy.
//
// # The caller's duties
//
//  1. One actor owns the Slots (all session ids of a node) and calls
//     Route, Create, Used and Remove in mailbox order; each Session is
//     stepped (Begin, Respond) only by its own actor, which reports Used
//     back. (A single owner may use Cache, which does both.)
//  2. For every Fetch request, decode it (kmsg) into a Request: the session
//     id and epoch (0 and -1 before v7), the replica id, the partitions,
//     the forgotten topics, and NowMs from the injected clock. Send
//     BeginFetch (Client.SendBegin; with Cache: NewContext).
//  3. If Context.Kind is KindError, answer at once: the top-level error
//     code and no partitions.
//  4. Otherwise send one read to each partition actor for each entry of
//     Context.Reads (fetch offset, partition max bytes, current leader
//     epoch, isolation level); the partition actors read the log and
//     answer with a PartitionResult each (error code, high watermark,
//     last stable offset, log start offset, records). Never block the
//     mailbox waiting for them.
//  5. Long polling: if the reads returned fewer than the request's min
//     bytes and max wait has not passed, register with the partition
//     actors to be woken by an append (or a high watermark change), and
//     re-read when woken or when max wait expires; there is no polling
//     loop, and no fetch session actor waits meanwhile. Step 6 runs once,
//     with the final results.
//  6. Trim the records to the request's max bytes in Context.Reads order
//     (keeping at least the first batch of the first partition with data,
//     KIP-74), so the session sees what is really sent. Send FinishFetch
//     (Client.SendFinish; with Cache: Respond) with the context and one
//     result per read. It creates the session for KindFull
//     (Response.SessionID is 0 when no slot could be had), records what
//     is sent, and returns the partitions to put in the response, in
//     order.
//  7. Assemble the FetchResponse: top-level error code, SessionID, then
//     Response.Partitions grouped by topic in order, empty (never null)
//     records for error
//     partitions (docs/clients.md rule 8), aborted transactions for
//     READ_COMMITTED. Write it in the connection's request order.
//  8. Close every session when the node shuts down (Client.Stop; with
//     Cache: Remove); there is nothing to persist: clients recover from
//     70 with a new session.
package fetchsession
