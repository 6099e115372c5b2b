package failover

import (
	"fmt"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The environment variables naming a file for franz-go's debug log of the
// producer and of the group member: a debugging aid for a round that
// stalled.
const (
	producerLogEnv = "WEIR_FAILOVER_PRODUCER_LOG"
	consumerLogEnv = "WEIR_FAILOVER_CONSUMER_LOG"
)

// clientLog returns the option that writes franz-go's debug log to the
// file env names, or none when env is unset.
func clientLog(env string) ([]kgo.Opt, error) {
	path := os.Getenv(env)
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", env, err)
	}
	return []kgo.Opt{kgo.WithLogger(kgo.BasicLogger(f, kgo.LogLevelDebug, func() string {
		return time.Now().Format("15:04:05.000000 ")
	}))}, nil
}
