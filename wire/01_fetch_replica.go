package wire

// Fetch (key 1) from a follower: replica_id >= 0, the fetching broker's
// node id (Kafka's replication protocol; weir's replica fetcher,
// actors/replicafetcher, sends v12).
//
// Every partition must be led here: the local replica leads (else
// NOT_LEADER_OR_FOLLOWER, also when the fetching node is not one of the
// partition's assigned replicas in this node's image), and
// current_leader_epoch is checked as for consumers (FENCED_LEADER_EPOCH /
// UNKNOWN_LEADER_EPOCH; -1 skips the check). From v12 on, a
// last_fetched_epoch >= 0 is checked against the leader's epoch cache
// (KIP-595, as KIP-320's OffsetForLeaderEpoch would): when that epoch ends
// in the leader's log before the fetch offset, or the leader does not know
// it, the partition is answered with diverging_epoch {epoch, end_offset}
// (the largest epoch <= last_fetched_epoch and its end) and no records, and
// the follower truncates. Otherwise records are read up to the log end
// offset (the flushed offset under group commit), not the high watermark,
// and, when that first read succeeds, the follower's position (fetch
// offset, last fetched epoch; broker epoch -1, unknown: v12 carries none)
// is reported to the leader, which counts it for the high watermark and
// acks=all and may add the follower to the ISR. A fetch offset above the log end offset or below the log
// start offset is OFFSET_OUT_OF_RANGE; high_watermark, log_start_offset
// and last_stable_offset are as for consumers, on errors too.
//
// The long poll (max_wait_ms, min_bytes, the max bytes and the node's
// fetch memory) is a consumer's, but it waits for the log end offset (the
// flushed offset under group commit) of any partition to pass its fetch
// offset (or its high watermark or log start to, or its epoch or role to
// change), on one partition.StatusWatch registered with every partition
// of the fetch: no message to and no tick of the partition actors, which
// signal it when their status changes. A diverging epoch completes the
// fetch at once, as errors do.
//
// Replica fetches never use fetch sessions (KIP-227): the fetch session
// cache is not consulted, every replica fetch is a full fetch answered
// with session id 0, forgotten topics are ignored, and a follower asking
// for a session gets the errors a full-fetch-only broker gives:
// FETCH_SESSION_ID_NOT_FOUND for a session id other than 0 (none is ever
// created), INVALID_FETCH_SESSION_EPOCH for session id 0 with an epoch > 0.
// Its record bytes come from the node's fetch memory like a consumer's, at
// most the request's max bytes at a time (plus one oversized first batch,
// KIP-74) and never waited for, so followers cannot starve consumers of
// it; a separate budget for replica fetches (a second fetchMemory sized
// for the followers) would be a small change if ever needed.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/fetchsession"
	"github.com/weirmq/weir/actors/partition"
)

// handleReplicaFetch serves a follower's Fetch: it has no session to
// decide in order, so everything runs in the Defer.
func (h *BrokerHandler) handleReplicaFetch(req *Request, r *kmsg.FetchRequest) Response {
	op := &fetchOp{h: h, req: req, r: r, replica: true, reads: fetchSessionRequest(r).Partitions}
	return Defer(op.runReplica)
}

// runReplica serves a replica fetch: the session check, each partition's
// leadership and divergence checks and position report, the reads and the
// long poll, and the response.
func (f *fetchOp) runReplica(ctx context.Context) Response {
	f.inbox = partition.NewInbox(f.h.cfg.System)
	defer f.inbox.Close()
	defer f.releaseMemory()
	resp := f.r.ResponseKind().(*kmsg.FetchResponse)
	if code := replicaSessionError(f.r); code != 0 {
		resp.ErrorCode = code
		return Reply(resp)
	}
	f.resolveReplica()
	results := f.longPoll(ctx)
	f.fill(resp, results)
	f.setDiverging(resp)
	return f.reply(ctx, resp)
}

// replicaSessionError is the top-level error of a replica fetch that asks
// for a fetch session (none is ever created for followers), 0 for a full
// fetch. Versions before 7 have no session fields.
func replicaSessionError(r *kmsg.FetchRequest) int16 {
	switch {
	case r.Version < 7:
		return 0
	case r.SessionID != 0:
		return kerr.FetchSessionIDNotFound.Code
	case r.SessionEpoch > 0:
		return kerr.InvalidFetchSessionEpoch.Code
	}
	return 0
}

