package replicafetcher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Conn is a Kafka client connection to the leader's broker (in weir,
// wire.BrokerConn, which package cluster injects: actors never import
// wire). Request sends one request at its version and returns the decoded
// response; an error means the connection is unusable, and the fetcher
// closes it and dials again.
type Conn interface {
	Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
	Close() error
}

// Dialer connects to the leader node's Kafka listener; the cluster
// resolves the node's address from its metadata. It honours ctx.
type Dialer func(ctx context.Context, leader int32) (Conn, error)

// Defaults, Kafka's (replica.fetch.*).
const (
	DefaultMaxWaitMs         = 500      // replica.fetch.wait.max.ms
	DefaultMinBytes          = 1        // replica.fetch.min.bytes
	DefaultMaxBytes          = 10 << 20 // replica.fetch.response.max.bytes
	DefaultPartitionMaxBytes = 1 << 20  // replica.fetch.max.bytes
	DefaultBackoffMs         = 1000     // replica.fetch.backoff.ms
	// DefaultRequestTimeoutSlack is what a Fetch may take beyond its
	// max wait before the fetcher gives up on it: RequestTimeout defaults
	// to MaxWaitMs plus this.
	DefaultRequestTimeoutSlack = 10 * time.Second
)

// ErrInvalidConfig is a Config Spawn cannot use; wrapped with detail.
var ErrInvalidConfig = errors.New("replicafetcher: invalid config")

// Config is one fetcher's settings: the follower node, the leader node it
// fetches from, how to reach it, and Kafka's replica.fetch.* settings.
// Zero numeric fields take the defaults above.
type Config struct {
	// NodeID is this (follower) node: the Fetch requests' replica_id.
	NodeID int32
	// Leader is the leader node this fetcher fetches from.
	Leader int32
	// Dial connects to Leader; required.
	Dial Dialer
	// MaxWaitMs is replica.fetch.wait.max.ms: how long the leader holds a
	// Fetch that found less than MinBytes.
	MaxWaitMs int32
	// MinBytes is replica.fetch.min.bytes.
	MinBytes int32
	// MaxBytes is replica.fetch.response.max.bytes, the response's bound.
	MaxBytes int32
	// PartitionMaxBytes is replica.fetch.max.bytes, each partition's
	// bound (the first batch is returned whole even when larger, KIP-74).
	PartitionMaxBytes int32
	// BackoffMs is replica.fetch.backoff.ms: the wait after a failed
	// Fetch (the connection is dialed again after it) and before a
	// partition that failed is tried again.
	BackoffMs int32
	// RequestTimeout bounds one Fetch (the dial included) and the wait
	// for a partition actor's answer; 0 means MaxWaitMs +
	// DefaultRequestTimeoutSlack.
	RequestTimeout time.Duration
	// Logger receives the fetcher's warnings; nil means slog.Default().
	Logger *slog.Logger
}

// withDefaults returns cfg with its zero fields defaulted.
func (cfg Config) withDefaults() Config {
	if cfg.MaxWaitMs == 0 {
		cfg.MaxWaitMs = DefaultMaxWaitMs
	}
	if cfg.MinBytes == 0 {
		cfg.MinBytes = DefaultMinBytes
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.PartitionMaxBytes == 0 {
		cfg.PartitionMaxBytes = DefaultPartitionMaxBytes
	}
	if cfg.BackoffMs == 0 {
		cfg.BackoffMs = DefaultBackoffMs
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = time.Duration(cfg.MaxWaitMs)*time.Millisecond + DefaultRequestTimeoutSlack
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg
}

// validate checks a defaulted config.
func (cfg Config) validate() error {
	switch {
	case cfg.Dial == nil:
		return fmt.Errorf("%w: no Dial", ErrInvalidConfig)
	case cfg.NodeID < 0:
		return fmt.Errorf("%w: node id %d", ErrInvalidConfig, cfg.NodeID)
	case cfg.Leader < 0 || cfg.Leader == cfg.NodeID:
		return fmt.Errorf("%w: leader %d for node %d", ErrInvalidConfig, cfg.Leader, cfg.NodeID)
	case cfg.MaxWaitMs < 0 || cfg.MinBytes < 0 || cfg.MaxBytes < 0 || cfg.PartitionMaxBytes < 0 || cfg.BackoffMs < 0:
		return fmt.Errorf("%w: negative replica.fetch.* setting", ErrInvalidConfig)
	case cfg.RequestTimeout <= time.Duration(cfg.MaxWaitMs)*time.Millisecond:
		return fmt.Errorf("%w: request timeout %v not above max wait %d ms", ErrInvalidConfig, cfg.RequestTimeout, cfg.MaxWaitMs)
	}
	return nil
}
