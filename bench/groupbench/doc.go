// Package groupbench is `weir bench groups`: the consumer group benchmarks
// of docs/benchmarks.md, `weir serve` beside franz-go's kfake in the same run.
//
// Each repetition measures, on fresh brokers with fresh data directories,
// weir and kfake one after the other (in alternating order from one
// repetition to the next):
//
//	(a) Commit throughput: Config.Groups groups (100) each commit offsets
//	    for Config.PartitionsPerGroup partitions (10) of one topic, one
//	    OffsetCommit request per commit, Config.CommitRounds times per
//	    group, all groups at once over Config.Clients kgo clients. The
//	    groups have no members (generation -1, as an admin tool or a
//	    consumer with manual assignment commits). Reported as commit
//	    requests per second and partition offsets per second.
//	(b) Rebalance time: Config.Members kgo consumers (100, eager range
//	    balancer, otherwise kgo's defaults) join one group on a topic with
//	    as many partitions. Measured from the moment the last consumer is
//	    started (its JoinGroup goes out) until DescribeGroups first shows
//	    the group Stable with every member assigned a partition, polled
//	    every Config.PollInterval. The broker's
//	    group.initial.rebalance.delay.ms (weir: 3 s by default; kfake has
//	    none) is part of that time; the report also gives the time after
//	    it, which the goal (under 1 s) is about.
//
// `weir serve` runs as a child process in its own process group; kfake
// runs in this process, sharing the clients' CPUs. The report
// (Result.WriteMarkdown) gives medians over the repetitions and the ratio
// weir/kfake of the medians.
package groupbench
