package wire

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

func TestErrorFor(t *testing.T) {
	cases := []struct {
		err       error
		code      int16
		retriable bool
	}{
		{nil, 0, false},
		{log.ErrOffsetOutOfRange, 1, false},
		{fmt.Errorf("read t-0 at 99: %w", log.ErrOffsetOutOfRange), 1, false},
		// A follower's append below its log end: Kafka's
		// UnexpectedAppendOffsetException, not an API exception (the
		// partition actors always answered it so; DeleteRecords out of
		// range is log.ErrOffsetOutOfRange).
		{log.ErrInvalidOffset, -1, false},
		{log.ErrCorrupt, 56, true},
		{log.ErrClosed, 6, true},
		{log.ErrRecordTooLarge, 18, false},
		{log.ErrInvalidConfig, 40, false},
		{batch.ErrUnsupportedMagic, 87, false},
		{fmt.Errorf("%w: magic 1", batch.ErrUnsupportedMagic), 87, false},
		{batch.ErrCorrupt, 2, true},
		{batch.ErrTruncated, 2, true},
		{context.DeadlineExceeded, 7, true},
		// On-disk corruption found by the batch codec is the log's: storage.
		{fmt.Errorf("%w: seg.log: batch at 40: %w", log.ErrCorrupt, batch.ErrCorrupt), 56, true},
		// A Kafka error passes through, wrapped or not.
		{kerr.NotEnoughReplicas, 19, true},
		{fmt.Errorf("append: %w", kerr.InvalidProducerEpoch), 47, false},
		// Anything else is UNKNOWN_SERVER_ERROR.
		{errors.New("disk on fire"), -1, false},
		{batch.ErrBuild, -1, false},
		// A wait cut short (the node stopping): REQUEST_TIMED_OUT, as the
		// controller always answered it and Kafka's controller answers
		// while it shuts down.
		{context.Canceled, 7, true},
	}
	for _, tc := range cases {
		got := ErrorFor(tc.err)
		if got.Code != tc.code || got.Retriable != tc.retriable || got.Name == "" || got.Message == "" {
			t.Errorf("ErrorFor(%v) = %+v, want code %d retriable %v", tc.err, got, tc.code, tc.retriable)
		}
		if ErrorCode(tc.err) != tc.code {
			t.Errorf("ErrorCode(%v) = %d, want %d", tc.err, ErrorCode(tc.err), tc.code)
		}
	}
}
