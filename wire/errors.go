package wire

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
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

// errorRow maps one internal sentinel to its Kafka error, with the reason.
type errorRow struct {
	err   error
	kafka *kerr.Error
}

// errorTable maps internal sentinels to Kafka error codes. The first row
// whose sentinel matches (errors.Is) wins, so an error wrapping two
// sentinels gets the earlier row: the log's own sentinels, which say where
// the problem is (on disk), come before the batch codec's, which say what
// it is.
var errorTable = []errorRow{
	// A fetch, ListOffsets or DeleteRecords offset outside
	// [log start, log end].
	{log.ErrOffsetOutOfRange, kerr.OffsetOutOfRange},
	// A truncation or deletion point out of bounds: Kafka answers
	// DeleteRecords past the high watermark with OFFSET_OUT_OF_RANGE.
	{log.ErrInvalidOffset, kerr.OffsetOutOfRange},
	// Data already on disk that fails its checks. This is the broker's
	// storage failing, not the client's message, so it is
	// KAFKA_STORAGE_ERROR (56, retriable; Java clients refresh metadata and
	// may find another replica), not CORRUPT_MESSAGE, which tells a
	// producer that its own batch was bad. Kafka itself answers 56 when a
	// log directory fails. Produce v3 predates 56 (v4 is "the same as v3,
	// but the requester must be prepared to handle a KAFKA_STORAGE_ERROR"),
	// and Kafka's ProduceResponse turns 56 into NOT_LEADER_OR_FOLLOWER for
	// v3 and older; 00_produce.go must do the same (and the Fetch file for
	// Fetch versions before 56 existed).
	{log.ErrCorrupt, kerr.KafkaStorageError},
	// The log is closed: the replica is going away (shutdown, deletion,
	// reassignment). NOT_LEADER_OR_FOLLOWER sends clients to the metadata
	// for the partition's new home (docs/clients.md rule 6).
	{log.ErrClosed, kerr.NotLeaderForPartition},
	// A batch larger than segment.bytes: Kafka's RecordBatchTooLarge,
	// RECORD_LIST_TOO_LARGE (18). (A batch over message.max.bytes is
	// MESSAGE_TOO_LARGE (10), checked by the partition, not by the log.)
	{log.ErrRecordTooLarge, kerr.RecordListTooLarge},
	// A topic config value out of range.
	{log.ErrInvalidConfig, kerr.InvalidConfig},
	// A produced batch of magic 0 or 1 in Produce v3+. Kafka >= 2.5 checks
	// it in ProduceRequest.validateRecords and answers the partition with
	// INVALID_RECORD (87) (InvalidRecordException); before KIP-467 the same
	// exception was a CorruptRecordException, CORRUPT_MESSAGE (2). We
	// follow current Kafka: the message is not corrupt, it is of a format
	// this broker refuses. UNSUPPORTED_FOR_MESSAGE_FORMAT (43) is Kafka's
	// answer to a request the log's message format cannot express, not to
	// a batch, so it does not fit.
	{batch.ErrUnsupportedMagic, kerr.InvalidRecord},
	// A produced batch with a bad CRC, length or record encoding, or one
	// cut short: CORRUPT_MESSAGE (2), as Kafka's CorruptRecordException.
	{batch.ErrCorrupt, kerr.CorruptMessage},
	{batch.ErrTruncated, kerr.CorruptMessage},
	// A wait that ran past its deadline (an acks=all produce, a request
	// timeout).
	{context.DeadlineExceeded, kerr.RequestTimedOut},
}

// ErrorFor maps err to its Kafka error: nil to NONE (code 0), a sentinel in
// the table to its row, a *kerr.Error (wrapped or not) to itself, anything
// else to UNKNOWN_SERVER_ERROR (-1).
func ErrorFor(err error) KafkaError {
	if err == nil {
		return KafkaError{Code: 0, Name: "NONE", Message: "No error."}
	}
	for _, row := range errorTable {
		if errors.Is(err, row.err) {
			return kafkaError(row.kafka)
		}
	}
	if ke, ok := errors.AsType[*kerr.Error](err); ok && ke != nil {
		return kafkaError(ke)
	}
	return kafkaError(kerr.UnknownServerError)
}

// ErrorCode is ErrorFor(err).Code.
func ErrorCode(err error) int16 { return ErrorFor(err).Code }

// kafkaError converts kerr's form.
func kafkaError(e *kerr.Error) KafkaError {
	return KafkaError{Code: e.Code, Name: e.Message, Retriable: e.Retriable, Message: e.Description}
}
