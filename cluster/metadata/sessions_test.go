package metadata

import (
	"reflect"
	"slices"
	"testing"
)

const (
	testSessionMs  = 1500
	testIntervalMs = 250
)

// firstExpiry steps the clock from 0 to endMs by 50 ms; every node of
// beating heartbeats every 250 ms while its heartbeat stops later than
// the clock, and the hints apply at their times. It returns when each
// broker first appeared in Expired (absent: never).
func firstExpiry(t *testing.T, img *Image, endMs int64, stops map[int32]int64, hints map[int32]int64, alive map[int32]int64, gone map[int32]int64) map[int32]int64 {
	t.Helper()
	s := NewSessions(testSessionMs, testIntervalMs)
	s.Reset(img, 0)
	out := map[int32]int64{}
	for now := int64(0); now <= endMs; now += 50 {
		for _, br := range img.Brokers() {
			stop, stops := stops[br.NodeID]
			if now%testIntervalMs == 0 && (!stops || now < stop) {
				s.Heartbeat(br.NodeID, br.Epoch, now)
			}
			if at, ok := hints[br.NodeID]; ok && at == now {
				s.MemberFailed(br.NodeID, now)
			}
			if at, ok := gone[br.NodeID]; ok && at == now {
				s.ProcessGone(br.NodeID, now)
			}
			if at, ok := alive[br.NodeID]; ok && at == now {
				s.MemberAlive(br.NodeID)
			}
		}
		for _, ref := range s.Expired(img, now) {
			if _, seen := out[ref.NodeID]; !seen {
				out[ref.NodeID] = now
			}
			if ref.Epoch != 10 {
				t.Errorf("expired %+v, want epoch 10", ref)
			}
		}
	}
	return out
}

