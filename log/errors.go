package log

import (
	"errors"
	"io"

	"github.com/weirmq/weir/log/batch"
)

// Errors returned by the log. Each is wrapped with the path and offset it
// concerns; test with errors.Is.
var (
	// ErrOffsetOutOfRange is a read or lookup below the log start offset or
	// past the log end offset.
	ErrOffsetOutOfRange = errors.New("log: offset out of range")
	// ErrInvalidOffset is an append whose offsets do not follow the log end
	// offset in follower mode, or a truncation or deletion point out of bounds.
	ErrInvalidOffset = errors.New("log: invalid offset")
	// ErrCorrupt is on-disk data that fails its checks.
	ErrCorrupt = errors.New("log: corrupt data")
	// ErrClosed is an operation on a closed log or manager.
	ErrClosed = errors.New("log: closed")
	// ErrRecordTooLarge is a batch larger than segment.bytes.
	ErrRecordTooLarge = errors.New("log: batch larger than segment.bytes")
	// ErrInvalidConfig is a configuration value out of its range.
	ErrInvalidConfig = errors.New("log: invalid config")
	// ErrLogFailed is every append and flush of a log after one of its
	// fsyncs failed. A failed fsync may have dropped dirty pages the
	// kernel then marks clean, so a later fsync that succeeds proves
	// nothing ("fsyncgate"): like Kafka taking the log directory offline,
	// the log accepts and acknowledges nothing more until it is reopened,
	// and recovery then rescans it (no clean-shutdown marker is written).
	ErrLogFailed = errors.New("log: failed after an fsync error")
	// ErrLocked is a lock (FS.Lock) another process, or another opener in
	// this one, already holds: a log directory in use.
	ErrLocked = errors.New("log: locked by another process or opener")
)

// isCorruption reports whether err describes bad data (which recovery cuts
// away) rather than a failure to read it (which must fail the open: cutting
// then would destroy good data).
func isCorruption(err error) bool {
	return errors.Is(err, ErrCorrupt) || errors.Is(err, batch.ErrCorrupt) || errors.Is(err, batch.ErrTruncated) ||
		errors.Is(err, batch.ErrUnsupportedMagic) || errors.Is(err, io.ErrUnexpectedEOF)
}
