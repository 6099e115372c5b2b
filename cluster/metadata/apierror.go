package metadata

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/cluster/config"
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

// errorRow maps one sentinel an admin request can meet to its Kafka code.
type errorRow struct {
	err   error
	kafka *kerr.Error
}

// adminErrors maps the sentinels of this package and cluster/config that
// admin requests can meet to Kafka's codes.
var adminErrors = []errorRow{
	{ErrInvalidTopic, kerr.InvalidTopicException},
	{ErrTopicExists, kerr.TopicAlreadyExists},
	{ErrUnknownTopic, kerr.UnknownTopicOrPartition},
	{ErrUnknownPartition, kerr.UnknownTopicOrPartition},
	{ErrInvalidPartitions, kerr.InvalidPartitions},
	{ErrInvalidReplicationFactor, kerr.InvalidReplicationFactor},
	{ErrInvalidConfig, kerr.InvalidConfig},
	{config.ErrInvalidConfig, kerr.InvalidConfig},
	{ErrUnknownBroker, kerr.InvalidReplicaAssignment},
	{ErrBrokerFenced, kerr.InvalidReplicaAssignment},
	{ErrInvalidRecord, kerr.InvalidRequest},
	// A wait that ended first (the controller stopping).
	{context.Canceled, kerr.RequestTimedOut},
	{context.DeadlineExceeded, kerr.RequestTimedOut},
}

// ErrorOf maps an error met while deciding or proposing a change to the
// Kafka error its items get: an APIError as it is; ErrOpTooLarge to
// POLICY_VIOLATION with the message of Kafka's controller on a
// BoundedListTooLongException; ErrLogUnavailable to the retriable
// REQUEST_TIMED_OUT with the cause; the sentinels of adminErrors to their
// codes, with the error's text (which names only the request's topics and
// values) less the sentinels' package prefixes; a *kerr.Error to itself;
// anything else to UNKNOWN_SERVER_ERROR with Kafka's description of it. nil is no error.
func ErrorOf(err error) APIError {
	if err == nil {
		return APIError{}
	}
	if e, ok := errors.AsType[APIError](err); ok {
		return e
	}
	if errors.Is(err, ErrOpTooLarge) {
		return apiErr(kerr.PolicyViolation, "Unable to perform excessively large batch operation.")
	}
	if errors.Is(err, ErrLogUnavailable) {
		// The controller cannot write its log (a full disk, no file
		// descriptors): retriable, as Kafka's controller answers a
		// request it cannot complete (REQUEST_TIMED_OUT), with the cause.
		msg := strings.TrimPrefix(err.Error(), "metadata: ")
		return APIError{Code: kerr.RequestTimedOut.Code, Message: strings.ToUpper(msg[:1]) + msg[1:] + "."}
	}
	k := kerr.UnknownServerError
	if ke, ok := errors.AsType[*kerr.Error](err); ok && ke != nil {
		k = ke
	}
	for _, row := range adminErrors {
		if errors.Is(err, row.err) {
			k = row.kafka
			break
		}
	}
	if k == kerr.RequestTimedOut || k == kerr.UnknownServerError {
		return APIError{Code: k.Code, Message: k.Description}
	}
	msg := err.Error()
	for _, row := range adminErrors {
		msg = strings.ReplaceAll(msg, row.err.Error()+": ", "")
	}
	return APIError{Code: k.Code, Message: msg}
}

// leaderNotAvailable is LEADER_NOT_AVAILABLE's code.
var leaderNotAvailable = kerr.LeaderNotAvailable.Code

// mapError maps err as the first row of rows it wraps says, with the
// error's text less the sentinels' package prefixes: the table of one
// kind of broker request (registration, heartbeats, elections, ISR
// changes), whose codes differ from an admin request's. An APIError stays
// as it is; an error no row names is mapped by ErrorOf.
func mapError(err error, rows []errorRow) APIError {
	if err == nil {
		return APIError{}
	}
	if e, ok := errors.AsType[APIError](err); ok {
		return e
	}
	for _, row := range rows {
		if errors.Is(err, row.err) {
			msg := err.Error()
			for _, tables := range [][]errorRow{rows, adminErrors} {
				for _, r := range tables {
					msg = strings.ReplaceAll(msg, r.err.Error()+": ", "")
				}
			}
			return APIError{Code: row.kafka.Code, Message: msg}
		}
	}
	return ErrorOf(err)
}
