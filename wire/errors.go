package wire

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/internal/kafkaerr"
)

// KafkaError is a Kafka protocol error code and what clients make of it.
type KafkaError struct {
	// Code is the error code put in responses; 0 is no error.
	Code int16
	// Name is Kafka's name for the code (OFFSET_OUT_OF_RANGE).
	Name string
	// Retriable is whether Kafka's clients retry the request on it.
	Retriable bool
	// Message describes the code; it is safe to send to clients in a
	// response's error message (the internal error's text is not: it names
	// files and offsets).
	Message string
}

// ErrorFor maps err to its Kafka error, as internal/kafkaerr's table says
// (kafkaerr.Of): nil to NONE (code 0), a sentinel in the table to its row,
// a *kerr.Error (wrapped or not) to itself, anything else to
// UNKNOWN_SERVER_ERROR (-1).
func ErrorFor(err error) KafkaError {
	if err == nil {
		return KafkaError{Code: 0, Name: "NONE", Message: "No error."}
	}
	return kafkaError(kafkaerr.Of(err))
}

// ErrorCode is ErrorFor(err).Code.
func ErrorCode(err error) int16 { return ErrorFor(err).Code }

// kafkaError converts kerr's form.
func kafkaError(e *kerr.Error) KafkaError {
	return KafkaError{Code: e.Code, Name: e.Message, Retriable: e.Retriable, Message: e.Description}
}
