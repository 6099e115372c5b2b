package partition

import (
	"errors"
	"fmt"
	"math"
)

// ErrInvalidConfig is a Config value out of range, wrapped with detail.
var ErrInvalidConfig = errors.New("partition: invalid config")

// Config holds the replica's settings, spelled after Kafka's configs.
type Config struct {
	// NodeID is this broker's node.id.
	NodeID int32
	// MaxMessageBytes is max.message.bytes (message.max.bytes for the
	// broker): the largest record batch accepted, in bytes, whole batch
	// included. Default 1048588.
	MaxMessageBytes int32
	// MinInSyncReplicas is min.insync.replicas: the fewest ISR members an
	// acks=all append needs. Default 1.
	MinInSyncReplicas int
	// GroupCommit is flush.messages=1: an acknowledgement waits for the
	// data to be fsynced (log.OnFlushed); the local replica counts towards
	// the high watermark only up to its flushed offset.
	GroupCommit bool
	// LogAppendTime is message.timestamp.type=LogAppendTime (false:
	// CreateTime): the leader sets each batch's max timestamp to the
	// append time (AppendBatches.NowMs), sets the timestamp-type attribute
	// bit and recomputes the CRC, without recompressing.
	LogAppendTime bool
	// TimestampBeforeMaxMs and TimestampAfterMaxMs are
	// message.timestamp.before.max.ms and message.timestamp.after.max.ms:
	// with CreateTime, a batch whose first timestamp is further before
	// the append time, or whose max timestamp is further after it, gets
	// INVALID_TIMESTAMP. Defaults: unbounded and one hour (Kafka 4).
	TimestampBeforeMaxMs, TimestampAfterMaxMs int64
	// Compacted is a cleanup.policy that includes compact: every record
	// must have a key (INVALID_RECORD otherwise, as Kafka), so compressed
	// batches are decompressed to check.
	Compacted bool
	// ProducerIDExpirationMs is producer.id.expiration.ms: a producer
	// without a transaction is forgotten this long after its last batch's
	// timestamp. Default 86400000 (one day).
	ProducerIDExpirationMs int64
	// ProducerIDExpirationCheckIntervalMs is
	// producer.id.expiration.check.interval.ms: how often ticks look for
	// expired producers. Default 600000 (ten minutes).
	ProducerIDExpirationCheckIntervalMs int64
	// ReplicaLagTimeMaxMs is replica.lag.time.max.ms: the leader proposes
	// removing a follower from the ISR when the follower has not caught up
	// with the leader's log end offset for this long. Default 10000 (weir's
	// departure from Kafka's 30000, docs/DESIGN.md).
	ReplicaLagTimeMaxMs int64
}

// DefaultConfig returns Kafka's defaults for node 1.
func DefaultConfig() Config {
	return Config{
		NodeID:                              1,
		MaxMessageBytes:                     1048588,
		MinInSyncReplicas:                   1,
		TimestampBeforeMaxMs:                math.MaxInt64,
		TimestampAfterMaxMs:                 3600000,
		ProducerIDExpirationMs:              86400000,
		ProducerIDExpirationCheckIntervalMs: 600000,
		ReplicaLagTimeMaxMs:                 10000,
	}
}

// Validate reports the first value out of range.
func (c Config) Validate() error {
	switch {
	case c.NodeID < 0:
		return fmt.Errorf("%w: node.id %d below 0", ErrInvalidConfig, c.NodeID)
	case c.MaxMessageBytes < 0:
		return fmt.Errorf("%w: max.message.bytes %d below 0", ErrInvalidConfig, c.MaxMessageBytes)
	case c.MinInSyncReplicas < 1:
		return fmt.Errorf("%w: min.insync.replicas %d below 1", ErrInvalidConfig, c.MinInSyncReplicas)
	case c.ProducerIDExpirationMs < 1:
		return fmt.Errorf("%w: producer.id.expiration.ms %d below 1", ErrInvalidConfig, c.ProducerIDExpirationMs)
	case c.TimestampBeforeMaxMs < 0 || c.TimestampAfterMaxMs < 0:
		return fmt.Errorf("%w: message.timestamp.before.max.ms %d and after.max.ms %d must be at least 0",
			ErrInvalidConfig, c.TimestampBeforeMaxMs, c.TimestampAfterMaxMs)
	case c.ProducerIDExpirationCheckIntervalMs < 1:
		return fmt.Errorf("%w: producer.id.expiration.check.interval.ms %d below 1", ErrInvalidConfig, c.ProducerIDExpirationCheckIntervalMs)
	case c.ReplicaLagTimeMaxMs < 1:
		return fmt.Errorf("%w: replica.lag.time.max.ms %d below 1", ErrInvalidConfig, c.ReplicaLagTimeMaxMs)
	}
	return nil
}
