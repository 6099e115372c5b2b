package groupbench

import (
	"errors"
	"log/slog"
	"time"

	"github.com/weirmq/weir/bench"
)

// ErrInvalidConfig matches (errors.Is) Config.Validate's errors, whose
// text is the detail alone (see bench.InvalidConfig).
var ErrInvalidConfig = errors.New("groupbench: invalid config")

// invalidf returns an invalid setting's error (see bench.InvalidConfig).
func invalidf(format string, args ...any) error {
	return bench.InvalidConfig(ErrInvalidConfig, format, args...)
}

// Config describes one benchmark run. Start from DefaultConfig.
type Config struct {
	// WeirPath is the weir binary run as `weir serve`; empty measures
	// kfake alone.
	WeirPath string
	// WeirArgs are extra arguments of `weir serve` (e.g. --log-level).
	WeirArgs []string
	// Reps is the number of repetitions. Default 3.
	Reps int
	// Groups is the number of committing groups of (a). Default 100.
	Groups int
	// PartitionsPerGroup is the partitions each commit of (a) covers.
	// Default 10.
	PartitionsPerGroup int
	// CommitRounds is the commits each group makes in (a). Default 200.
	CommitRounds int
	// Clients is the number of kgo clients the groups of (a) share.
	// Default 4.
	Clients int
	// Members is the number of consumers joining the group of (b).
	// Default 100.
	Members int
	// InitialRebalanceDelay is weir's group.initial.rebalance.delay.ms,
	// subtracted from (b)'s weir time in the report. Default 3 s (Kafka's
	// default); kfake has no such delay.
	InitialRebalanceDelay time.Duration
	// PollInterval is how often (b) describes the group. Default 5 ms.
	PollInterval time.Duration
	// TempDir is the parent of the brokers' data directories; empty means
	// os.TempDir(). Each directory is removed after its run.
	TempDir string
	// StartTimeout bounds a broker's start. Default 60 s.
	StartTimeout time.Duration
	// MeasureTimeout bounds one measurement. Default 5 min.
	MeasureTimeout time.Duration
	// Logger receives a line per measurement; nil discards them.
	Logger *slog.Logger
}

// DefaultConfig returns the benchmark the goals were set for: 100 groups
// of 10 partitions, 100 members, three repetitions.
func DefaultConfig() Config {
	return Config{
		Reps:                  3,
		Groups:                100,
		PartitionsPerGroup:    10,
		CommitRounds:          200,
		Clients:               4,
		Members:               100,
		InitialRebalanceDelay: 3 * time.Second,
		PollInterval:          5 * time.Millisecond,
		StartTimeout:          60 * time.Second,
		MeasureTimeout:        5 * time.Minute,
	}
}

// Validate reports the first value out of range.
func (c Config) Validate() error {
	switch {
	case c.Reps < 1:
		return invalidf("reps %d, want at least 1", c.Reps)
	case c.Groups < 1:
		return invalidf("groups %d, want at least 1", c.Groups)
	case c.PartitionsPerGroup < 1:
		return invalidf("partitions per group %d, want at least 1", c.PartitionsPerGroup)
	case c.CommitRounds < 1:
		return invalidf("commit rounds %d, want at least 1", c.CommitRounds)
	case c.Clients < 1:
		return invalidf("clients %d, want at least 1", c.Clients)
	case c.Members < 1:
		return invalidf("members %d, want at least 1", c.Members)
	case c.InitialRebalanceDelay < 0:
		return invalidf("initial rebalance delay %v below 0", c.InitialRebalanceDelay)
	case c.PollInterval <= 0:
		return invalidf("poll interval %v, want more than 0", c.PollInterval)
	case c.StartTimeout <= 0 || c.MeasureTimeout <= 0:
		return invalidf("start timeout %v and measure timeout %v must be more than 0", c.StartTimeout, c.MeasureTimeout)
	}
	return nil
}
