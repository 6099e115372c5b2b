// Package batch reads, checks and builds Kafka record batches (v2, magic 2)
// as byte slices, the unit weir stores and serves unchanged.
//
// A batch is never decoded to be stored: the log sets the base offset and the
// partition leader epoch in place (both lie outside the CRC) after Validate.
// Records are decoded only where the broker must look inside (timestamp
// lookups, compaction, dump-log), with the codecs in compression.go.
package batch
