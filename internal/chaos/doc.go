// Package chaos runs safety tests against a cluster of real `weir serve`
// processes: it starts the cluster (internal/harness), injects process
// faults (SIGKILL, SIGTERM, SIGSTOP/SIGCONT, restarts), drives verifiable
// clients and checks what they saw.
//
// The pieces:
//
//   - StartCluster starts n nodes on 127.0.0.1, each with its own data
//     directory and fixed ports (a restarted node keeps its addresses),
//     joined by gossip with the relaxed timing profile. Kill, Stop, Pause,
//     Resume and Restart act on one node; Describe, Leaders and the Wait
//     methods read the cluster's metadata as each live node serves it.
//   - Producers record every acknowledged record (partition, offset,
//     value) in a Ledger: FranzProducer (franz-go, idempotent, acks=all,
//     defaults otherwise) and RdkafkaProducer (confluent-kafka, that is
//     librdkafka, in a /usr/bin/python3 child reporting its delivery
//     reports on stdout). Values are "<producer>-<sequence>", unique per
//     run, so any record read back names the send it came from.
//   - ReadAll reads every partition from the start to its end offset;
//     GroupConsumer consumes in a consumer group and commits after each
//     poll, remembering every commit the coordinator acknowledged.
//   - Check compares the ledger with what was read: per partition, every
//     acknowledged record present exactly once, at the offset it was
//     acknowledged at, and each producer's records in send order. The
//     Report lists the lost, duplicated, moved and reordered records with
//     their values. CommitViolations does the same for committed offsets
//     (OffsetFetch after each round): none lost, none moved back.
//
// Faults and checks follow Kafka's system tests (replication_test.py's
// hard_bounce, the unclean leader election integration test) and
// Jepsen's queue checker (lost, duplicated and inconsistent offsets).
// Every wait polls a condition with a deadline; nothing sleeps a fixed
// time to synchronize.
//
// The package imports testing and is meant for tests only.
package chaos
