package fetchsession

import (
	"errors"
	"fmt"
)

// ErrInvalidConfig is wrapped by Config.Validate's errors.
var ErrInvalidConfig = errors.New("fetchsession: invalid config")

// Config sizes the session cache. Field names follow Kafka's broker
// configs.
type Config struct {
	// MaxSlots is max.incremental.fetch.session.cache.slots: the most
	// sessions the cache holds. 0 disables sessions (every full fetch is
	// answered with session id 0). Default 1000; must be >= 0.
	MaxSlots int
	// MinEvictionMs is min.incremental.fetch.session.eviction.ms, in
	// milliseconds: a session idle longer than this may always be evicted,
	// and a younger one only by a more valuable newcomer (see Cache).
	// Default 120000; must be >= 0.
	MinEvictionMs int64
}

// DefaultConfig returns Kafka's defaults: 1000 slots, 120000 ms.
func DefaultConfig() Config {
	return Config{MaxSlots: 1000, MinEvictionMs: 120000}
}

// TestConfig returns a small profile for tests: 4 slots, 1000 ms.
func TestConfig() Config {
	return Config{MaxSlots: 4, MinEvictionMs: 1000}
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.MaxSlots < 0 {
		return fmt.Errorf("%w: max.incremental.fetch.session.cache.slots %d < 0", ErrInvalidConfig, c.MaxSlots)
	}
	if c.MinEvictionMs < 0 {
		return fmt.Errorf("%w: min.incremental.fetch.session.eviction.ms %d < 0", ErrInvalidConfig, c.MinEvictionMs)
	}
	return nil
}
