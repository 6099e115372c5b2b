package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/log/batch"
)

// Loading tunables.
const (
	// loadPollInterval is how often the loader looks at the partition's
	// published status while it waits to lead it with a high watermark
	// at its log end offset.
	loadPollInterval = 5 * time.Millisecond
	// loadRetryInterval is the pause before a failed load is retried.
	loadRetryInterval = 200 * time.Millisecond
	// loadReadBytes is the most one read of the partition returns (Kafka's
	// offsets.load.buffer.size).
	loadReadBytes = 5 << 20
)

// errLoad is a load that failed and is retried, wrapped with detail.
var errLoad = errors.New("group: cannot load __consumer_offsets partition")

// loadPartition waits until the replica leads the partition at epoch (or
// later) with its high watermark at its log end offset, so that
// everything written under earlier leaders is committed and read; then it
// reads the partition from its log start offset to that high watermark
// into a Loader and returns the groups. Failed attempts are logged and
// retried until ctx is canceled, whose error is then returned.
func loadPartition(ctx context.Context, p Partition, epoch int32, cfg *ShellConfig, log *slog.Logger) (*groupsLoaded, error) {
	for {
		res, err := loadOnce(ctx, p, epoch, cfg, log)
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		log.Warn("group coordinator load failed; retrying", "err", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(loadRetryInterval):
		}
	}
}

// loadOnce is one attempt of loadPartition.
func loadOnce(ctx context.Context, p Partition, epoch int32, cfg *ShellConfig, log *slog.Logger) (*groupsLoaded, error) {
	st, err := awaitLeadership(ctx, p, epoch)
	if err != nil {
		return nil, err
	}
	l := NewLoader()
	res := &groupsLoaded{}
	for off := st.LogStartOffset; off < st.HighWatermark; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r := p.ReadNow(&partition.ReadRecords{Offset: off, MaxBytes: loadReadBytes, Isolation: partition.ReadUncommitted})
		if r.ErrorCode != 0 {
			return nil, fmt.Errorf("%w: read at %d: %w: %s", errLoad, off, kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage)
		}
		if len(r.Records) == 0 {
			return nil, fmt.Errorf("%w: read at %d returned nothing below the high watermark %d", errLoad, off, st.HighWatermark)
		}
		batches, err := batch.Split(r.Records)
		if err != nil && len(batches) == 0 {
			return nil, fmt.Errorf("%w: read at %d: %w", errLoad, off, err)
		}
		for _, b := range batches {
			if err := l.AddBatch(b); err != nil {
				log.Warn("group coordinator: skipped records while loading", "err", err)
			}
			res.batches++
			res.records += int64(batch.LastOffsetDelta(b)) + 1
			off = batch.LastOffset(b) + 1
		}
	}
	res.groups, err = l.Groups(cfg.Group, cfg.Now().UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errLoad, err)
	}
	return res, nil
}

// awaitLeadership polls the replica's published status until it leads at
// epoch or later with its high watermark at its log end offset.
func awaitLeadership(ctx context.Context, p Partition, epoch int32) (partition.Status, error) {
	for {
		st := p.Status()
		if st.Role == partition.Leader && st.LeaderEpoch >= epoch && st.HighWatermark >= st.LogEndOffset {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(loadPollInterval):
		}
	}
}
