// Package remotert measures what a protoactor-go remote round trip costs
// for a small control message: the kind weir sends between nodes (raft
// messages, fencing, leader notices), msgpack-encoded inside an
// *anypb.Any, which is how weir's envelope crosses protoactor remote (its
// endpoint writer always uses the protobuf serializer).
//
// One echo actor answers every request with a reply of the same shape.
// Measure sends from a second actor system in the same process, or, with
// a child process (the calling binary re-executed; call MaybeRunChild
// first in main or TestMain), from another process, over loopback; and,
// for reference, within one actor system without remote. It reports the
// latency of one request at a time (median, p99) and the round trips per
// second with many requests outstanding.
//
//	go test ./bench/remotert -run TestRoundTrip -v
//
// runs a short version; WEIR_MEASURE_FULL=1 the recorded counts.
package remotert
