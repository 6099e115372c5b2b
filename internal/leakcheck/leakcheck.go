package leakcheck

import (
	"testing"

	"go.uber.org/goleak"
)

// Options are the goroutines goleak is to ignore in weir's tests:
//   - protoactor-go's dead-letter throttle starts a goroutine at the first
//     dead letter of each throttle interval (one second by default) that
//     waits out the interval and then ends; a message to an actor stopped
//     just before a test ends leaves it behind for up to that second.
func Options() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"),
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewThrottleWithLogger.func1.1"),
	}
}

// VerifyTestMain runs the tests of m, then fails if goroutines other than
// those of Options are left.
func VerifyTestMain(m *testing.M) {
	goleak.VerifyTestMain(m, Options()...)
}
