// Package harness runs real processes in tests: the weir binary (built once
// per test binary) or any other program, on loopback ports, with their
// output captured and nothing left running when a test ends.
//
// A test package that starts weir processes:
//
//  1. Declares `func TestMain(m *testing.M) { harness.Main(m) }` so the
//     binary built by BuildWeir is removed when the tests finish.
//  2. Picks ports with FreePort or FreePorts (127.0.0.1 only).
//  3. Calls Start with Options giving the arguments and a readiness
//     condition (ReadyLine, ReadyAddr or both). Start builds weir on first
//     use, starts it in its own process group, waits until it is ready and
//     registers a cleanup that kills the whole group, so neither the child
//     nor anything it started outlives the test.
//  4. Drives the process: WaitForLine or an OnLine callback to follow its
//     output live, Signal, Stop, Kill and Wait to end it. Waits poll a
//     condition or a channel; nothing sleeps a fixed time to synchronize.
//
// When a test fails, the tail of each process's stdout and stderr is logged
// at cleanup, and readiness errors carry the same tail.
//
// The package imports testing and is meant for tests and benchmarks only.
package harness
