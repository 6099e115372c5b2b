package fetchsession

import (
	"slices"
	"testing"
)

// TestFollowerReports steps FollowerReports through one follower's
// fetches and checks which partitions report their positions each time.
func TestFollowerReports(t *testing.T) {
	a, b := PartitionKey{"t", 0}, PartitionKey{"t", 1}
	read := func(k PartitionKey, off, end int64, ok, inReq bool) ReportRead {
		return ReportRead{Key: k, FetchOffset: off, LastFetchedEpoch: 3, LeaderEnd: end, OK: ok, InRequest: inReq}
	}
	outOfISR := func(rd ReportRead) ReportRead { rd.OutOfISR = true; return rd }
	type step struct {
		name        string
		kind        Kind
		session     int32
		reads       []ReportRead
		nowMs       int64
		established int32 // after the step, for KindFull (-1: not called)
		forget      []PartitionKey
		want        []int
		wantNew     bool
		wantLess    bool
	}
	steps := []step{
		{name: "sessionless: every read that succeeded", kind: KindSessionless,
			reads: []ReportRead{read(a, 5, 5, true, true), read(b, 5, 5, false, true)}, nowMs: 1000,
			established: -1, want: []int{0}, wantLess: true},
		{name: "full fetch: all, a new session", kind: KindFull,
			reads: []ReportRead{read(a, 5, 5, true, true), read(b, 5, 5, true, true)}, nowMs: 1100,
			established: 42, want: []int{0, 1}, wantNew: true},
		{name: "incremental, nothing carried, caught up: none", kind: KindIncremental, session: 42,
			reads: []ReportRead{read(a, 5, 5, true, false), read(b, 5, 5, true, false)}, nowMs: 1600,
			established: -1, want: nil},
		{name: "a carried partition reports; one behind the log end too", kind: KindIncremental, session: 42,
			reads: []ReportRead{read(a, 7, 7, true, true), read(b, 5, 9, true, false)}, nowMs: 2100,
			established: -1, want: []int{0, 1}},
		{name: "a failed read does not report and is reported once it reads again", kind: KindIncremental, session: 42,
			reads: []ReportRead{read(a, 7, 7, false, false), read(b, 9, 9, true, true)}, nowMs: 2600,
			established: -1, want: []int{1}},
		{name: "... again", kind: KindIncremental, session: 42,
			reads: []ReportRead{read(a, 7, 7, true, false), read(b, 9, 9, true, false)}, nowMs: 3100,
			established: -1, want: []int{0}},
		{name: "a caught-up follower out of the ISR reports every fetch", kind: KindIncremental, session: 42,
			reads: []ReportRead{outOfISR(read(a, 7, 7, true, false)), read(b, 9, 9, true, false)}, nowMs: 3100,
			established: -1, want: []int{0}},
		{name: "... and again, its position unchanged", kind: KindIncremental, session: 42,
			reads: []ReportRead{outOfISR(read(a, 7, 7, true, false)), read(b, 9, 9, true, false)}, nowMs: 3100,
			established: -1, want: []int{0}},
		{name: "the refresh", kind: KindIncremental, session: 42,
			reads: []ReportRead{read(a, 7, 7, true, false), read(b, 9, 9, true, false)}, nowMs: 3100 + DefaultReportRefreshMs,
			established: -1, want: []int{0, 1}},
		{name: "a forgotten partition added back reports", kind: KindIncremental, session: 42, forget: []PartitionKey{b},
			reads: []ReportRead{read(a, 7, 7, true, false), read(b, 9, 9, true, false)}, nowMs: 3200 + DefaultReportRefreshMs,
			established: -1, want: []int{1}},
		{name: "another session id: all, a new session", kind: KindIncremental, session: 43,
			reads: []ReportRead{read(a, 7, 7, true, false), read(b, 9, 9, true, false)}, nowMs: 3300 + DefaultReportRefreshMs,
			established: -1, want: []int{0, 1}, wantNew: true},
		{name: "full fetch without a slot", kind: KindFull,
			reads: []ReportRead{read(a, 7, 7, true, true)}, nowMs: 3400 + DefaultReportRefreshMs,
			established: 0, want: []int{0}, wantNew: true},
		{name: "then an incremental fetch of an unknown session: all, new", kind: KindIncremental, session: 42,
			reads: []ReportRead{read(a, 7, 7, true, false)}, nowMs: 3500 + DefaultReportRefreshMs,
			established: -1, want: []int{0}, wantNew: true},
	}
	var r FollowerReports
	for _, st := range steps {
		if st.forget != nil {
			r.Forget(2, st.forget)
		}
		p := r.Plan(2, st.kind, st.session, st.reads, st.nowMs)
		if !slices.Equal(p.Report, st.want) || p.NewSession != st.wantNew || p.Sessionless != st.wantLess {
			t.Fatalf("%s: plan %+v; want report %v new %v sessionless %v", st.name, p, st.want, st.wantNew, st.wantLess)
		}
		if st.established >= 0 {
			r.Established(2, st.established)
		}
	}
}
