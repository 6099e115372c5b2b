package log

import (
	"fmt"
	"math"
	"time"
)

// Config holds one partition log's settings. Each field is the Kafka topic
// config of the same name (given in its doc), in Kafka's units and with
// Kafka's default (DefaultConfig).
type Config struct {
	// SegmentBytes is segment.bytes: a segment rolls before it would grow
	// past this size. Default 1 GiB; at least 14 (a batch header).
	SegmentBytes int64
	// SegmentMs is segment.ms: a segment rolls once its first batch is this
	// old (milliseconds). Default 7 days.
	SegmentMs int64
	// SegmentIndexBytes is segment.index.bytes: the preallocated size of each
	// offset and time index file; a full index rolls the segment. Default 10 MiB.
	SegmentIndexBytes int64
	// IndexIntervalBytes is index.interval.bytes: bytes appended between two
	// index entries. Default 4096.
	IndexIntervalBytes int64
	// RetentionMs is retention.ms: segments whose newest record is older are
	// deleted (cleanup.policy delete). -1 keeps forever. Default 7 days.
	RetentionMs int64
	// RetentionBytes is retention.bytes: the oldest segments are deleted while
	// the partition is larger. -1 is unlimited (default).
	RetentionBytes int64
	// CleanupDelete and CleanupCompact spell cleanup.policy: "delete"
	// (default), "compact", or "compact,delete".
	CleanupDelete  bool
	CleanupCompact bool
	// DeleteRetentionMs is delete.retention.ms: how long a tombstone survives
	// after its first cleaning. Default 1 day.
	DeleteRetentionMs int64
	// MinCleanableDirtyRatio is min.cleanable.dirty.ratio. Default 0.5.
	MinCleanableDirtyRatio float64
	// MinCompactionLagMs is min.compaction.lag.ms: records younger are never
	// compacted. Default 0.
	MinCompactionLagMs int64
	// FlushMessages is flush.messages: fsync after this many unflushed
	// messages. 1 selects the group-commit policy (every append is fsynced by
	// the node's one fsync round before it is acknowledged). Default
	// math.MaxInt64 (never: durability comes from replication).
	FlushMessages int64
	// FlushMs is flush.ms: fsync data older than this (milliseconds). Default
	// math.MaxInt64.
	FlushMs int64
}

// DefaultConfig returns Kafka's topic defaults.
func DefaultConfig() Config {
	return Config{
		SegmentBytes:           1 << 30,
		SegmentMs:              7 * 24 * int64(time.Hour/time.Millisecond),
		SegmentIndexBytes:      10 << 20,
		IndexIntervalBytes:     4096,
		RetentionMs:            7 * 24 * int64(time.Hour/time.Millisecond),
		RetentionBytes:         -1,
		CleanupDelete:          true,
		DeleteRetentionMs:      24 * int64(time.Hour/time.Millisecond),
		MinCleanableDirtyRatio: 0.5,
		FlushMessages:          math.MaxInt64,
		FlushMs:                math.MaxInt64,
	}
}

// GroupCommit reports whether flush.messages=1 selects the group-commit
// fsync policy.
func (c Config) GroupCommit() bool { return c.FlushMessages == 1 }

// Validate checks every field against Kafka's bounds.
func (c Config) Validate() error {
	switch {
	case c.SegmentBytes < 14 || c.SegmentBytes > math.MaxInt32:
		return fmt.Errorf("%w: segment.bytes %d not in [14, %d]", ErrInvalidConfig, c.SegmentBytes, math.MaxInt32)
	case c.SegmentMs < 1:
		return fmt.Errorf("%w: segment.ms %d below 1", ErrInvalidConfig, c.SegmentMs)
	case c.SegmentIndexBytes < 4*indexEntrySize:
		return fmt.Errorf("%w: segment.index.bytes %d below %d", ErrInvalidConfig, c.SegmentIndexBytes, 4*indexEntrySize)
	case c.SegmentIndexBytes > math.MaxInt32:
		return fmt.Errorf("%w: segment.index.bytes %d above %d", ErrInvalidConfig, c.SegmentIndexBytes, math.MaxInt32)
	case c.IndexIntervalBytes < 0:
		return fmt.Errorf("%w: index.interval.bytes %d below 0", ErrInvalidConfig, c.IndexIntervalBytes)
	case c.RetentionMs < -1:
		return fmt.Errorf("%w: retention.ms %d below -1", ErrInvalidConfig, c.RetentionMs)
	case !c.CleanupDelete && !c.CleanupCompact:
		return fmt.Errorf("%w: cleanup.policy needs delete, compact or both", ErrInvalidConfig)
	case c.DeleteRetentionMs < 0:
		return fmt.Errorf("%w: delete.retention.ms %d below 0", ErrInvalidConfig, c.DeleteRetentionMs)
	case c.MinCleanableDirtyRatio < 0 || c.MinCleanableDirtyRatio > 1:
		return fmt.Errorf("%w: min.cleanable.dirty.ratio %v not in [0, 1]", ErrInvalidConfig, c.MinCleanableDirtyRatio)
	case c.MinCompactionLagMs < 0:
		return fmt.Errorf("%w: min.compaction.lag.ms %d below 0", ErrInvalidConfig, c.MinCompactionLagMs)
	case c.FlushMessages < 1:
		return fmt.Errorf("%w: flush.messages %d below 1", ErrInvalidConfig, c.FlushMessages)
	case c.FlushMs < 0:
		return fmt.Errorf("%w: flush.ms %d below 0", ErrInvalidConfig, c.FlushMs)
	}
	return nil
}
