// Package brokerbench is `weir bench broker`: the broker benchmarks of
// docs/benchmarks.md, weir beside franz-go's kfake measured in the same run.
//
// One run repeats, Config.Reps times, five measurements, each on fresh
// brokers with fresh data directories:
//
//	(a) 1 KiB records at acks=1: `weir serve` (no fsync) against kfake with
//	    DataDir; then (d) the same records consumed back from each broker.
//	(b) 1 KiB records at acks=1 with an fsync before the acknowledgement:
//	    weir with topic config flush.messages=1 (group commit) against kfake
//	    with DataDir and SyncWrites.
//	(c) produce latency of 1 KiB records at 5,000 records/s with acks=all.
//	(e) 100-byte records at acks=1, in records per second.
//	(f) the RSS of `weir serve` idle, then with 1,000 idle partitions.
//
// Every producer is bench/perf's franz-go producer with the setup the
// goals were set with: one partition, linger 5 ms, 1 MiB batches, five produce
// requests in flight. `weir serve` runs as a child process in its own
// process group (killed at the end of its measurement); kfake runs in this
// process on a loopback port, so it shares the client's CPUs and garbage
// collector while weir has a process of its own.
//
// Besides throughput, latency and memory, the produce and consume runs
// record the CPU time spent per MiB: by this process and the broker's
// together (on a 2-core machine, what throughput is bound by) and, for
// weir, by the broker's process alone, read from /proc/PID/stat. They
// show where the time goes when the wall-clock figures are disturbed by
// other work on the machine.
//
// Within a repetition, weir and its reference run one after the other, in
// alternating order from one repetition to the next, so that each ratio
// pairs measurements taken close together on a noisy machine. The report
// (Result.WriteMarkdown) gives the medians over the repetitions, the ratio
// of the medians, the range of the per-repetition ratios, and each goal.
package brokerbench
