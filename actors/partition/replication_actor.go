package partition

import (
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/log"
)

// The actor's side of replication: the follower requests of the replica
// fetcher (answered with ReplicaPosition), the leader's follower fetches,
// truncations with their producer-state rebuild, and the helpers the wire
// Fetch handler calls for a follower's fetch.

// onReplicaRequest stamps a follower request with the shell's unique ID,
// remembers where to answer, and steps it.
func (a *partitionActor) onReplicaRequest(ctx actor.Context, callerID uint64, fn func(r *Replica, id uint64) Output) {
	p := pendingReply{to: ctx.Sender(), callerID: callerID}
	if a.r == nil {
		a.replyPosition(ctx, p, &ReplicaPosition{ErrorCode: kerr.KafkaStorageError.Code, FetchOffset: -1, LastFetchedEpoch: -1, LeaderEpoch: -1})
		return
	}
	a.nextID++
	id := a.nextID
	a.pending[id] = p
	a.step(ctx, func(r *Replica) Output { return fn(r, id) })
}

// onAppendReplicated steps a fetcher's records.
func (a *partitionActor) onAppendReplicated(ctx actor.Context, m *AppendReplicated) {
	a.onReplicaRequest(ctx, m.ID, func(r *Replica, id uint64) Output {
		req := *m
		req.ID = id
		if req.NowMs == 0 {
			req.NowMs = a.now().UnixMilli()
		}
		return r.OnAppendReplicated(&req)
	})
}

// onTruncateDiverging steps a diverging epoch, with this log's own end of
// that epoch.
func (a *partitionActor) onTruncateDiverging(ctx actor.Context, m *TruncateDiverging) {
	a.onReplicaRequest(ctx, m.ID, func(r *Replica, id uint64) Output {
		req := *m
		req.ID = id
		epoch, end := a.cfg.Log.EndOffsetForEpoch(m.Epoch)
		if epoch < 0 {
			end = -1
		}
		return r.OnTruncateDiverging(&req, end)
	})
}

// onResetToLeaderStart steps an out-of-range answer.
func (a *partitionActor) onResetToLeaderStart(ctx actor.Context, m *ResetToLeaderStart) {
	a.onReplicaRequest(ctx, m.ID, func(r *Replica, id uint64) Output {
		req := *m
		req.ID = id
		return r.OnResetToLeaderStart(&req)
	})
}

// onFollowerFetched steps a follower's fetch, unless it diverges from this
// log or asks past its end: such a fetch says nothing of the follower's
// position in this log (Kafka's Partition.fetchRecords updates the
// follower's state only for a fetch without a diverging epoch).
func (a *partitionActor) onFollowerFetched(ctx actor.Context, m *FollowerFetched) {
	if a.r == nil {
		return
	}
	l := a.cfg.Log
	if m.FetchOffset > l.LogEndOffset() || m.FetchOffset < l.LogStartOffset() {
		return // out of range: the fetch is answered OFFSET_OUT_OF_RANGE
	}
	if _, _, diverged := divergingEpoch(l, a.r.Status().LeaderEpoch, m.LastFetchedEpoch, m.FetchOffset); diverged {
		return
	}
	if m.Session != nil {
		if a.sessions == nil {
			a.sessions = map[int32]*FollowerSession{}
		}
		a.sessions[m.ReplicaID] = m.Session
	} else {
		delete(a.sessions, m.ReplicaID)
	}
	f := *m
	if f.NowMs == 0 {
		f.NowMs = a.now().UnixMilli()
	}
	a.step(ctx, func(r *Replica) Output { return r.OnFollowerFetched(&f) })
}

// truncate performs a TruncateLog (a page-cache cut plus an fsync of the
// checkpoints: rare, and acceptable inside Receive) and rebuilds the
// producer state from the snapshots and what is left of the log.
func (a *partitionActor) truncate(t *TruncateLog) *LogTruncated {
	l := a.cfg.Log
	// No snapshot may be written while the rebuild lists and prunes them.
	a.snaps.wait()
	var err error
	if t.StartAt {
		// Nothing of the old log is kept: nor are its producer snapshots
		// (Kafka's ProducerStateManager.truncateFullyAndStartAt).
		err = removeAllSnapshots(l)
		if err == nil {
			err = l.TruncateFullyAndStartAt(t.Offset)
		}
	} else {
		_, err = l.TruncateTo(t.Offset)
	}
	if !errors.Is(err, log.ErrClosed) {
		a.board.noteStorage(a.log, storageAppend, err)
	}
	a.startRequested = 0
	res := &LogTruncated{Seq: t.Seq}
	if err == nil {
		ps, info, rerr := recoverProducerState(l, a.log)
		if rerr != nil {
			err = rerr
		} else {
			res.Producers = ps
			a.snapOffset = info.snapshot
			a.replay = info
		}
	}
	if err != nil {
		res.Err = fmt.Errorf("partition: truncate %s to %d: %w", l.TopicPartition(), t.Offset, err)
		a.log.Error("partition actor: truncation", "err", res.Err)
	}
	res.LogStartOffset, res.LogEndOffset = l.LogStartOffset(), l.LogEndOffset()
	res.FlushedOffset, res.LatestEpoch = l.FlushedOffset(), l.LatestEpoch()
	a.segBase = l.ActiveSegmentBase()
	return res
}

