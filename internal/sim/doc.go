// Package sim holds the deterministic simulation test of the replicated
// cluster (its code is all in _test.go files): the controller and
// partition state machines of three nodes stepped in one goroutine by a
// seeded scheduler that drops, delays and reorders messages, pauses,
// kills and restarts nodes, cuts links and moves the controller, with the
// invariants checked after every step. See checker_test.go for the
// invariants and sim_test.go for how to run and replay seeds
// (WEIR_SIM_SEEDS, WEIR_SIM_FIRST, WEIR_SIM_SEED).
//
// The decision logic is weir's own: metadata.Controller (Evaluate,
// FenceExpired, Sessions) applied to metadata.Image through
// metadata.Builder, partition.Replica, and replicafetcher.State. The
// shells around them (the metadata quorum as one sequencer, the nodes'
// broker duties and lease, the partition actors' and fetchers' I/O, the
// leader's side of replica fetches, an in-memory log) restate what the
// real shells do.
package sim
