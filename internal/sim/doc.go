// Package sim holds the deterministic simulation test of the replicated
// cluster (its code is all in _test.go files): the controller and
// partition state machines of three nodes stepped in one goroutine by a
// seeded scheduler that drops, delays and reorders messages, pauses,
// kills and restarts nodes, cuts links and isolates nodes, and moves the
// controller, with the invariants (checker_test.go) checked after every
// step.
//
// The decision logic is weir's own: metadata.Controller (Evaluate,
// FenceExpired, Sessions) applied to metadata.Image through
// metadata.Builder, partition.Replica, and replicafetcher.State. The
// shells around them restate what the real shells do: the metadata
// quorum as one sequencer with raft's failover behaviour
// (quorum_test.go), the nodes' broker duties, routing and lease
// (node_test.go, cluster/broker_duties.go, cluster/routing.go), the
// elector's rule (elector_test.go, cluster/elections.go), the partition
// actors' I/O (replica_test.go), the fetchers' I/O and the leader's side
// of replica fetches (fetch_test.go, wire/01_fetch_replica.go), and an
// in-memory log checked against log.Log (memlog_test.go,
// memlog_check_test.go).
//
// Running it:
//
//	go test ./internal/sim                                  # the CI seeds
//	WEIR_SIM_SEEDS=100000 WEIR_SIM_FIRST=5000 go test ./internal/sim -run 'TestSimulation$' -timeout 0
//	WEIR_SIM_SEED=123 WEIR_SIM_TRACE=1 go test ./internal/sim -run 'TestSimulation$' -v
//
// WEIR_SIM_ALL=1 runs every seed and counts the failures by invariant
// (for mutation runs). WEIR_SIM_MODEL (comma-separated) turns on
// behaviours of the code today that the CI scenario leaves out because
// the simulation finds them unsafe: "hints" (memberlist's failure
// verdicts shorten sessions, cluster/peers.go), "deposed" (a controller
// that lost its majority answers its own node's heartbeats until it
// steps down, cluster/metadata_actor.go's decide), "wiregap" (the
// Produce handler's lease check runs before, not with, the actor's
// append).
package sim
