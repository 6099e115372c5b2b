// Package membership holds weir's candidate memberlist timing profiles and
// the measurement that chose them: how long hashicorp/memberlist takes to
// declare dead a node whose process was SIGKILLed or frozen with SIGSTOP.
//
// The profiles (Fast, Relaxed and, for reference, LAN) are meant to move to
// the cluster's membership code once it exists; until then they live here
// beside the numbers that justify them (docs/measurements.md).
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
