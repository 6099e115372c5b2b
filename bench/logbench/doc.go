// Package logbench is `weir bench log`: a disk benchmark and load generator
// for the storage engine alone (package log), in the spirit of Kafka's
// TestLinearWriteSpeed. Concurrent writers append record batches to the
// partitions of one log directory, optionally waiting for each append to be
// fsynced by the group commit (flush.messages=1), and the run reports
// throughput, appends per fsync round and append latency: a Progress line
// every Config.ReportInterval while it runs, and a Result at the end.
//
// Every record checks itself: its key is a Key naming the run, partition,
// writer, append and position it was written at, and its value is derived
// from the key (AppendValue), so VerifyRecord can check any record found in a
// log without knowing anything else.
//
// A crash test uses it this way:
//
//  1. Run it as a child process with Fsync and ReportSynced, and read its
//     stdout: after the ready line (ReadyPrefix), each line parsed by
//     ParseSynced names an append that the log reported durable.
//  2. Kill the child at any moment; a line already read stays true.
//  3. Open the directory with log.OpenManager and OpenLog (Config.LogConfig,
//     TopicPartition) and check that every reported append is there, at its
//     offsets, each record passing VerifyRecord with the Key the line names.
package logbench