// advanceFollowerStart moves a follower's log start offset up to offset off
// the mailbox (log.DeleteRecordsBefore may delete segments); the outcome
// comes back as recordsDeleted without a requester.
func (a *partitionActor) advanceFollowerStart(offset int64) {
	if offset <= a.startRequested {
		return
	}
	a.startRequested = offset
	a.nextDelete++
	seq := a.nextDelete
	l, system, self := a.cfg.Log, a.system, a.self
	a.deleting.Add(1)
	go func() {
		defer a.deleting.Done()
		start, err := l.DeleteRecordsBefore(offset)
		system.Root.Send(self, &recordsDeleted{seq: seq, start: start, err: err})
	}()
}

// sendPositions answers the replica fetcher's requests, with the epoch of
// the last batch below each fetch offset read from the log.
func (a *partitionActor) sendPositions(ctx actor.Context, positions []*ReplicaPosition) {
	if len(positions) == 0 {
		return
	}
	epochs := a.cfg.Log.Epochs()
	for _, pos := range positions {
		p, ok := a.pending[pos.ID]
		if !ok {
			continue
		}
		delete(a.pending, pos.ID)
		out := *pos
		if out.FetchOffset > 0 {
			out.LastFetchedEpoch = epochAt(epochs, out.FetchOffset-1)
		}
		a.replyPosition(ctx, p, &out)
	}
}

// replyPosition sends pos, with the requester's own ID, to the requester.
func (a *partitionActor) replyPosition(ctx actor.Context, p pendingReply, pos *ReplicaPosition) {
	if p.to == nil {
		return
	}
	out := *pos
	out.ID = p.callerID
	if out.ErrorCode == kerr.NotLeaderForPartition.Code && a.board.stopped.Load() {
		out.ErrorCode = a.board.goneCode()
	}
	ctx.Send(p.to, &out)
}

// divergingEpoch checks a follower's fetch (lastFetchedEpoch, fetchOffset)
// against l, led at leaderEpoch, as Kafka's Fetch v12 does
// (Partition.fetchRecords, LeaderEpochFileCache.endOffsetFor): the largest
// epoch of l at or below lastFetchedEpoch and where it ends (the next
// epoch's start, or the log end offset for the last); diverged when that
// end is below fetchOffset or that epoch is older than lastFetchedEpoch.
// An epoch older than every epoch of l pairs with the start of l's first
// epoch; an empty cache with the log end offset. lastFetchedEpoch < 0, or
// newer than leaderEpoch (the fetch is fenced instead), never diverges.
func divergingEpoch(l *log.Log, leaderEpoch, lastFetchedEpoch int32, fetchOffset int64) (int32, int64, bool) {
	if lastFetchedEpoch < 0 || lastFetchedEpoch > leaderEpoch {
		return -1, -1, false
	}
	// The end first: an append after it may add an epoch, which only moves
	// ends up to it.
	leo := l.LogEndOffset()
	epoch, end := epochEnd(l.Epochs(), leo, lastFetchedEpoch)
	if end < fetchOffset || epoch < lastFetchedEpoch {
		return epoch, end, true
	}
	return -1, -1, false
}

// epochEnd returns the largest epoch in entries at or below epoch and its
// end offset (see divergingEpoch).
func epochEnd(entries []log.EpochEntry, leo int64, epoch int32) (int32, int64) {
	i := -1
	for j, e := range entries {
		if e.Epoch > epoch {
			break
		}
		i = j
	}
	switch {
	case len(entries) == 0:
		return epoch, leo
	case i < 0:
		return epoch, entries[0].StartOffset
	case i == len(entries)-1:
		return entries[i].Epoch, leo
	}
	return entries[i].Epoch, entries[i+1].StartOffset
}

// SendAppendReplicated sends m; the ReplicaPosition goes to replyTo. The
// actor appends m.Records as they are: the caller must not reuse them.
func (c *Client) SendAppendReplicated(m *AppendReplicated, replyTo *actor.PID) {
	c.sendFrom(m, replyTo)
}

// SendTruncateDiverging sends m; the ReplicaPosition goes to replyTo.
func (c *Client) SendTruncateDiverging(m *TruncateDiverging, replyTo *actor.PID) {
	c.sendFrom(m, replyTo)
}

// SendResetToLeaderStart sends m; the ReplicaPosition goes to replyTo.
func (c *Client) SendResetToLeaderStart(m *ResetToLeaderStart, replyTo *actor.PID) {
	c.sendFrom(m, replyTo)
}

// ReportFollowerFetch tells the leader a follower's position (fire and
// forget; see FollowerFetched).
func (c *Client) ReportFollowerFetch(m *FollowerFetched) { c.send(m) }

// DivergingEpoch checks a follower's fetch against the leader's log on the
// caller's goroutine (the log's epoch cache and the published leader
// epoch): when the follower's lastFetchedEpoch ends, in this log, before
// fetchOffset, or this log does not hold that epoch, it returns
// diverged=true with the largest epoch <= lastFetchedEpoch and its end
// offset, for the Fetch answer's DivergingEpoch. lastFetchedEpoch < 0
// never diverges.
func (c *Client) DivergingEpoch(lastFetchedEpoch int32, fetchOffset int64) (epoch int32, endOffset int64, diverged bool) {
	return divergingEpoch(c.log, c.board.Status().LeaderEpoch, lastFetchedEpoch, fetchOffset)
}

// removeAllSnapshots deletes every producer snapshot of l.
func removeAllSnapshots(l *log.Log) error {
	offs, err := listSnapshots(l.FS(), l.Dir())
	if err != nil {
		return err
	}
	for _, off := range offs {
		if err := removeSnapshot(l.FS(), l.Dir(), off); err != nil {
			return err
		}
	}
	return nil
}
