// Package bench holds weir's benchmarks and load generators. Each lives in
// its own subpackage and is run through `weir bench <name>` or `weir perf`:
//
//   - logbench (`weir bench log`): appends to partition logs on disk, the
//     storage engine alone, in the spirit of Kafka's TestLinearWriteSpeed.
//     Its records check themselves, so crash tests reuse it as a load
//     generator whose every acknowledged append can be verified afterwards.
//   - perf (`weir perf produce|consume`): the load generator behind
//     kafka-producer-perf-test.sh-style runs against any Kafka-compatible
//     broker, with Kafka's summary lines.
//   - brokerbench (`weir bench broker`): `weir serve` child processes
//     beside in-process kfake references, measured interleaved with perf;
//     medians and ratios as a Markdown report.
//   - groupbench (`weir bench groups`): offset commit throughput and
//     rebalance time against weir and kfake.
//   - cluster (`weir bench cluster`): three `weir serve` nodes joined by
//     gossip (fast profile): failover times with franz-go and librdkafka
//     producing, replicated throughput, and 3,000 partitions, beside a
//     NATS JetStream R3 reference cluster.
//
// The measurements taken before the replicated cluster was designed run as
// tests (`go test ./bench/<pkg> -run X -v`, short by default, the recorded
// counts with WEIR_MEASURE_FULL=1; figures in docs/measurements.md):
//
//   - membership: the candidate memberlist timing profiles (fast, relaxed)
//     and how long each takes to declare a SIGKILLed or SIGSTOPped node
//     dead, idle and under load.
//   - remotert: the cost of a protoactor remote round trip for a small
//     control message, in one process and between two.
//   - failover: what franz-go and librdkafka at their defaults do while a
//     partition leader moves (NOT_LEADER_OR_FOLLOWER with and without the
//     KIP-951 hint, a refused connection, LEADER_NOT_AVAILABLE).
//   - dist: the min/median/p99/max summary they share.
//
// brokerbench and groupbench start `weir serve` child processes in their
// own process groups and kill them when done; tests drive everything
// through internal/harness.
package bench