func TestSessionsExpired(t *testing.T) {
	img := threeBrokers(t)
	for _, tc := range []struct {
		name         string
		stops, hints map[int32]int64
		alive, gone  map[int32]int64
		want         map[int32]int64
	}{
		{name: "all heartbeating", want: map[int32]int64{}},
		{name: "timeout", stops: map[int32]int64{2: 1000},
			// the last heartbeat at 750, expired 1500 later
			want: map[int32]int64{2: 2250}},
		{name: "member failed, heartbeats stopped: the hint alone waits out the session",
			stops: map[int32]int64{2: 1000}, hints: map[int32]int64{2: 1100},
			want: map[int32]int64{2: 2250}},
		{name: "process gone after the hint: at once", stops: map[int32]int64{2: 1000}, hints: map[int32]int64{2: 1100},
			gone: map[int32]int64{2: 1150}, want: map[int32]int64{2: 1150}},
		{name: "evidence without a hint (a watched connection closed): at once", stops: map[int32]int64{2: 1000}, gone: map[int32]int64{2: 1150},
			want: map[int32]int64{2: 1150}},
		{name: "evidence fences a heartbeating broker at once (a refused dial means no process listens)",
			hints: map[int32]int64{3: 500}, gone: map[int32]int64{3: 450}, want: map[int32]int64{3: 450}},
		{name: "false hint: the node keeps heartbeating", hints: map[int32]int64{1: 400, 3: 100},
			want: map[int32]int64{}},
		{name: "hint withdrawn, with the evidence before it", stops: map[int32]int64{2: 1000}, hints: map[int32]int64{2: 1100},
			gone: map[int32]int64{2: 1150}, alive: map[int32]int64{2: 1150}, want: map[int32]int64{2: 2250}},
		{name: "evidence after an alive hint counts", stops: map[int32]int64{2: 1000}, hints: map[int32]int64{2: 1100},
			alive: map[int32]int64{2: 1200}, gone: map[int32]int64{2: 1250}, want: map[int32]int64{2: 1250}},
		{name: "two brokers", stops: map[int32]int64{1: 300, 3: 3000}, hints: map[int32]int64{3: 3100}, gone: map[int32]int64{3: 3200},
			want: map[int32]int64{1: 1750, 3: 3200}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := firstExpiry(t, img, 5000, tc.stops, tc.hints, tc.alive, tc.gone)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("expired at %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSessionsLive(t *testing.T) {
	img := threeBrokers(t)
	s := NewSessions(testSessionMs, testIntervalMs)
	if s.Live(1, 10, 0) {
		t.Error("a broker without a session is live")
	}
	s.Heartbeat(1, 10, 100)
	if !s.Live(1, 10, 100) || !s.Live(1, 10, 1599) || s.Live(1, 10, 1600) {
		t.Error("a session lasts the session timeout from its heartbeat")
	}
	if s.Live(1, 9, 100) {
		t.Error("another epoch's registration is live")
	}
	s.Heartbeat(1, 9, 1000) // an older epoch's heartbeat changes nothing
	if !s.Live(1, 10, 1599) || s.Live(1, 9, 1000) {
		t.Error("an older epoch's heartbeat counted")
	}
	s.MemberFailed(1, 200)
	if !s.Live(1, 10, 1599) {
		t.Error("a failure hint alone shortened the session")
	}
	s.ProcessGone(1, 300)
	if s.Live(1, 10, 300) {
		t.Error("a session outlived the evidence that its process is gone")
	}
	s.Heartbeat(1, 10, 310)
	if !s.Live(1, 10, 320) {
		t.Error("a heartbeat after the evidence did not outweigh it")
	}
	s.ProcessGone(1, 400)
	s.MemberAlive(1)
	if !s.Live(1, 10, 700) {
		t.Error("an alive hint withdraws the failure hint and the evidence")
	}

	// Reset: a full session for every unfenced registration of img,
	// nothing for the fenced, other sessions forgotten.
	img = applyAll(t, img, BrokerFencedRecord{NodeID: 3, BrokerEpoch: 10})
	s.Heartbeat(3, 10, 5000)
	s.MemberFailed(2, 4000)
	s.Reset(img, 6000)
	if !s.Live(1, 10, 7499) || s.Live(1, 10, 7500) || s.Live(3, 10, 6000) {
		t.Error("Reset gives the unfenced brokers a full session and no other")
	}
	if !s.Live(2, 10, 7499) || s.Live(2, 10, 7500) {
		t.Error("Reset gives a broker with a failure hint a full session")
	}
	if got := s.Expired(img, 7500); !reflect.DeepEqual(got, []BrokerRef{{NodeID: 1, Epoch: 10}, {NodeID: 2, Epoch: 10}}) {
		t.Errorf("expired %v", got)
	}

	// Evidence that a process is gone, gathered before this node led,
	// still expires its session at once after a Reset.
	s = NewSessions(testSessionMs, testIntervalMs)
	s.Heartbeat(2, 10, 100)
	s.MemberFailed(2, 300)
	s.ProcessGone(2, 310)
	s.Reset(img, 800)
	if got := s.Expired(img, 800); !reflect.DeepEqual(got, []BrokerRef{{NodeID: 2, Epoch: 10}}) {
		t.Errorf("after a Reset, expired %v, want node 2 at once", got)
	}
}

// A broker unfenced without this controller hearing from it gets a full
// session from the first look, not an immediate fence.
func TestSessionsUnknownBrokerGetsASession(t *testing.T) {
	img := threeBrokers(t)
	s := NewSessions(testSessionMs, testIntervalMs)
	if got := s.Expired(img, 10_000); len(got) != 0 {
		t.Fatalf("expired %v at the first look", got)
	}
	if got := s.Expired(img, 11_499); len(got) != 0 {
		t.Fatalf("expired %v within the session", got)
	}
	if got := s.Expired(img, 11_500); len(got) != 3 {
		t.Fatalf("expired %v, want every broker", got)
	}
	// A new registration's session is the new epoch's.
	recs, epoch, err := RegisterBrokerRecords(img, registration(2, 0))
	if err != nil {
		t.Fatal(err)
	}
	img = applyAll(t, img, append(recs, BrokerUnfencedRecord{NodeID: 2, BrokerEpoch: epoch})...)
	got := s.Expired(img, 11_600)
	if slices.ContainsFunc(got, func(r BrokerRef) bool { return r.NodeID == 2 }) {
		t.Errorf("the new registration expired with the old one's session: %v", got)
	}
	if !s.Live(2, epoch, 11_600) {
		t.Error("the new registration has no session")
	}
}

// A controller that did not run for a while extends the sessions by the
// gap, so the brokers whose heartbeats waited in its mailbox are not
// fenced for it.
func TestSessionsExtend(t *testing.T) {
	s := NewSessions(testSessionMs, testIntervalMs)
	s.Heartbeat(1, 10, 100)
	s.Extend(2000)
	if !s.Live(1, 10, 3599) || s.Live(1, 10, 3600) {
		t.Error("Extend did not move the session by the gap")
	}
}
