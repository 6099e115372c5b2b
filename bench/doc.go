// Package bench holds weir's benchmarks and load generators. Each lives in
// its own subpackage and is run through `weir bench <name>`:
//
//   - logbench (`weir bench log`): appends to partition logs on disk, the
//     storage engine alone, in the spirit of Kafka's TestLinearWriteSpeed.
//     Its records check themselves, so crash tests reuse it as a load
//     generator whose every acknowledged append can be verified afterwards.
//
// The packages here start no processes of their own and hold no test
// helpers; the tests that drive them as child processes use
// internal/harness.
package bench
