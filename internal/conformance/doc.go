// Package conformance holds the per-client conformance suite of weir: real,
// unmodified Kafka clients at their default settings against a real broker.
// The package has no code outside its tests; `go test ./...` runs it.
//
// Clients: franz-go kgo (kgo_test.go), IBM/sarama (sarama_test.go),
// segmentio/kafka-go (kafkago_test.go), librdkafka through the kcat binary
// (kcat_test.go), and kafka-python and confluent-kafka-python through small
// scripts in testdata/ run by /usr/bin/python3 (python_test.go). Each test
// adapts one client to a driver (conformance_test.go) and runs the same
// scenario with it:
//
//  1. Start a broker (broker_test.go): `weir serve --data DIR --listen
//     127.0.0.1:PORT --node-id 1` through internal/harness, or franz-go's
//     kfake in process when WEIR_CONFORMANCE_BROKER=kfake.
//  2. For each variant (acks=1, acks=all, one per compression codec the
//     client supports, and the client's default acks where that is neither,
//     such as kafka-go's acks=0): create a topic of three partitions with
//     the client's admin API (kadm where the client has none), produce keyed
//     records with headers and explicit timestamps where the client can set
//     them, then consume every partition from its start to its high
//     watermark by partition and offset, never through a consumer group.
//  3. Check the records (check_test.go): every produced record consumed
//     exactly once with its key, value, headers and timestamp (CreateTime);
//     offsets contiguous from 0 in each partition, consumed in offset order;
//     records of a partition in the order they were produced; and each
//     record where the producer said it was acknowledged, when the client
//     reports that. A raw Fetch (rawfetch_test.go) checks that every stored
//     batch is magic 2 with a valid CRC and that a compressed variant's
//     batches are stored with the codec the client sent.
//  4. Restart the broker (SIGTERM, which must end it with status 0, then
//     start it again on the same data directory and port) and repeat the
//     consumption and checks for every variant: the records must be exactly
//     where they were before the restart.
//
// Every variant produces 10,000 records (fullRecords); the whole suite
// takes about a minute on two cores. If CI time ever demands it, lower
// codecRecords (compressed variants) first; -short runs 500 per variant.
//
// Two relaxations, each for a client's documented behaviour rather than
// the broker's: at acks=0 (kafka-go's default) the produce order within a
// partition is not checked, because Kafka orders only requests on one
// connection and kafka-go spreads unacknowledged requests over several;
// and a compressed variant may store some batches uncompressed, because
// librdkafka and kafka-python send a batch uncompressed when compressing
// would not shrink it (but every partition needs a batch with the codec).
//
// A test of a client that is not Go skips when the client is missing (the
// kcat binary; /usr/bin/python3 importing kafka, snappy, lz4 and zstandard;
// /usr/bin/python3 importing confluent_kafka); with WEIR_REQUIRE_CLIENTS=1,
// as .ci/run sets it, it fails instead.
//
// The consumer group tests (groups_*_test.go, with the scripts
// testdata/*_group.py) run a second scenario with each client's group
// consumer: three members sharing a 12-partition topic while members leave
// and join, committed offsets across a broker restart, resumption with
// auto.offset.reset latest and earliest, and a member killed with SIGKILL
// (see groups_scenario_test.go). Against weir they set
// group.initial.rebalance.delay.ms=500 through a --config file.
//
// A failed check reports the client, the variant and the first differences
// found; the broker's output tail is logged by the harness. Failures are
// broker bugs to fix, never checks to weaken.
package conformance
