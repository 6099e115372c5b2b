// Package clustertest runs a replicated weir cluster inside one test
// process: several nodes, each with its own actor system, actor remote,
// gossip and data directory, on loopback ports, with the relaxed timing
// profile so that a loaded machine never sees a false failure. Nodes can
// be stopped (gracefully, or halted as a crash looks to the others) and
// started again on the same data directory.
//
// Tests wait on conditions (WaitFor, WaitLeaders), never on sleeps. The
// package imports testing and is meant for tests only; multi-process
// tests with real `weir serve` processes use internal/harness.
package clustertest
