package log

import "time"

// CleanerConfig configures the log cleaner (compaction), Kafka's
// log.cleaner.* settings.
type CleanerConfig struct {
	// Enable is log.cleaner.enable. Default true (set Disable to turn off).
	Enable bool
	// Disable turns the cleaner off (the zero value keeps it on).
	Disable bool
	// DedupeBufferSize is log.cleaner.dedupe.buffer.size: the memory of the
	// key-to-offset map, which bounds the cleaner's memory. Default 16 MiB
	// (Kafka: 128 MiB shared by its threads).
	DedupeBufferSize int
	// LoadFactor is log.cleaner.io.buffer.load.factor: how full the map may
	// get. Default 0.9.
	LoadFactor float64
	// Backoff is log.cleaner.backoff.ms: the pause between cleaning passes
	// when nothing is cleanable. Default 15 s.
	Backoff time.Duration
}

func (c *CleanerConfig) setDefaults() {
	c.Enable = !c.Disable
	if c.DedupeBufferSize <= 0 {
		c.DedupeBufferSize = 16 << 20
	}
	if c.LoadFactor <= 0 || c.LoadFactor > 1 {
		c.LoadFactor = 0.9
	}
	if c.Backoff <= 0 {
		c.Backoff = 15 * time.Second
	}
}
