// Package membership holds the measurement that chose weir's memberlist
// timing profiles: how long hashicorp/memberlist takes to declare dead a
// node whose process was SIGKILLed or frozen with SIGSTOP.
//
// The profiles (Fast, Relaxed and, for reference, LAN) live in
// cluster/membership; Profile, Fast, Relaxed and LAN here are the same
// values, and the numbers that justify them are in docs/measurements.md.
//
// The measurement (Measure) runs two observer nodes inside the calling
// process and the victim in a child process (the calling binary re-executed
// with an environment variable; the binary must call MaybeRunChild first
// thing in main or TestMain), so the victim is killed or frozen by a real
// signal and its sockets go the way a dead broker's do. An optional load
// child keeps both cores busy meanwhile. Each round builds a fresh
// three-node cluster, so memberlist's cluster-size scaling of the suspicion
// timeout never sees earlier rounds' dead nodes.
//
// Run it with
//
//	go test ./bench/membership -run TestDeadDetection -v
//
// (a few rounds, no timing assertions) or the full counts with
// WEIR_MEASURE_FULL=1 (see the test for the other variables).
package membership
