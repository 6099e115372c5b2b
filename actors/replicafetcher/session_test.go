package replicafetcher

import (
	"math"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestSessionBuild steps fetchSession.build and onResponse through the
// KIP-227 cases: which partitions a request carries and forgets, and how
// the answer moves the session.
func TestSessionBuild(t *testing.T) {
	at := func(ref PartitionRef, off int64, epoch int32) readyPart {
		return readyPart{ref: ref, sessionPart: sessionPart{topic: topicName(ref), fetchOffset: off, lastFetchedEpoch: 4, leaderEpoch: epoch}}
	}
	inSession := map[PartitionRef]sessionPart{
		refA0: at(refA0, 10, 5).sessionPart, refA1: at(refA1, 10, 5).sessionPart, refB0: at(refB0, 7, 5).sessionPart,
	}
	tests := []struct {
		name          string
		session       fetchSession
		ready         []readyPart
		respCode      int16
		respSession   int32
		wantFull      bool
		wantEpoch     int32
		wantInclude   []PartitionRef
		wantForgotten []PartitionRef
		// after the response
		wantID, wantNextEpoch int32
		wantParts             int
	}{
		{name: "no session: full, asks for one, gets one",
			ready:    []readyPart{at(refA0, 10, 5), at(refB0, 7, 5)},
			wantFull: true, wantEpoch: 0, wantInclude: []PartitionRef{refA0, refB0},
			respSession: 42, wantID: 42, wantNextEpoch: 1, wantParts: 2},
		{name: "no session: full, the leader has no slot",
			ready:    []readyPart{at(refA0, 10, 5)},
			wantFull: true, wantEpoch: 0, wantInclude: []PartitionRef{refA0},
			respSession: 0, wantID: 0, wantNextEpoch: 0, wantParts: 0},
		{name: "unchanged partitions are left out",
			session:   fetchSession{id: 42, epoch: 3, parts: inSession},
			ready:     []readyPart{at(refA0, 10, 5), at(refA1, 10, 5), at(refB0, 7, 5)},
			wantEpoch: 3, respSession: 42, wantID: 42, wantNextEpoch: 4, wantParts: 3},
		{name: "a moved position, a new epoch and a new partition are carried; a missing one is forgotten",
			session: fetchSession{id: 42, epoch: 3, parts: map[PartitionRef]sessionPart{
				refA0: at(refA0, 10, 5).sessionPart, refA1: at(refA1, 10, 5).sessionPart}},
			ready:       []readyPart{at(refA0, 12, 5), at(refB0, 7, 6)},
			wantEpoch:   3,
			wantInclude: []PartitionRef{refA0, refB0}, wantForgotten: []PartitionRef{refA1},
			respSession: 42, wantID: 42, wantNextEpoch: 4, wantParts: 2},
		{name: "a leader epoch change alone is carried",
			session:   fetchSession{id: 42, epoch: 3, parts: inSession},
			ready:     []readyPart{at(refA0, 10, 6), at(refA1, 10, 5), at(refB0, 7, 5)},
			wantEpoch: 3, wantInclude: []PartitionRef{refA0},
			respSession: 42, wantID: 42, wantNextEpoch: 4, wantParts: 3},
		{name: "FETCH_SESSION_ID_NOT_FOUND drops the session",
			session:   fetchSession{id: 42, epoch: 3, parts: inSession},
			ready:     []readyPart{at(refA0, 10, 5), at(refA1, 10, 5), at(refB0, 7, 5)},
			wantEpoch: 3, respCode: kerr.FetchSessionIDNotFound.Code,
			wantID: 0, wantNextEpoch: 0, wantParts: 0},
		{name: "an answer naming another session drops it",
			session:   fetchSession{id: 42, epoch: 3, parts: inSession},
			ready:     []readyPart{at(refA0, 10, 5), at(refA1, 10, 5), at(refB0, 7, 5)},
			wantEpoch: 3, respSession: 7, wantID: 0, wantNextEpoch: 0, wantParts: 0},
		{name: "the epoch wraps to 1",
			session:   fetchSession{id: 42, epoch: math.MaxInt32, parts: inSession},
			ready:     []readyPart{at(refA0, 10, 5), at(refA1, 10, 5), at(refB0, 7, 5)},
			wantEpoch: math.MaxInt32, respSession: 42, wantID: 42, wantNextEpoch: 1, wantParts: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.session
			b := s.build(tc.ready)
			if b.full != tc.wantFull || b.epoch != tc.wantEpoch {
				t.Fatalf("build: full %v epoch %d; want %v %d", b.full, b.epoch, tc.wantFull, tc.wantEpoch)
			}
			var inc []PartitionRef
			for _, r := range tc.ready {
				if b.include[r.ref] {
					inc = append(inc, r.ref)
				}
			}
			if !slices.Equal(inc, tc.wantInclude) {
				t.Fatalf("included %v; want %v", inc, tc.wantInclude)
			}
			var fg []PartitionRef
			for _, f := range b.forgotten {
				fg = append(fg, f.ref)
			}
			if !slices.Equal(fg, tc.wantForgotten) {
				t.Fatalf("forgotten %v; want %v", fg, tc.wantForgotten)
			}
			s.onResponse(b, tc.respCode, tc.respSession)
			if s.id != tc.wantID || s.epoch != tc.wantNextEpoch || len(s.parts) != tc.wantParts {
				t.Fatalf("after the response: id %d epoch %d %d parts; want %d %d %d", s.id, s.epoch, len(s.parts), tc.wantID, tc.wantNextEpoch, tc.wantParts)
			}
		})
	}
}

