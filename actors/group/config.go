package group

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math"
)

// ErrInvalidConfig is a Config value out of range, wrapped with detail.
var ErrInvalidConfig = errors.New("group: invalid config")

// NewMemberJoinTimeoutMs is how long a new member's parked JoinGroup may
// wait for the rebalance before the member is dropped (Kafka's fixed
// GroupCoordinator.NewMemberJoinTimeoutMs, five minutes).
const NewMemberJoinTimeoutMs = 5 * 60 * 1000

// Config holds the coordinator's settings, spelled after Kafka's configs.
type Config struct {
	// GroupMinSessionTimeoutMs is group.min.session.timeout.ms: the
	// smallest session.timeout.ms a JoinGroup may ask for. Default 6000.
	GroupMinSessionTimeoutMs int32
	// GroupMaxSessionTimeoutMs is group.max.session.timeout.ms. Default
	// 1800000.
	GroupMaxSessionTimeoutMs int32
	// GroupMaxSize is group.max.size: the most members a group admits
	// (GROUP_MAX_SIZE_REACHED beyond). Default math.MaxInt32.
	GroupMaxSize int32
	// GroupInitialRebalanceDelayMs is group.initial.rebalance.delay.ms:
	// how long the first rebalance of an empty group waits for more
	// members, extended by the same delay while members keep arriving, up
	// to the rebalance timeout. Default 3000.
	GroupInitialRebalanceDelayMs int32
	// OffsetMetadataMaxBytes is offset.metadata.max.bytes: the longest
	// commit metadata, in UTF-16 code units as Java counts a String's
	// length. Default 4096.
	OffsetMetadataMaxBytes int32
	// OffsetsRetentionMs is offsets.retention.minutes in milliseconds:
	// how long the offsets of an Empty group outlive the moment it became
	// empty (KIP-211). Default 7 days.
	OffsetsRetentionMs int64
	// OffsetsRetentionCheckIntervalMs is
	// offsets.retention.check.interval.ms: how often ticks look for
	// expired offsets. Default 600000.
	OffsetsRetentionCheckIntervalMs int64
	// MemberIDSuffix returns the unique part of a generated member id
	// (Kafka: a random UUID after "<client.id or group.instance.id>-").
	// Nil uses a random version 4 UUID; tests inject a counter.
	MemberIDSuffix func() string
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		GroupMinSessionTimeoutMs:        6000,
		GroupMaxSessionTimeoutMs:        1800000,
		GroupMaxSize:                    math.MaxInt32,
		GroupInitialRebalanceDelayMs:    3000,
		OffsetMetadataMaxBytes:          4096,
		OffsetsRetentionMs:              7 * 24 * 60 * 60 * 1000,
		OffsetsRetentionCheckIntervalMs: 600000,
	}
}

// Validate reports the first value out of range.
func (c Config) Validate() error {
	switch {
	case c.GroupMinSessionTimeoutMs < 0:
		return fmt.Errorf("%w: group.min.session.timeout.ms %d below 0", ErrInvalidConfig, c.GroupMinSessionTimeoutMs)
	case c.GroupMaxSessionTimeoutMs < c.GroupMinSessionTimeoutMs:
		return fmt.Errorf("%w: group.max.session.timeout.ms %d below group.min.session.timeout.ms %d",
			ErrInvalidConfig, c.GroupMaxSessionTimeoutMs, c.GroupMinSessionTimeoutMs)
	case c.GroupMaxSize < 1:
		return fmt.Errorf("%w: group.max.size %d below 1", ErrInvalidConfig, c.GroupMaxSize)
	case c.GroupInitialRebalanceDelayMs < 0:
		return fmt.Errorf("%w: group.initial.rebalance.delay.ms %d below 0", ErrInvalidConfig, c.GroupInitialRebalanceDelayMs)
	case c.OffsetMetadataMaxBytes < 0:
		return fmt.Errorf("%w: offset.metadata.max.bytes %d below 0", ErrInvalidConfig, c.OffsetMetadataMaxBytes)
	case c.OffsetsRetentionMs < 1:
		return fmt.Errorf("%w: offsets.retention.minutes gives %d ms, below 1", ErrInvalidConfig, c.OffsetsRetentionMs)
	case c.OffsetsRetentionCheckIntervalMs < 1:
		return fmt.Errorf("%w: offsets.retention.check.interval.ms %d below 1", ErrInvalidConfig, c.OffsetsRetentionCheckIntervalMs)
	}
	return nil
}

// memberIDSuffix returns the configured suffix source or random UUIDs.
func (c Config) memberIDSuffix() string {
	if c.MemberIDSuffix != nil {
		return c.MemberIDSuffix()
	}
	return randomUUID()
}

// randomUUID formats 16 random bytes as a version 4 UUID, the form of
// Java's UUID.randomUUID().
func randomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
