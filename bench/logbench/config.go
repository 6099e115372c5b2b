package logbench

import (
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"time"

	"github.com/weirmq/weir/log"
)

// Topic is the topic whose partitions a run appends to: partition p lives
// in the directory "bench-<p>" under Config.Dir.
const Topic = "bench"

// ErrInvalidConfig is wrapped by Config.Validate's errors.
var ErrInvalidConfig = errors.New("logbench: invalid config")

// Config describes one run. The zero value is not usable; start from
// DefaultConfig and set Dir.
type Config struct {
	// Dir is the log directory (a log.dirs entry); it is created if missing
	// and may hold the partitions of earlier runs, which are recovered and
	// appended to.
	Dir string
	// Partitions is the number of partition logs, bench-0 to bench-(n-1).
	// Default 16.
	Partitions int
	// Writers is the number of concurrent appenders; writer w appends to
	// partition w mod Partitions. Default 64.
	Writers int
	// RecordSize is the size in bytes of each record's value (its key adds
	// about 30 bytes, the record framing a few more). Default 1024.
	RecordSize int
	// BatchBytes sets the records per batch: BatchBytes/RecordSize, at
	// least 1. Each append is one batch. Default 16384.
	BatchBytes int
	// Fsync selects the group-commit policy (flush.messages=1): each writer
	// waits until its append is durable before the next one.
	Fsync bool
	// Duration bounds the run's length; 0 means no time bound (Batches must
	// then be set). Default 10 s.
	Duration time.Duration
	// Batches bounds the number of batches appended by all writers
	// together; 0 means no count bound. The run stops at the first bound
	// reached.
	Batches int64
	// SegmentBytes is segment.bytes of every partition. Default 1 GiB.
	SegmentBytes int64
	// ReportSynced writes one line per append to the output once the append
	// is durable (see Synced). It requires Fsync.
	ReportSynced bool
	// Run is written into every record key, so that the records of several
	// runs on one directory can be told apart. Default 0.
	Run int64
	// Logger receives the log manager's events (recovery, truncation); nil
	// discards them.
	Logger *slog.Logger
}

// DefaultConfig returns the defaults of `weir bench log`, without a Dir.
func DefaultConfig() Config {
	return Config{
		Partitions:   16,
		Writers:      64,
		RecordSize:   1024,
		BatchBytes:   16384,
		Duration:     10 * time.Second,
		SegmentBytes: log.DefaultConfig().SegmentBytes,
	}
}

// Validate checks the fields' ranges and combinations.
func (c Config) Validate() error {
	switch {
	case c.Dir == "":
		return fmt.Errorf("%w: no directory", ErrInvalidConfig)
	case c.Partitions < 1:
		return fmt.Errorf("%w: %d partitions, need at least 1", ErrInvalidConfig, c.Partitions)
	case c.Writers < 1:
		return fmt.Errorf("%w: %d writers, need at least 1", ErrInvalidConfig, c.Writers)
	case c.RecordSize < 1:
		return fmt.Errorf("%w: record size %d below 1", ErrInvalidConfig, c.RecordSize)
	case c.BatchBytes < 1:
		return fmt.Errorf("%w: batch bytes %d below 1", ErrInvalidConfig, c.BatchBytes)
	case c.Duration < 0 || c.Batches < 0:
		return fmt.Errorf("%w: negative duration %v or batch count %d", ErrInvalidConfig, c.Duration, c.Batches)
	case c.Duration == 0 && c.Batches == 0:
		return fmt.Errorf("%w: neither a duration nor a batch count bounds the run", ErrInvalidConfig)
	case c.ReportSynced && !c.Fsync:
		return fmt.Errorf("%w: reporting synced appends needs fsync", ErrInvalidConfig)
	case c.Run < 0:
		return fmt.Errorf("%w: run id %d below 0", ErrInvalidConfig, c.Run)
	}
	if err := c.LogConfig().Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if size := c.approxBatchSize(); size > c.SegmentBytes {
		return fmt.Errorf("%w: batches of about %d bytes do not fit segments of %d", ErrInvalidConfig, size, c.SegmentBytes)
	}
	return nil
}

// RecordsPerBatch is the number of records in each appended batch.
func (c Config) RecordsPerBatch() int {
	return max(1, c.BatchBytes/max(1, c.RecordSize))
}

// approxBatchSize is an upper bound of a batch's encoded size.
func (c Config) approxBatchSize() int64 {
	const recordOverhead = 64 // key, length, attributes, deltas, header count
	return int64(batchHeaderSize + c.RecordsPerBatch()*(c.RecordSize+recordOverhead))
}

// LogConfig is the partition log configuration of a run: Kafka's defaults
// with SegmentBytes, flush.messages=1 under Fsync, and retention off so a
// run never deletes what it wrote. Checkers open the logs with it.
func (c Config) LogConfig() log.Config {
	lc := log.DefaultConfig()
	lc.SegmentBytes = c.SegmentBytes
	lc.RetentionMs = -1
	if c.Fsync {
		lc.FlushMessages = 1
	}
	return lc
}

// TopicPartition names partition p of the benchmark's topic.
func TopicPartition(p int32) log.TopicPartition {
	return log.TopicPartition{Topic: Topic, Partition: p}
}

// TopicID is the topic id written to each partition's partition.metadata:
// a fixed hash of Topic, the same in every run.
func TopicID() [16]byte {
	h := fnv.New128a()
	h.Write([]byte(Topic))
	var id [16]byte
	copy(id[:], h.Sum(nil))
	return id
}
