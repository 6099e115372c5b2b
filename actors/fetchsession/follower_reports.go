package fetchsession

// DefaultReportRefreshMs bounds how long a follower's unchanged, caught-up
// position in a session goes without a report to the partition's leader
// (FollowerReports). The session's fetches keep such a follower caught
// up on their own (partition.FollowerSession); the refresh only repairs a
// leader that lost what it knew (a restarted partition actor).
const DefaultReportRefreshMs = 30000

// FollowerReports decides which partitions of a follower's fetch report
// the follower's position to their leader (partition.FollowerFetched).
// A sessionless or full fetch reports every partition it read; a fetch in
// an incremental session (KIP-227) reports a partition when the request
// carried it (new to the session, or a moved position), when its
// position differs from the last one reported (a report was skipped after
// an error), when the follower is behind the leader's log end (every such
// fetch counts, as Kafka's lastFetchLeaderLogEndOffset rule needs), when
// the follower is out of the ISR (its fetches are what brings it back),
// or when the last report is RefreshMs old. A caught-up follower that
// long-polls with an unchanged position therefore costs no report per
// fetch. It is a plain struct stepped by Plan, Established and Forget,
// with no I/O and time as an input; not safe for concurrent use.
type FollowerReports struct {
	// RefreshMs is the refresh above; 0 means DefaultReportRefreshMs.
	RefreshMs int64
	byReplica map[int32]*followerReports
}

// followerReports is what was reported for one follower's session.
type followerReports struct {
	// sessionID is the session's id, 0 while its full fetch has not been
	// answered.
	sessionID int32
	last      map[PartitionKey]report
}

// report is one partition's last reported position.
type report struct {
	fetchOffset      int64
	lastFetchedEpoch int32
	atMs             int64
}

// ReportRead is one partition a fetch read, as Plan needs it.
type ReportRead struct {
	Key              PartitionKey
	FetchOffset      int64
	LastFetchedEpoch int32
	// LeaderEnd is the leader's log end offset (what a follower may read)
	// as the read saw it.
	LeaderEnd int64
	// OK is a read without an error or a divergence: only those report.
	OK bool
	// InRequest is set when the request carried the partition.
	InRequest bool
	// OutOfISR is set when the follower is not in the partition's ISR:
	// every such fetch reports, since only a fetch brings it back (after
	// a refused addition the leader waits for the next report).
	OutOfISR bool
}

// ReportPlan is Plan's decision.
type ReportPlan struct {
	// Report are the indexes of the reads to report.
	Report []int
	// NewSession asks the caller for a new partition.FollowerSession for
	// the follower, carried by this and its later reports: the fetch
	// starts a session (a full fetch), or its session is not the one
	// known. Sessionless fetches carry none (Sessionless).
	NewSession  bool
	Sessionless bool
}

// Plan decides the reports of one fetch of replicaID: kind is the fetch
// session's decision (Context.Kind) and sessionID the request's.
func (r *FollowerReports) Plan(replicaID int32, kind Kind, sessionID int32, reads []ReportRead, nowMs int64) ReportPlan {
	if r.byReplica == nil {
		r.byReplica = map[int32]*followerReports{}
	}
	var plan ReportPlan
	fr := r.byReplica[replicaID]
	switch {
	case kind == KindSessionless || kind == KindError:
		delete(r.byReplica, replicaID)
		plan.Sessionless = true
		for i, rd := range reads {
			if rd.OK {
				plan.Report = append(plan.Report, i)
			}
		}
		return plan
	case kind == KindFull, fr == nil, fr.sessionID != sessionID:
		fr = &followerReports{last: map[PartitionKey]report{}}
		if kind == KindIncremental {
			fr.sessionID = sessionID
		}
		r.byReplica[replicaID] = fr
		plan.NewSession = true
	}
	refresh := r.RefreshMs
	if refresh <= 0 {
		refresh = DefaultReportRefreshMs
	}
	for i, rd := range reads {
		if !rd.OK {
			delete(fr.last, rd.Key)
			continue
		}
		last, ok := fr.last[rd.Key]
		if plan.NewSession || rd.InRequest || rd.OutOfISR || !ok || last.fetchOffset != rd.FetchOffset ||
			last.lastFetchedEpoch != rd.LastFetchedEpoch || rd.FetchOffset < rd.LeaderEnd || nowMs-last.atMs >= refresh {
			plan.Report = append(plan.Report, i)
			fr.last[rd.Key] = report{fetchOffset: rd.FetchOffset, lastFetchedEpoch: rd.LastFetchedEpoch, atMs: nowMs}
		}
	}
	return plan
}

// Established takes the answer to a full fetch of replicaID: the session
// it created (0: none, the follower stays sessionless).
func (r *FollowerReports) Established(replicaID int32, sessionID int32) {
	fr := r.byReplica[replicaID]
	switch {
	case fr == nil:
	case sessionID == 0:
		delete(r.byReplica, replicaID)
	case fr.sessionID == 0:
		fr.sessionID = sessionID
	}
}

// Forget drops what was reported of keys, which the follower's session
// no longer holds.
func (r *FollowerReports) Forget(replicaID int32, keys []PartitionKey) {
	if fr := r.byReplica[replicaID]; fr != nil {
		for _, k := range keys {
			delete(fr.last, k)
		}
	}
}
