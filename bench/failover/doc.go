// Package failover is `weir bench failover`: it starts a cluster of
// `weir serve` processes (three by default, fast gossip profile, every
// node a voter), produces verifiable records to it while it injects a
// fault into every round, consumes them back in a consumer group, and
// reports per round what was acknowledged, lost, duplicated and
// reordered, how long producers and the consumer stalled, how long the
// cluster took to show a new leader, and which client errors the fault
// caused.
//
// The pieces, each in its own file:
//
//   - checker.go: CheckRound, the pure comparison of what the producer
//     acknowledged with what the consumer read (no I/O, no clock).
//   - record.go: the record value, carrying its round, its number in the
//     round and its send time.
//   - producer.go, consumer.go: the franz-go producer (async, callbacks)
//     and the consumer-group member (commit after processing).
//   - errtap.go: a connection wrapper that decodes every response the
//     clients read and counts the error codes in it, the way the seed's
//     client logs showed them (franz-go's hooks carry no error codes).
//   - faults.go: the faults (leader, controller, two, all, pause,
//     rolling) and the time to a new leader from Metadata polls.
//   - readback.go: the read of the log itself, outside the group, for
//     acknowledged records the group member had not read when a round
//     ended, so that only records missing from the log count as lost.
//   - run.go: the rounds; report.go, output.go, plot.go: the table, the
//     JSON, the Markdown, the PNG per scenario and the progress bar.
//
// The nodes are bench/cluster's (cluster.StartNodes), or, with
// Config.External, an existing cluster driven by the user's stop, start,
// pause and resume commands (target.go, external.go).
package failover
