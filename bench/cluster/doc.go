// Package cluster is `weir bench cluster`: the replicated cluster's
// benchmarks of docs/benchmarks.md, measured on real `weir serve`
// processes (three by default) on loopback, joined by gossip with the
// fast timing profile, every node a voter, beside a NATS JetStream
// reference cluster measured in the same run: three nats-server
// processes, each this program re-executed (Config.NATSExec,
// ServeNATSChild) to run nats-server from its Go module, so that a NATS
// server can be SIGKILLed as a weir node is.
//
// The scenarios (Config.Scenarios; all by default), in run order:
//
//   - Failover: a topic of Config.Partitions partitions (30), RF=3,
//     min.insync.replicas=2. A franz-go producer (in this process) and a
//     librdkafka producer (confluent-kafka under Config.Python), both at
//     their default settings (acks=all), send one record to every
//     partition every Config.ProduceEvery and log each partition's
//     acknowledgements. Each round signals the node leading the most
//     partitions: Config.Kills rounds with SIGKILL (the node is restarted
//     afterwards), Config.Stops with SIGSTOP (SIGCONT afterwards). A round
//     measures the time until a survivor's Metadata (polled every
//     Config.PollEvery) shows every partition led by a live node, each
//     producer's stall (the longest gap between consecutive
//     acknowledgements of any partition around the failure), the times
//     at which the survivors' logs show the gossip verdict and the
//     controller's fencing, and the time until the victim is back in
//     every ISR. Then the cluster settles for Config.Settle.
//   - Throughput: on the same cluster, bench/perf producing
//     Config.ThroughputRecords 1 KiB records at acks=all to an RF=3 topic
//     and at acks=1 to an RF=1 topic, and nats.go's async publish of
//     Config.NATSRecords to a 3-server JetStream R3 file stream,
//     interleaved Config.ThroughputReps times.
//   - NATS failover: the server leading the JetStream stream SIGKILLed
//     Config.NATSKills times (and restarted), with a publisher sending one
//     synchronous publish every Config.ProduceEvery through a surviving
//     server: the time to a new stream leader and the publisher's stall.
//   - Scale: a fresh cluster with Config.ScaleTopics x
//     Config.ScalePartitions partitions (100 x 30), RF=3: time from
//     CreateTopics to every partition led, RSS per node, idle CPU per
//     node over Config.IdleWindow, a SIGKILL of the node leading the most
//     partitions (time until they are all led again) and a cold start of
//     the whole cluster (time until every partition is led and writable).
//
// Nothing waits forever: every wait is bounded by Config.RoundTimeout or
// Config.StartTimeout, and a round whose leadership did not move or whose
// producers did not recover is reported as such (Round.Problems) while the
// run goes on. Result.WriteMarkdown prints the distributions (n, min,
// median, p99, max; bench/dist) beside the goals and the NATS figures.
//
// Each node's output is kept in its cluster's directory (Config.TempDir),
// removed after the scenario unless Config.Keep is set.
package cluster
