package logbench

import (
	"errors"
	"hash/fnv"
	"log/slog"
	"math"
	"time"

	"github.com/weirmq/weir/bench"
	"github.com/weirmq/weir/log"
)

// Topic is the topic whose partitions a run appends to: partition p lives
// in the directory "bench-<p>" under Config.Dir.
const Topic = "bench"

// ErrInvalidConfig matches (errors.Is) Config.Validate's errors. Their text
// is only the detail ("0 writers, need at least 1"), so that a command
// printing it after its own name does not repeat a prefix.
var ErrInvalidConfig = errors.New("logbench: invalid config")

// invalidf returns an invalid setting's error (see bench.InvalidConfig).
func invalidf(format string, args ...any) error {
	return bench.InvalidConfig(ErrInvalidConfig, format, args...)
}

// Bounds of segment.bytes, as log.Config checks them: the smallest segment
// holds one batch header.
const (
	minSegmentBytes = 14
	maxSegmentBytes = math.MaxInt32
)

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
	// ReportInterval is how often a progress line (Progress) is written
	// while the run goes on; 0 disables them. Default 5 s, as weir perf.
	ReportInterval time.Duration
	// Logger receives the log manager's events (recovery, truncation); nil
	// discards them.
	Logger *slog.Logger
}

// DefaultConfig returns the defaults of `weir bench log`, without a Dir.
func DefaultConfig() Config {
	return Config{
		Partitions:     16,
		Writers:        64,
		RecordSize:     1024,
		BatchBytes:     16384,
		Duration:       10 * time.Second,
		SegmentBytes:   log.DefaultConfig().SegmentBytes,
		ReportInterval: 5 * time.Second,
	}
}

// Validate checks the fields' ranges and combinations.
func (c Config) Validate() error {
	switch {
	case c.Dir == "":
		return invalidf("no directory")
	case c.Partitions < 1:
		return invalidf("%d partitions, need at least 1", c.Partitions)
	case c.Writers < 1:
		return invalidf("%d writers, need at least 1", c.Writers)
	case c.RecordSize < 1:
		return invalidf("record size %d below 1", c.RecordSize)
	case c.BatchBytes < 1:
		return invalidf("batch bytes %d below 1", c.BatchBytes)
	case c.Duration < 0 || c.Batches < 0:
		return invalidf("negative duration %v or batch count %d", c.Duration, c.Batches)
	case c.Duration == 0 && c.Batches == 0:
		return invalidf("neither a duration nor a batch count bounds the run")
	case c.ReportSynced && !c.Fsync:
		return invalidf("reporting synced appends needs fsync")
	case c.Run < 0:
		return invalidf("run id %d below 0", c.Run)
	case c.ReportInterval < 0:
		return invalidf("report interval %v is negative", c.ReportInterval)
	case c.SegmentBytes < minSegmentBytes || c.SegmentBytes > maxSegmentBytes:
		return invalidf("segment bytes %d not in [%d, %d]", c.SegmentBytes, minSegmentBytes, maxSegmentBytes)
	}
	if err := c.LogConfig().Validate(); err != nil {
		return invalidf("%v", err)
	}
	if size := c.approxBatchSize(); size > c.SegmentBytes {
		return invalidf("batches of about %d bytes do not fit segments of %d", size, c.SegmentBytes)
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