// TestIncrementalFetches runs State through a session: the first Fetch is
// full, later ones carry only what changed (a partition that got records
// comes back at its new position) and leave out the rest, which are
// still fetched; an unfollowed partition is forgotten; a session error
// sends a full Fetch at once.
func TestIncrementalFetches(t *testing.T) {
	h := newHarness(t)
	h.sessionID = 42
	h.start(refA0, refA1, refB0)
	if r := h.fetch.Request; r.SessionID != 0 || r.SessionEpoch != 0 || len(h.fetched()) != 3 {
		t.Fatalf("first fetch: session %d epoch %d, %d partitions", r.SessionID, r.SessionEpoch, len(h.fetched()))
	}
	// Nothing new: the next Fetch is incremental and empty.
	h.respond()
	if r := h.fetch.Request; r.SessionID != 42 || r.SessionEpoch != 1 || len(h.fetched()) != 0 || len(r.ForgottenTopics) != 0 {
		t.Fatalf("second fetch: session %d epoch %d, %d partitions, forgotten %v", r.SessionID, r.SessionEpoch, len(h.fetched()), r.ForgottenTopics)
	}
	// Records for a1, left out of the request but in the session.
	out := h.respond(data(refA1, "batches", 8, 0))
	if len(out.Commands) != 1 || out.Commands[0].Append == nil || out.Commands[0].Append.FetchOffset != 10 {
		t.Fatalf("records of a left-out partition: %+v", out)
	}
	h.answer(refA1, 0, 13, 5, 5)
	got := h.fetched()
	if r := h.fetch.Request; r.SessionEpoch != 2 || len(got) != 1 || got[refA1].FetchOffset != 13 {
		t.Fatalf("third fetch: epoch %d, partitions %+v", r.SessionEpoch, got)
	}
	if p := h.position(refA0); p.FetchOffset != 10 {
		t.Fatalf("a0 left out: position %+v", p)
	}
	// Unfollowing b0 forgets it in the next Fetch.
	h.respond()
	h.take(h.s.Unfollow([]PartitionRef{refB0}, h.now))
	if h.fetch == nil {
		h.respond()
	}
	// The Fetch in flight was built before the Unfollow: answer it.
	for h.fetch != nil && len(h.fetch.Request.ForgottenTopics) == 0 {
		h.respond()
	}
	if h.fetch == nil {
		t.Fatal("no fetch after the unfollow")
	}
	if f := h.fetch.Request.ForgottenTopics; len(f) != 1 || f[0].Topic != "b" || !slices.Equal(f[0].Partitions, []int32{0}) {
		t.Fatalf("forgotten: %+v", f)
	}
	// A session error: a full Fetch of every followed partition at once.
	id := h.fetch.ID
	resp := kmsg.NewPtrFetchResponse()
	resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
	h.fetch = nil
	h.take(h.s.OnFetchResponse(id, resp, h.now))
	if h.fetch == nil {
		t.Fatal("no fetch after the session error")
	}
	if r := h.fetch.Request; r.SessionID != 0 || r.SessionEpoch != 0 || len(h.fetched()) != 2 {
		t.Fatalf("after the session error: session %d epoch %d, %d partitions", r.SessionID, r.SessionEpoch, len(h.fetched()))
	}
}
