// Package batch reads, checks and builds Kafka record batches (v2, magic 2)
// as byte slices, the unit weir stores and serves unchanged.
//
// A batch is never re-encoded to be stored: the log sets the base offset and
// the partition leader epoch in place (both lie outside the CRC) after
// Validate. The leader walks every produced batch's records (CheckRecords,
// decompressing a compressed one into a pooled buffer, see scratch.go);
// records are decoded only where the broker must look inside (timestamp
// lookups, compaction, dump-log), with the codecs in compression.go, never
// past MaxDecompressed.
//
// Files:
//   - header.go: the fixed header: Size, Validate, ParseHeader, field
//     accessors, the in-place setters and the CRC.
//   - split.go: Split cuts a run of batches (a segment, a produce payload).
//   - records.go, scan.go: Records, ForEachRecord, ScanRecords and Timestamp
//     decode and check the records of one batch; check.go: CheckRecords,
//     the leader's walk of a produced batch.
//   - scratch.go: MaxDecompressed and the pooled decompression slots.
//   - compression.go, snappy.go: Compress and Decompress for gzip, snappy
//     (raw blocks and the Java client's xerial framing), lz4 and zstd, with
//     pooled coders and a limit on the decompressed size.
//   - build.go: Build encodes records as a batch, for tests, the compactor
//     and benchmarks.
//
// A caller storing a batch from a producer:
//  1. cuts the payload with Split and checks each batch with Validate (it
//     does not allocate);
//  2. applies its own policy to the header Validate returns (record count
//     against offsets, producer state, timestamps) and checks the records
//     with CheckRecords (bounded by MaxDecompressed);
//  3. sets the base offset and leader epoch with SetBaseOffset and
//     SetPartitionLeaderEpoch, which leave the CRC valid, and stores the bytes.
package batch
