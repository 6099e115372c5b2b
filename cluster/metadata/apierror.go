package metadata

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/internal/kafkaerr"
)

// APIError is the Kafka error one item of a request gets from the
// controller: a Kafka error code (0: none) and the message sent to the
// client with it. It is plain data, so it travels in a Result to the node
// that asked; it is also an error, for callers that turn a refusal into
// one.
type APIError struct {
	_msgpack struct{} `msgpack:",as_array"`
	Code     int16
	Message  string
}

// Failed reports whether e is an error (a non-zero code).
func (e APIError) Failed() bool { return e.Code != 0 }

// Error returns Kafka's name for the code and the message.
func (e APIError) Error() string {
	return fmt.Sprintf("%s: %s", kerr.ErrorForCode(e.Code), e.Message)
}

// apiErr is an APIError decided with its code and message.
func apiErr(k *kerr.Error, format string, args ...any) APIError {
	return APIError{Code: k.Code, Message: fmt.Sprintf(format, args...)}
}

// ErrorOf maps an error met while deciding or proposing a change to the
// Kafka error its items get, with the code internal/kafkaerr's table gives
// it (kafkaerr.Of): an APIError as it is; ErrOpTooLarge (POLICY_VIOLATION)
// with the message of Kafka's controller on a BoundedListTooLongException;
// ErrLogUnavailable (REQUEST_TIMED_OUT) with the cause; REQUEST_TIMED_OUT,
// NOT_CONTROLLER and UNKNOWN_SERVER_ERROR otherwise with Kafka's
// description of the code; any other code with the error's text (which
// names only the request's topics and values) less the sentinels' package
// prefixes. nil is no error.
func ErrorOf(err error) APIError { return apiError(err, kafkaerr.Of(err)) }

// errorIn is ErrorOf for an error met deciding a request of api, whose
// codes for some errors differ from the admin requests' (kafkaerr.OfAPI):
// registrations, heartbeats, elections, ISR changes.
func errorIn(api kmsg.Key, err error) APIError { return apiError(err, kafkaerr.OfAPI(api, err)) }

// apiError is err answered with k (see ErrorOf).
func apiError(err error, k *kerr.Error) APIError {
	if err == nil {
		return APIError{}
	}
	if e, ok := errors.AsType[APIError](err); ok {
		return e
	}
	switch {
	case k == kerr.PolicyViolation && errors.Is(err, ErrOpTooLarge):
		return apiErr(kerr.PolicyViolation, "Unable to perform excessively large batch operation.")
	case k == kerr.RequestTimedOut && errors.Is(err, ErrLogUnavailable):
		// The controller cannot write its log (a full disk, no file
		// descriptors): retriable, with the cause.
		msg := strings.TrimPrefix(err.Error(), "metadata: ")
		return APIError{Code: k.Code, Message: strings.ToUpper(msg[:1]) + msg[1:] + "."}
	case k == kerr.RequestTimedOut, k == kerr.NotController, k == kerr.UnknownServerError:
		return APIError{Code: k.Code, Message: k.Description}
	}
	msg := err.Error()
	for _, s := range prefixed {
		msg = strings.ReplaceAll(msg, s.Error()+": ", "")
	}
	return APIError{Code: k.Code, Message: msg}
}

// prefixed are the sentinels whose text is left out of the message sent
// with a code: package prefixes that tell a client nothing.
var prefixed = []error{
	ErrInvalidTopic, ErrTopicExists, ErrUnknownTopic, ErrUnknownPartition, ErrInvalidPartitions,
	ErrInvalidReplicationFactor, ErrInvalidConfig, config.ErrInvalidConfig, ErrUnknownBroker,
	ErrStaleBrokerEpoch, ErrBrokerFenced, ErrStalePartitionEpoch, ErrFencedLeaderEpoch, ErrNotLeader,
	ErrLeaderExists, ErrIneligibleReplica, ErrInvalidRecord, context.Canceled, context.DeadlineExceeded,
}

// leaderNotAvailable is LEADER_NOT_AVAILABLE's code.
var leaderNotAvailable = kerr.LeaderNotAvailable.Code
