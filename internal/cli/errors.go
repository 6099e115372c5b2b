package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// UsageError is a command-line mistake: weir exits with status 2.
type UsageError struct {
	// Err says what is wrong.
	Err error
	// Reported means the message and the pointer to the usage were already
	// printed (by FlagSet.UsageError).
	Reported bool
}

// Error returns the mistake's description.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the mistake.
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns an unreported usage error with a formatted message, for a
// command's own argument checks (a missing FILE, a bad combination).
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// BrokerError is a Kafka error code a broker answered, with the message
// the broker sent along with it.
type BrokerError struct {
	// Code is the error code, as franz-go's kerr names it.
	Code *kerr.Error
	// Message is the broker's ErrorMessage.
	Message string
}

// Error prints Kafka's name of the code and the broker's message, e.g.
// "TOPIC_ALREADY_EXISTS: Topic 'orders' already exists.".
func (e *BrokerError) Error() string { return e.Code.Message + ": " + e.Message }

// Unwrap returns the code's error, so errors.Is(err, kerr.X) holds.
func (e *BrokerError) Unwrap() error { return e.Code }

// WithBrokerMessage returns err, a broker's error code, with the message
// the broker sent; without one, err already reads "NAME: description".
func WithBrokerMessage(err error, message string) error {
	var code *kerr.Error
	if message == "" || !errors.As(err, &code) {
		return err
	}
	return &BrokerError{Code: code, Message: message}
}

// explained is an error in weir's words that still unwraps to the client
// library's error, so errors.Is and errors.As keep working.
type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }

// Explain rewrites an error from the Kafka client library in words a user
// can act on, keeping the original reachable through errors.Is/As:
//
//   - kadm's "request X has N separate shard errors, first: ..." becomes the
//     first broker's answer, naming the broker, and how many more failed;
//   - a refused connection names the address and how to start a broker or
//     point the command at one.
//
// Other errors, Kafka error codes among them ("UNKNOWN_TOPIC_OR_PARTITION:
// ..."), are returned as they are. Explain(nil) is nil.
func Explain(err error) error {
	if err == nil {
		return nil
	}
	var shards *kadm.ShardErrors
	if errors.As(err, &shards) && len(shards.Errs) > 0 {
		first := shards.Errs[0]
		msg := Explain(first.Err).Error()
		if b := first.Broker; b.NodeID >= 0 && b.Host != "" {
			msg = fmt.Sprintf("broker %d (%s): %s", b.NodeID, net.JoinHostPort(b.Host, fmt.Sprint(b.Port)), msg)
		}
		if n := len(shards.Errs) - 1; n > 0 {
			msg += fmt.Sprintf(" (and %d more broker(s) failed)", n)
		}
		return &explained{msg: msg, err: err}
	}
	var op *net.OpError
	if errors.Is(err, syscall.ECONNREFUSED) && errors.As(err, &op) && op.Addr != nil {
		return &explained{
			msg: fmt.Sprintf("no broker is listening at %s: start one with 'weir serve', or point --bootstrap-server (or WEIR_BROKERS) at one", op.Addr),
			err: err,
		}
	}
	return err
}

// timedOut reports whether err is the expiry of ctx, the context a
// command's requests ran under.
func timedOut(ctx context.Context, err error) bool {
	return errors.Is(err, context.DeadlineExceeded) && errors.Is(ctx.Err(), context.DeadlineExceeded)
}
