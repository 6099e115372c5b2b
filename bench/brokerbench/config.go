package brokerbench

import (
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/weirmq/weir/bench"
	"github.com/weirmq/weir/bench/perf"
)

// ErrInvalidConfig matches (errors.Is) Config.Validate's errors, whose
// text is the detail alone (see bench.InvalidConfig).
var ErrInvalidConfig = errors.New("brokerbench: invalid config")

// invalidf returns an invalid setting's error (see bench.InvalidConfig).
func invalidf(format string, args ...any) error {
	return bench.InvalidConfig(ErrInvalidConfig, format, args...)
}

// Config describes one benchmark run. Start from DefaultConfig and set
// WeirPath (or leave it empty to measure the kfake references alone).
type Config struct {
	// WeirPath is the weir binary started as `weir serve` for every weir
	// measurement. Empty: the weir measurements are skipped and only the
	// references run (the smoke mode of tests without a weir binary).
	WeirPath string
	// Reps is the number of repetitions; each repetition runs every
	// measurement once, weir and its reference one after the other, in
	// alternating order. The report gives medians over the repetitions.
	// Default 5.
	Reps int
	// Records is the number of records of each throughput run with
	// RecordSize-byte values (measurements a, b and d). Default 2,000,000
	// (about 2 GiB, 5-10 s per run on the reference machine).
	Records int64
	// RecordSize is the value size in bytes of the throughput runs.
	// Default 1024.
	RecordSize int
	// SmallRecords is the number of records of the small-record run
	// (measurement e). Default 10,000,000.
	SmallRecords int64
	// SmallRecordSize is the value size in bytes of the small-record run.
	// Default 100.
	SmallRecordSize int
	// LatencyRate is the send rate, in records per second, of the latency
	// run (measurement c, acks=all). Default 5,000.
	LatencyRate float64
	// LatencyRecords is the number of records of the latency run. Default
	// 25,000 (5 s at LatencyRate).
	LatencyRecords int64
	// IdleTopics and IdlePartitions are the topics, and partitions per
	// topic, created for the RSS measurement (f). Default 10 x 100.
	IdleTopics, IdlePartitions int
	// IdleSettle is how long the broker is left idle before its RSS is
	// read, once all idle partitions have leaders (and before the
	// baseline reading without topics). Default 3 s.
	IdleSettle time.Duration
	// Linger, BatchBytes and MaxInFlight are the producer's linger.ms,
	// batch size bound and produce requests in flight per broker, the
	// setup the goals were set with. Defaults 5 ms, 1 MiB, 5.
	Linger      time.Duration
	BatchBytes  int32
	MaxInFlight int
	// Compression is the producers' batch codec. Default none, the
	// goals' setup; a codec shows the cost of the leader's check of
	// compressed batches (the values are one random 26-letter string per
	// run, so batches compress far: the check decompresses much per byte).
	Compression perf.Compression
	// TempDir is where each broker's fresh data directory is made; empty
	// means os.TempDir(). Every directory is removed after its run.
	TempDir string
	// StartTimeout bounds the wait for `weir serve` to print its ready
	// line and for a topic's partitions to get a leader. Default 60 s.
	StartTimeout time.Duration
	// ConsumeTimeout is the consumer's longest wait for more records.
	// Default 30 s.
	ConsumeTimeout time.Duration
	// WeirArgs are extra arguments appended to `weir serve`'s command
	// line (for example --log-level).
	WeirArgs []string
	// WeirEnv holds "KEY=value" entries added to the environment of
	// `weir serve` (for example GODEBUG or GOGC).
	WeirEnv []string
	// Measures selects the measurements to run, by letter; empty runs
	// them all.
	Measures []Measure
	// Logger receives one line per measurement and the brokers' start and
	// stop; nil discards them.
	Logger *slog.Logger
}

// DefaultConfig returns the defaults of `weir bench broker`, without a
// WeirPath.
func DefaultConfig() Config {
	return Config{
		Reps:            5,
		Records:         2_000_000,
		RecordSize:      1024,
		SmallRecords:    10_000_000,
		SmallRecordSize: 100,
		LatencyRate:     5000,
		LatencyRecords:  25_000,
		IdleTopics:      10,
		IdlePartitions:  100,
		IdleSettle:      3 * time.Second,
		Linger:          5 * time.Millisecond,
		BatchBytes:      1 << 20,
		MaxInFlight:     5,
		Compression:     perf.CompressionNone,
		StartTimeout:    60 * time.Second,
		ConsumeTimeout:  30 * time.Second,
	}
}

// Validate checks the fields' ranges.
func (c Config) Validate() error {
	switch {
	case c.Reps < 1:
		return invalidf("%d repetitions, need at least 1", c.Reps)
	case c.Records < 1 || c.SmallRecords < 1 || c.LatencyRecords < 1:
		return invalidf("record counts %d, %d and %d, each needs at least 1", c.Records, c.SmallRecords, c.LatencyRecords)
	case c.RecordSize < 0 || c.SmallRecordSize < 0:
		return invalidf("record sizes %d and %d, need at least 0", c.RecordSize, c.SmallRecordSize)
	case c.LatencyRate <= 0:
		return invalidf("latency rate %v records/s, need more than 0", c.LatencyRate)
	case c.IdleTopics < 1 || c.IdlePartitions < 1:
		return invalidf("%d idle topics of %d partitions, need at least 1 of 1", c.IdleTopics, c.IdlePartitions)
	case c.IdleSettle < 0:
		return invalidf("idle settle %v is negative", c.IdleSettle)
	case c.Linger < 0:
		return invalidf("linger %v is negative", c.Linger)
	case c.BatchBytes < 1:
		return invalidf("batch bytes %d, need at least 1", c.BatchBytes)
	case c.MaxInFlight < 1:
		return invalidf("max in flight %d, need at least 1", c.MaxInFlight)
	case c.StartTimeout <= 0 || c.ConsumeTimeout <= 0:
		return invalidf("timeouts %v and %v, need more than 0", c.StartTimeout, c.ConsumeTimeout)
	}
	for _, m := range c.Measures {
		if !slices.ContainsFunc(measurements, func(x measurement) bool { return x.id == m }) {
			return invalidf("no measurement %q; there are a, b, c, e and f (d is part of a)", m)
		}
	}
	return nil
}
