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
// Replica fetches use incremental fetch sessions (KIP-227) like
// consumers: the node's fetch session cache (actors/fetchsession, where a
// follower's session is privileged over consumers') decides the request's
// (session id, epoch), reads every partition of the session (those the
// request left out at their last fetch offsets), and answers an
// incremental fetch with only the partitions that have records, a changed
// high watermark or log start offset, an error or a diverging epoch.
// Follower positions still come only from fetches: fetchsession's
// FollowerReports decides which partitions report (those the request
// carried, those whose follower is behind the log end, and a refresh),
// and every report carries the follower's partition.FollowerSession,
// which this node stamps with the time of each of the session's fetches,
// so a caught-up follower whose position is "the same as last time" stays
// caught up without a report per partition per fetch. A forgotten
// partition is told it left the session.
// Its record bytes come from the node's fetch memory like a consumer's, at
// most the request's max bytes at a time (plus one oversized first batch,
// KIP-74) and never waited for, so followers cannot starve consumers of
// it; a separate budget for replica fetches (a second fetchMemory sized
// for the followers) would be a small change if ever needed.

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/fetchsession"
	"github.com/weirmq/weir/actors/partition"
)

// handleReplicaFetch serves a follower's Fetch: the session decision goes
// to the cache actor here, in request order, as for consumers; the rest
// runs in the Defer.
func (h *BrokerHandler) handleReplicaFetch(req *Request, r *kmsg.FetchRequest) Response {
	sreq := fetchSessionRequest(r)
	op := &fetchOp{h: h, req: req, r: r, replica: true, reads: sreq.Partitions, sreq: sreq}
	if sreq.SessionID != 0 || sreq.SessionEpoch >= 0 {
		op.inbox = partition.NewInbox(h.cfg.System)
		op.beginID = op.inbox.NextID()
		h.apis.fetchSessions.SendBegin(op.beginID, sreq, op.inbox.PID())
		op.session = true
	}
	return Defer(op.runReplica)
}

// runReplica serves a replica fetch: the session check, each partition's
// leadership and divergence checks and position report, the reads and the
// long poll, and the response.
func (f *fetchOp) runReplica(ctx context.Context) Response {
	if f.inbox == nil {
		f.inbox = partition.NewInbox(f.h.cfg.System)
	}
	defer f.inbox.Close()
	defer f.releaseMemory()
	resp := f.r.ResponseKind().(*kmsg.FetchResponse)
	var fctx *fetchsession.Context
	f.kind = fetchsession.KindSessionless
	if f.session {
		var answer Response
		var ok bool
		if fctx, answer, ok = f.beginSession(ctx, resp); !ok {
			return answer
		}
		f.reads, f.kind = fctx.Reads, fctx.Kind
	}
	f.resolveReplica()
	if f.kind == fetchsession.KindIncremental {
		f.forget()
	}
	results := f.longPoll(ctx)
	parts := results
	if f.session {
		var closed Response
		var ok bool
		if parts, closed, ok = f.finishSession(ctx, resp, fctx, results, "replica fetch"); !ok {
			return closed
		}
		if f.kind == fetchsession.KindFull {
			f.h.apis.followers.established(f.r.ReplicaID, resp.SessionID)
		}
	}
	f.fill(resp, parts)
	f.setDiverging(resp)
	return f.reply(ctx, resp)
}

