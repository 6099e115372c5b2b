// Package perf is the load generator behind `weir perf produce` and
// `weir perf consume`, in the spirit of Kafka's kafka-producer-perf-test.sh
// and kafka-consumer-perf-test.sh. It talks to any Kafka-compatible broker
// through franz-go (kgo), so the same run can be pointed at weir, at
// franz-go's kfake or at Apache Kafka and the figures compared.
//
// A producer run (RunProducer) sends ProducerConfig.Records records of
// RecordSize random bytes without keys, paced to Throughput records per
// second when that is positive, and measures each record's latency from the
// moment it is handed to the client until the broker acknowledges it. A
// topic that does not exist is created by a broker that auto-creates topics
// (its metadata request allows it, as the Java producer's); otherwise the
// run fails with a MissingTopicError. It writes a progress line
// (WindowSummary) every ReportInterval and returns a ProducerResult whose
// Summary prints Kafka's final line:
//
//	100000 records sent, 52493.438320 records/sec (51.26 MB/sec), 4.21 ms avg latency, 245.00 ms max latency, 3 ms 50th, 9 ms 95th, 17 ms 99th, 52 ms 99.9th.
//
// A consumer run (RunConsumer) reads ConsumerConfig.Records records from the
// start (or with FromLatest the end) of every partition of the topic,
// directly or as a member of a consumer group, writes a progress line
// (ConsumerWindow) every ReportInterval while records come, and returns a
// ConsumerResult whose Summary prints the columns of
// kafka-consumer-perf-test.sh under ConsumerHeader.
//
// ProducerConfig.SetProperty maps the Java producer's config names (what
// Kafka's tool takes in --producer-props) onto a ProducerConfig.
//
// ParseProducerSummary and ParseConsumerSummary read those lines back, so a
// benchmark that runs `weir perf` as a child process can collect its
// figures. Latency percentiles come from Histogram, exact to the
// millisecond Kafka's tool prints; pacing comes from Throttle, which computes
// sleeps from the records sent so far and never spins.
//
// The package starts no broker and holds no test helpers.
package perf
