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
		{log.ErrInvalidOffset, 1, false},
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
		{context.Canceled, -1, false},
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

// Every row of the table is reachable (no earlier row shadows it) and
// names a real Kafka code.
func TestErrorTableRowsReachable(t *testing.T) {
	for i, row := range errorTable {
		for j := range i {
			if errors.Is(row.err, errorTable[j].err) {
				t.Errorf("row %d (%v) is shadowed by row %d (%v)", i, row.err, j, errorTable[j].err)
			}
		}
		if got := kerr.TypedErrorForCode(row.kafka.Code); got != row.kafka {
			t.Errorf("row %d: code %d is not kerr's %s", i, row.kafka.Code, row.kafka.Message)
		}
	}
}
