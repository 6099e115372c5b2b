// Package log is weir's storage engine: one partition's log on disk in
// Apache Kafka's own layout, and the directory that holds many of them.
//
// A partition directory "<topic>-<partition>" holds segments named by their
// base offset (20 digits): a .log file of record batches (v2, magic 2) stored
// byte for byte as they are served, a sparse .index (relative offset ->
// position, one entry per index.interval.bytes) and a .timeindex (max
// timestamp so far -> offset), plus leader-epoch-checkpoint and
// partition.metadata. The log directory holds recovery-point-offset-checkpoint,
// log-start-offset-checkpoint, cleaner-offset-checkpoint and, after a clean
// shutdown, .kafka_cleanshutdown.
//
// A caller (the partition actor) uses it like this:
//
//  1. Open the directory once with OpenManager. It reads and removes the
//     clean-shutdown marker and starts the node's single fsync goroutine.
//  2. Open each partition with Manager.OpenLog. After an unclean shutdown
//     every segment from the recovery point on is scanned: each batch's
//     length, magic, CRC and offsets are checked, the log is truncated at the
//     first bad batch, and indexes and the epoch cache are rebuilt.
//  3. Append validated batches with Log.Append: a leader passes
//     AssignOffsets and its epoch (base offset and leader epoch are set in
//     place; both lie outside the CRC, which is never recomputed); a follower
//     passes batches with their offsets. Nothing is written if any batch is
//     bad.
//  4. Acknowledge according to the topic's flush policy: with
//     flush.messages=1 wait for Log.OnFlushed (the next group-commit round
//     fsyncs every log appended since the previous round); otherwise the
//     data is in the page cache and durability comes from replication.
//  5. Serve reads with Log.Read (whole batches, at least one, bounded by the
//     high watermark the caller passes as MaxOffset), ListOffsets with
//     OffsetForTimestamp, OffsetForLeaderEpoch with EndOffsetForEpoch.
//  6. Truncate a diverging follower with Log.TruncateTo; advance the start
//     with Log.DeleteRecordsBefore. Retention and compaction run in the
//     Manager's background (or on demand: RunRetention, Clean).
//  7. Close the Manager on shutdown: it flushes, trims indexes, writes the
//     checkpoints and, last, the clean-shutdown marker.
//
// All file I/O goes through FS; MemFS simulates process crashes and power
// cuts for tests. Sub-package batch reads, checks and builds record batches.
package log