// resolveReplica finds each partition's local replica and checks that it
// leads at the follower's epoch, then checks the follower's log for
// divergence.
func (f *fetchOp) resolveReplica() {
	img := f.h.broker.Image()
	f.targets = make([]fetchTarget, len(f.reads))
	for i, rd := range f.reads {
		c, p, code := f.h.localReplica(img, rd.Topic, rd.Partition)
		t := fetchTarget{read: rd, c: c, code: code}
		if code == 0 && !p.IsReplica(f.r.ReplicaID) {
			t.code = kerr.NotLeaderForPartition.Code
		}
		if t.code == 0 {
			t.st = c.Status()
			t.code = leaderFencing(&t.st, rd.CurrentLeaderEpoch)
		}
		if t.code == 0 && rd.LastFetchedEpoch >= 0 {
			epoch, end, diverged := c.DivergingEpoch(rd.LastFetchedEpoch, rd.FetchOffset)
			if diverged {
				t.diverged = true
				t.div = kmsg.NewFetchResponseTopicPartitionDivergingEpoch()
				t.div.Epoch, t.div.EndOffset = epoch, end
			}
		}
		f.targets[i] = t
	}
}

// reportPositions tells each leader the follower's position, from the
// first read of the fetch: only for partitions read without an error and
// without divergence (Kafka's Partition.fetchRecords), once per request.
func (f *fetchOp) reportPositions(results []fetchsession.PartitionResult) {
	nowMs := time.Now().UnixMilli()
	for i, t := range f.targets {
		if t.code != 0 || t.diverged || results[i].ErrorCode != 0 {
			continue
		}
		t.c.ReportFollowerFetch(&partition.FollowerFetched{
			ReplicaID: f.r.ReplicaID, BrokerEpoch: -1,
			FetchOffset: t.read.FetchOffset, LastFetchedEpoch: t.read.LastFetchedEpoch, NowMs: nowMs,
		})
	}
}

// leaderFencing is the error of a replica fetch at currentLeaderEpoch (-1:
// no check) from a replica at st, in the order the reads check it
// (actors/partition): FENCED_LEADER_EPOCH for an older epoch,
// UNKNOWN_LEADER_EPOCH for a newer one, then NOT_LEADER_OR_FOLLOWER unless
// it leads.
func leaderFencing(st *partition.Status, currentLeaderEpoch int32) int16 {
	switch {
	case currentLeaderEpoch != -1 && currentLeaderEpoch < st.LeaderEpoch:
		return kerr.FencedLeaderEpoch.Code
	case currentLeaderEpoch != -1 && currentLeaderEpoch > st.LeaderEpoch:
		return kerr.UnknownLeaderEpoch.Code
	case st.Role != partition.Leader:
		return kerr.NotLeaderForPartition.Code
	}
	return 0
}

// setDiverging fills the diverging epochs of the response's partitions,
// which fill built in the targets' order.
func (f *fetchOp) setDiverging(resp *kmsg.FetchResponse) {
	i := 0
	for ti := range resp.Topics {
		for pi := range resp.Topics[ti].Partitions {
			if t := &f.targets[i]; t.diverged {
				resp.Topics[ti].Partitions[pi].DivergingEpoch = t.div
			}
			i++
		}
	}
}

// waitForLogEnd is a follower's long poll: one StatusWatch registered with
// every partition read, woken by any status change of theirs; it returns
// when a partition's status passes its watch condition
// (Status.ReplicaWatchFired against the status the fetch began with), at
// the deadline, or when ctx ends.
func (f *fetchOp) waitForLogEnd(ctx context.Context, deadline time.Time) {
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	w := partition.NewStatusWatch()
	for _, t := range f.targets {
		if t.c != nil && t.code == 0 {
			t.c.AddStatusWatch(w)
		}
	}
	defer func() {
		for _, t := range f.targets {
			if t.c != nil && t.code == 0 {
				t.c.RemoveStatusWatch(w)
			}
		}
	}()
	for {
		// Registered first, then read: a change either shows here or
		// signals w.
		for i := range f.targets {
			t := &f.targets[i]
			if t.c == nil || t.code != 0 {
				continue
			}
			if st := t.c.Status(); st.ReplicaWatchFired(&t.st, t.read.FetchOffset) {
				return
			}
		}
		select {
		case <-w.C():
		case <-wctx.Done():
			return
		}
	}
}
