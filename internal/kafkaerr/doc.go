// Package kafkaerr is weir's one table from internal errors to Kafka error
// codes, used by every package that answers a client or another broker:
// wire, the partition actors (actors/partition) and the controller
// (cluster/metadata, whose answers cluster forwards).
//
// # Where it sits
//
// It imports only franz-go's kerr and kmsg and weir's log and log/batch,
// which import nothing of weir above them, so every package that answers
// can import it without a cycle (log <- cluster/metadata <- actors <- wire
// <- cluster). It cannot import the packages above log whose sentinels it
// maps (cluster/config, cluster/metadata, cluster/quorum, cluster), so those
// make their sentinels with New and a Kind of this package; the table names
// the Kind. log's and batch's sentinels are plain errors.New values that the
// table names itself. Nothing registers at run time: the table is a literal
// (table.go), and a Kind is a constant.
//
// # Using it
//
//   - Of(err) is the Kafka error err maps to in any request: the first
//     row of the table whose error err matches (errors.Is: a sentinel, or a
//     Kind), else a *kerr.Error err wraps, else UNKNOWN_SERVER_ERROR. Code
//     is its code (0 for nil).
//   - OfStorage(err) is Of for the error of a storage operation (a log
//     append, read, lookup, flush or deletion): an error no row names is
//     KAFKA_STORAGE_ERROR rather than UNKNOWN_SERVER_ERROR, as Kafka answers
//     a request its log directory failed (an I/O error, a full disk).
//     StorageCode is its code.
//   - OfAPI(api, err) is Of for a request of that Kafka API: the rows
//     limited to the API come first. Kafka's controller throws a different
//     exception for one condition in different requests (an unregistered
//     broker is INVALID_REPLICA_ASSIGNMENT in a CreateTopics assignment,
//     STALE_BROKER_EPOCH in an AlterPartition).
//
// To add a sentinel that can reach a client: give it a row (a Kind first
// when it lives above log), and add it to the list of sentinels in
// sentinels_test.go, which fails for an exported Err* of the mapped
// packages that it does not list.
package kafkaerr
