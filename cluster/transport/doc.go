// Package transport carries weir's control messages between nodes as
// protoactor actor messages over protoactor remote.
//
// The pinned protoactor remote always serializes with its protobuf
// serializer, so every weir message that crosses nodes is a plain Go struct,
// msgpack-encoded into a *anypb.Any whose TypeUrl is "weir/" plus the
// message type's stable name (a Type). Send wraps a message for a PID on
// another node and hands a message for a local PID over unchanged; the
// receive middleware (Middleware, Props) unwraps envelopes before an actor's
// Receive sees them, keeping the sender, so weir's actors only ever handle
// typed structs. Actors spawned without the middleware are untouched, which
// keeps weir's envelopes out of an embedding program's own actors.
//
// Delivery is at most once: protoactor drops messages sent while a
// connection is being re-established, and a message to an actor that does
// not exist comes back to its sender as an *actor.DeadLetterResponse. Every
// protocol built on this package therefore tolerates loss with timeouts and
// retries. When membership declares a node dead, SetDown stops sending to
// it and closes its endpoint (protoactor's endpoint writer would otherwise
// keep retrying the connection with fixed 2 s sleeps); SetDown(addr, false)
// lets a returning node be reached again through a fresh endpoint.
//
// Start reuses a remote the embedding program already started on the actor
// system, and otherwise starts one of its own that Stop shuts down.
package transport
