// Package bounds holds process-level tests of the broker's resource bounds
// (connections, memory for requests in flight, unwritten responses): real
// `weir serve` processes under a memory cap, attacked the way a buggy or
// hostile client would, while an ordinary client keeps working. It has no
// code of its own.
package bounds
