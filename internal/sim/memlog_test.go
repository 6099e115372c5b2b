package sim

import (
	"errors"
	"fmt"
	"sort"

	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

// errLogOffset is a follower append whose batches do not follow the log
// (log.ErrInvalidOffset in the real log).
var errLogOffset = fmt.Errorf("sim log: %w", log.ErrInvalidOffset)

// memLog is a partition log in memory: what the partition actor's shell
// does with log.Log (Append, TruncateTo, TruncateFullyAndStartAt,
// EndOffsetForEpoch, Epochs), with the real log's semantics for offsets
// and the leader-epoch cache (log/leader_epoch.go), and no files. It lives
// in the node's "page cache": a killed process's log survives its restart.
// memLogMatchesLog (memlog_check_test.go) checks it against log.Log.
type memLog struct {
	start, leo int64
	// batches are whole stored batches, each an owned copy; bases and
	// lasts are their first and last offsets.
	batches [][]byte
	bases   []int64
	lasts   []int64
	epochs  []log.EpochEntry
}

// append stores buf's batches as log.Log.Append does: with AssignOffsets
// (a leader) base offsets from the log end and the leader epoch are set in
// the stored copy; without it (a follower) batches keep theirs and must
// start at or after the log end.
func (l *memLog) append(buf []byte, opts log.AppendOptions) (log.AppendResult, error) {
	res := log.AppendResult{FirstOffset: -1, MaxTimestamp: -1, OffsetOfMaxTimestamp: -1}
	bs, err := batch.Split(buf)
	if err != nil {
		return res, fmt.Errorf("sim log: append: %w", err)
	}
	if len(bs) == 0 {
		return res, fmt.Errorf("sim log: append of no batch: %w", batch.ErrTruncated)
	}
	next := l.leo
	copies := make([][]byte, len(bs))
	for i, b := range bs {
		c := append([]byte(nil), b...)
		if opts.AssignOffsets {
			batch.SetBaseOffset(c, next)
			batch.SetPartitionLeaderEpoch(c, opts.LeaderEpoch)
			// The leader's buffer is rewritten in place too (doc.go duty 10).
			batch.SetBaseOffset(b, next)
			batch.SetPartitionLeaderEpoch(b, opts.LeaderEpoch)
		} else if batch.BaseOffset(c) < next {
			return res, fmt.Errorf("append batch %d at base %d below the log end %d: %w", i, batch.BaseOffset(c), next, errLogOffset)
		}
		if res.FirstOffset < 0 {
			res.FirstOffset = batch.BaseOffset(c)
		}
		next = batch.LastOffset(c) + 1
		if ts := batch.MaxTimestamp(c); ts > res.MaxTimestamp {
			res.MaxTimestamp, res.OffsetOfMaxTimestamp = ts, next-1
		}
		res.Records += int64(batch.NumRecords(c))
		res.Bytes += len(c)
		copies[i] = c
	}
	for _, c := range copies {
		l.assignEpoch(batch.PartitionLeaderEpoch(c), batch.BaseOffset(c))
		l.batches = append(l.batches, c)
		l.bases = append(l.bases, batch.BaseOffset(c))
		l.lasts = append(l.lasts, batch.LastOffset(c))
	}
	l.leo = next
	res.LastOffset = next - 1
	res.LogStartOffset = l.start
	return res, nil
}

// assignEpoch is the epoch cache's assign: a newer epoch starts at offset,
// replacing entries that start at or after it.
func (l *memLog) assignEpoch(epoch int32, offset int64) {
	if epoch < 0 || epoch <= l.latestEpoch() {
		return
	}
	for n := len(l.epochs); n > 0 && l.epochs[n-1].StartOffset >= offset; n = len(l.epochs) {
		l.epochs = l.epochs[:n-1]
	}
	l.epochs = append(l.epochs, log.EpochEntry{Epoch: epoch, StartOffset: offset})
}

// latestEpoch is the newest epoch of the cache, -1 if none.
func (l *memLog) latestEpoch() int32 {
	if len(l.epochs) == 0 {
		return -1
	}
	return l.epochs[len(l.epochs)-1].Epoch
}

// truncateTo removes every batch at or past offset, a batch straddling it
// whole (log.Log.TruncateTo), and returns the new log end offset.
func (l *memLog) truncateTo(offset int64) (int64, error) {
	if offset < 0 {
		return 0, fmt.Errorf("sim log: truncate to %d: %w", offset, log.ErrInvalidOffset)
	}
	if offset >= l.leo {
		return l.leo, nil
	}
	if offset <= l.start {
		l.truncateFullyAndStartAt(offset)
		return offset, nil
	}
	i := sort.Search(len(l.lasts), func(i int) bool { return l.lasts[i] >= offset })
	newEnd := l.leo
	if i < len(l.batches) {
		newEnd = l.bases[i]
	}
	clear(l.batches[i:])
	l.batches, l.bases, l.lasts = l.batches[:i], l.bases[:i], l.lasts[:i]
	l.leo = max(newEnd, l.start)
	n := len(l.epochs)
	for n > 0 && l.epochs[n-1].StartOffset >= l.leo {
		n--
	}
	l.epochs = l.epochs[:n]
	return l.leo, nil
}

// truncateFullyAndStartAt empties the log and restarts it at offset,
// clearing the epoch cache.
func (l *memLog) truncateFullyAndStartAt(offset int64) {
	l.batches, l.bases, l.lasts, l.epochs = nil, nil, nil, nil
	l.start, l.leo = offset, offset
}

// endOffsetForEpoch answers as log.Log.EndOffsetForEpoch: for the latest
// epoch the log end; for an older one the next epoch's start, with the
// largest epoch <= it; (-1, -1) when unknown.
func (l *memLog) endOffsetForEpoch(epoch int32) (int32, int64) {
	if epoch < 0 || len(l.epochs) == 0 {
		return -1, -1
	}
	if epoch == l.latestEpoch() {
		return epoch, l.leo
	}
	hi := sort.Search(len(l.epochs), func(i int) bool { return l.epochs[i].Epoch > epoch })
	switch {
	case hi == len(l.epochs):
		return -1, -1
	case hi == 0:
		return epoch, l.epochs[0].StartOffset
	}
	return l.epochs[hi-1].Epoch, l.epochs[hi].StartOffset
}

// epochAt is the epoch of the batch holding offset, from the cache (-1 if
// none): what the shell fills a ReplicaPosition's LastFetchedEpoch with.
func (l *memLog) epochAt(offset int64) int32 {
	epoch := int32(-1)
	for _, e := range l.epochs {
		if e.StartOffset > offset {
			break
		}
		epoch = e.Epoch
	}
	return epoch
}

// errOutOfRange is a read outside [log start, log end].
var errOutOfRange = errors.New("sim log: offset out of range")

// read returns whole batches from the one holding offset, at most
// maxBytes of them (the first whole even if larger), up to the log end.
func (l *memLog) read(offset int64, maxBytes int) ([]byte, error) {
	if offset < l.start || offset > l.leo {
		return nil, errOutOfRange
	}
	i := sort.Search(len(l.lasts), func(i int) bool { return l.lasts[i] >= offset })
	var out []byte
	for ; i < len(l.batches); i++ {
		b := l.batches[i]
		if len(out) > 0 && len(out)+len(b) > maxBytes {
			break
		}
		out = append(out, b...)
	}
	return out, nil
}

// batchAt returns the stored batch whose base offset is base, or nil.
func (l *memLog) batchAt(base int64) []byte {
	i := sort.Search(len(l.bases), func(i int) bool { return l.bases[i] >= base })
	if i < len(l.bases) && l.bases[i] == base {
		return l.batches[i]
	}
	return nil
}

// divergingEpoch checks a follower's fetch (lastFetchedEpoch, fetchOffset)
// against this log, led at leaderEpoch, with the Fetch v12 rule the leader
// applies (actors/partition's DivergingEpoch, Kafka's
// Partition.fetchRecords): the largest epoch at or below lastFetchedEpoch
// and its end (the next epoch's start, or the log end for the last);
// diverged when that end is below fetchOffset or the epoch is older than
// lastFetchedEpoch. lastFetchedEpoch < 0, or newer than leaderEpoch, never
// diverges.
func (l *memLog) divergingEpoch(leaderEpoch, lastFetchedEpoch int32, fetchOffset int64) (int32, int64, bool) {
	if lastFetchedEpoch < 0 || lastFetchedEpoch > leaderEpoch {
		return -1, -1, false
	}
	epoch, end := l.epochEnd(lastFetchedEpoch)
	if end < fetchOffset || epoch < lastFetchedEpoch {
		return epoch, end, true
	}
	return -1, -1, false
}

// epochEnd is the largest epoch of the cache at or below epoch and its
// end offset; an epoch older than every entry pairs with the first
// entry's start, an empty cache with the log end.
func (l *memLog) epochEnd(epoch int32) (int32, int64) {
	i := -1
	for j, e := range l.epochs {
		if e.Epoch > epoch {
			break
		}
		i = j
	}
	switch {
	case len(l.epochs) == 0:
		return epoch, l.leo
	case i < 0:
		return epoch, l.epochs[0].StartOffset
	case i == len(l.epochs)-1:
		return l.epochs[i].Epoch, l.leo
	}
	return l.epochs[i].Epoch, l.epochs[i+1].StartOffset
}