// forget tells the partitions an incremental fetch forgot that they left
// the follower's session.
func (f *fetchOp) forget() {
	if len(f.sreq.Forgotten) == 0 {
		return
	}
	fs := f.h.apis.followers.forget(f.r.ReplicaID, f.sreq.Forgotten)
	img := f.h.broker.Image()
	for _, k := range f.sreq.Forgotten {
		if c, _, code := f.h.localReplica(img, k.Topic, k.Partition); code == 0 && fs != nil {
			c.ReportFollowerLeftSession(&partition.FollowerLeftSession{ReplicaID: f.r.ReplicaID, Session: fs})
		}
	}
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
//
// Under a fetch session only the partitions FollowerReports picks report
// (see the file comment); the session's FollowerSession is stamped with
// the fetch's time first, so the leaders of the others count the fetch
// at their unchanged positions.
func (f *fetchOp) reportPositions(results []fetchsession.PartitionResult) {
	nowMs := time.Now().UnixMilli()
	inRequest := make(map[fetchsession.PartitionKey]bool, len(f.sreq.Partitions))
	if f.kind == fetchsession.KindIncremental {
		for _, p := range f.sreq.Partitions {
			inRequest[p.Key()] = true
		}
	}
	reads := make([]fetchsession.ReportRead, len(f.targets))
	for i, t := range f.targets {
		rd := fetchsession.ReportRead{Key: t.read.Key(), FetchOffset: t.read.FetchOffset, LastFetchedEpoch: t.read.LastFetchedEpoch,
			OK: t.code == 0 && !t.diverged && results[i].ErrorCode == 0, InRequest: f.kind != fetchsession.KindIncremental || inRequest[t.read.Key()]}
		if rd.OK {
			st := t.c.Status()
			rd.LeaderEnd = st.ReplicaEnd()
			rd.OutOfISR = !slices.Contains(st.ISR, f.r.ReplicaID)
		}
		reads[i] = rd
	}
	report, fs := f.h.apis.followers.plan(f.r.ReplicaID, f.kind, f.r.SessionID, reads, nowMs)
	for _, i := range report {
		t := f.targets[i]
		t.c.ReportFollowerFetch(&partition.FollowerFetched{
			ReplicaID: f.r.ReplicaID, BrokerEpoch: -1,
			FetchOffset: t.read.FetchOffset, LastFetchedEpoch: t.read.LastFetchedEpoch, NowMs: nowMs, Session: fs,
		})
	}
}

// followerReports is the node's FollowerReports and each follower's
// FollowerSession, shared by the fetches of every connection.
type followerReports struct {
	mu       sync.Mutex
	plans    fetchsession.FollowerReports
	sessions map[int32]*partition.FollowerSession
}

// plan steps FollowerReports.Plan and returns the reads to report and the
// session their reports carry (nil: sessionless), stamped with nowMs.
func (r *followerReports) plan(replicaID int32, kind fetchsession.Kind, sessionID int32, reads []fetchsession.ReportRead, nowMs int64) ([]int, *partition.FollowerSession) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.plans.Plan(replicaID, kind, sessionID, reads, nowMs)
	if r.sessions == nil {
		r.sessions = map[int32]*partition.FollowerSession{}
	}
	switch {
	case p.Sessionless:
		delete(r.sessions, replicaID)
		return p.Report, nil
	case p.NewSession || r.sessions[replicaID] == nil:
		r.sessions[replicaID] = partition.NewFollowerSession()
	}
	fs := r.sessions[replicaID]
	fs.Fetched(nowMs)
	return p.Report, fs
}

// established steps FollowerReports.Established.
func (r *followerReports) established(replicaID, sessionID int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.plans.Established(replicaID, sessionID)
	if sessionID == 0 {
		delete(r.sessions, replicaID)
	}
}

// forget steps FollowerReports.Forget and returns the follower's session.
func (r *followerReports) forget(replicaID int32, keys []fetchsession.PartitionKey) *partition.FollowerSession {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.plans.Forget(replicaID, keys)
	return r.sessions[replicaID]
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

// setDiverging fills the diverging epochs of the response's partitions
// (a session's response carries a subset of the targets, in their order).
func (f *fetchOp) setDiverging(resp *kmsg.FetchResponse) {
	div := map[fetchsession.PartitionKey]kmsg.FetchResponseTopicPartitionDivergingEpoch{}
	for _, t := range f.targets {
		if t.diverged {
			div[t.read.Key()] = t.div
		}
	}
	if len(div) == 0 {
		return
	}
	for ti := range resp.Topics {
		for pi := range resp.Topics[ti].Partitions {
			p := &resp.Topics[ti].Partitions[pi]
			if d, ok := div[fetchsession.PartitionKey{Topic: resp.Topics[ti].Topic, Partition: p.Partition}]; ok {
				p.DivergingEpoch = d
			}
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
