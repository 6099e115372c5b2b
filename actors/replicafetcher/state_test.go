package replicafetcher

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster/metadata"
)

// Settings of the unit tests: small numbers that are easy to read.
const (
	tMaxWait = 500
	tBackoff = 100
	tTimeout = 2000 // ms
)

var (
	topicA = metadata.UUID{0xa}
	topicB = metadata.UUID{0xb}
	refA0  = PartitionRef{topicA, 0}
	refA1  = PartitionRef{topicA, 1}
	refB0  = PartitionRef{topicB, 0}
)

// harness steps a State with a clock of its own and fake replicas (their
// Clients are only identities: the State never calls them).
type harness struct {
	t        *testing.T
	s        *State
	now      int64
	replicas map[PartitionRef]*partition.Client
	// pending are the commands sent and not answered yet, by partition.
	pending map[PartitionRef]Command
	// fetch is the Fetch in flight.
	fetch *FetchRequest
	wake  int64
	// sessionID is the session id the responses carry (0: none).
	sessionID int32
}

func newHarness(t *testing.T) *harness {
	return &harness{
		t: t, now: 1000,
		s: NewState(Config{NodeID: 2, Leader: 1, Dial: nil, MaxWaitMs: tMaxWait, MinBytes: 1,
			MaxBytes: 1 << 20, PartitionMaxBytes: 1 << 16, BackoffMs: tBackoff, RequestTimeout: tTimeout * time.Millisecond}),
		replicas: map[PartitionRef]*partition.Client{
			refA0: {}, refA1: {}, refB0: {},
		},
		pending: map[PartitionRef]Command{},
	}
}

func topicName(ref PartitionRef) string {
	if ref.TopicID == topicA {
		return "a"
	}
	return "b"
}

// take records an Output: its commands (one per partition at most) and
// its Fetch.
func (h *harness) take(out Output) Output {
	h.t.Helper()
	for _, c := range out.Commands {
		ref := h.refOf(c.Replica)
		if _, dup := h.pending[ref]; dup {
			h.t.Fatalf("second command for %v while one is pending", ref)
		}
		h.pending[ref] = c
	}
	if out.Abandon != 0 {
		if h.fetch == nil || h.fetch.ID != out.Abandon {
			h.t.Fatalf("abandons Fetch %d, not the one in flight", out.Abandon)
		}
		h.fetch = nil
	}
	if out.Fetch != nil {
		if h.fetch != nil {
			h.t.Fatalf("second Fetch while one is in flight")
		}
		h.fetch = out.Fetch
	}
	h.wake = out.WakeAtMs
	return out
}

func (h *harness) refOf(c *partition.Client) PartitionRef {
	for ref, r := range h.replicas {
		if r == c {
			return ref
		}
	}
	h.t.Fatalf("command for an unknown replica")
	return PartitionRef{}
}

// follow follows refs at epoch, each replica at status st.
func (h *harness) follow(epoch int32, st partition.Status, refs ...PartitionRef) Output {
	var items []FollowItem
	for _, ref := range refs {
		items = append(items, FollowItem{
			Followed: Followed{TopicID: ref.TopicID, Topic: topicName(ref), Partition: ref.Partition, LeaderEpoch: epoch, Replica: h.replicas[ref]},
			Status:   st,
		})
	}
	return h.take(h.s.Follow(items, h.now))
}

// answer answers ref's pending command.
func (h *harness) answer(ref PartitionRef, code int16, offset int64, lastEpoch, epoch int32) Output {
	h.t.Helper()
	c, ok := h.pending[ref]
	if !ok {
		h.t.Fatalf("no command pending for %v", ref)
	}
	delete(h.pending, ref)
	return h.take(h.s.OnPosition(&partition.ReplicaPosition{ID: commandID(c), ErrorCode: code, FetchOffset: offset, LastFetchedEpoch: lastEpoch, LeaderEpoch: epoch}, h.now))
}

func commandID(c Command) uint64 {
	switch {
	case c.Append != nil:
		return c.Append.ID
	case c.Truncate != nil:
		return c.Truncate.ID
	}
	return c.Reset.ID
}

// respond answers the Fetch in flight with parts.
func (h *harness) respond(parts ...respPart) Output {
	h.t.Helper()
	if h.fetch == nil {
		h.t.Fatal("no Fetch in flight")
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = FetchVersion
	resp.SessionID = h.sessionID
	for _, rp := range parts {
		t := kmsg.NewFetchResponseTopic()
		t.Topic = topicName(rp.ref)
		p := kmsg.NewFetchResponseTopicPartition()
		p.Partition, p.ErrorCode, p.HighWatermark, p.LastStableOffset, p.LogStartOffset = rp.ref.Partition, rp.code, rp.hw, rp.hw, rp.logStart
		p.RecordBatches = rp.records
		if rp.divEpoch >= 0 {
			p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset = rp.divEpoch, rp.divEnd
		}
		t.Partitions = append(t.Partitions, p)
		resp.Topics = append(resp.Topics, t)
	}
	id := h.fetch.ID
	h.fetch = nil
	return h.take(h.s.OnFetchResponse(id, resp, h.now))
}

// respPart is one partition of a response.
type respPart struct {
	ref          PartitionRef
	code         int16
	records      []byte
	hw, logStart int64
	divEpoch     int32
	divEnd       int64
}

func data(ref PartitionRef, records string, hw, logStart int64) respPart {
	return respPart{ref: ref, records: []byte(records), hw: hw, logStart: logStart, divEpoch: -1}
}

func failed(ref PartitionRef, code int16, hw, logStart int64) respPart {
	return respPart{ref: ref, code: code, hw: hw, logStart: logStart, divEpoch: -1, records: []byte{}}
}

// tick advances the clock to ms and ticks.
func (h *harness) tick(ms int64) Output {
	h.now = ms
	return h.take(h.s.OnTick(ms))
}

// fetched returns the in-flight Fetch's partitions as ref -> partition.
func (h *harness) fetched() map[PartitionRef]kmsg.FetchRequestTopicPartition {
	h.t.Helper()
	if h.fetch == nil {
		h.t.Fatal("no Fetch in flight")
	}
	got := map[PartitionRef]kmsg.FetchRequestTopicPartition{}
	for _, t := range h.fetch.Request.Topics {
		id := topicA
		if t.Topic == "b" {
			id = topicB
		}
		for _, p := range t.Partitions {
			got[PartitionRef{id, p.Partition}] = p
		}
	}
	return got
}

// position returns ref's published position.
func (h *harness) position(ref PartitionRef) Position {
	h.t.Helper()
	for _, p := range h.s.Positions() {
		if p.TopicID == ref.TopicID && p.Partition == ref.Partition {
			return p
		}
	}
	h.t.Fatalf("no position for %v", ref)
	return Position{}
}

// start follows refs at epoch 5 over replicas at offset 10 (HW 8, log
// start 0) and answers the probes with (10, epoch 4): a Fetch of them is
// in flight afterwards.
func (h *harness) start(refs ...PartitionRef) {
	h.t.Helper()
	h.follow(5, partition.Status{LogEndOffset: 10, HighWatermark: 8, LogStartOffset: 0}, refs...)
	for _, ref := range refs {
		h.answer(ref, 0, 10, 4, 5)
	}
	if h.fetch == nil {
		h.t.Fatal("no Fetch after the probes were answered")
	}
}

func TestFollowProbesThenFetches(t *testing.T) {
	h := newHarness(t)
	out := h.follow(5, partition.Status{LogEndOffset: 10, HighWatermark: 8, LogStartOffset: 2}, refA0, refB0)
	if len(out.Commands) != 2 || out.Fetch != nil {
		t.Fatalf("follow: %d commands, fetch %v; want two probes and no fetch", len(out.Commands), out.Fetch != nil)
	}
	for _, c := range out.Commands {
		a := c.Append
		if a == nil || len(a.Records) != 0 || a.FetchOffset != 10 || a.LeaderEpoch != 5 || a.LeaderHighWatermark != 8 || a.LeaderLogStartOffset != 2 {
			t.Fatalf("probe: %+v", c)
		}
	}
	if p := h.position(refA0); p.FetchOffset != -1 || p.LastFetchedEpoch != -1 || p.LeaderEpoch != 5 || p.Paused {
		t.Fatalf("position before the answer: %+v", p)
	}
	if out := h.answer(refA0, 0, 10, 4, 5); out.Fetch != nil {
		t.Fatal("fetch sent while a probe is unanswered")
	}
	if h.s.Settled() {
		t.Fatal("settled with a probe unanswered")
	}
	out = h.answer(refB0, 0, 7, 3, 5)
	if out.Fetch == nil {
		t.Fatal("no fetch once both probes were answered")
	}
	req := out.Fetch.Request
	if req.Version != 12 || req.ReplicaID != 2 || req.MaxWaitMillis != tMaxWait || req.MinBytes != 1 || req.MaxBytes != 1<<20 ||
		req.IsolationLevel != 0 || req.SessionID != 0 || req.SessionEpoch != 0 {
		t.Fatalf("fetch request: %+v", req)
	}
	got := h.fetched()
	a, b := got[refA0], got[refB0]
	if len(got) != 2 || a.FetchOffset != 10 || a.LastFetchedEpoch != 4 || a.CurrentLeaderEpoch != 5 || a.PartitionMaxBytes != 1<<16 ||
		b.FetchOffset != 7 || b.LastFetchedEpoch != 3 {
		t.Fatalf("fetch partitions: %+v", got)
	}
	if p := h.position(refB0); p.FetchOffset != 7 || p.LastFetchedEpoch != 3 {
		t.Fatalf("position after the answer: %+v", p)
	}
}

func TestRecordsAppendedThenFetchedOn(t *testing.T) {
	h := newHarness(t)
	h.start(refA0)
	out := h.respond(data(refA0, "batches", 12, 0))
	if out.Fetch != nil || len(out.Commands) != 1 {
		t.Fatalf("response: %+v", out)
	}
	a := out.Commands[0].Append
	if a == nil || string(a.Records) != "batches" || a.FetchOffset != 10 || a.LeaderHighWatermark != 12 || a.LeaderLogStartOffset != 0 || a.LeaderEpoch != 5 {
		t.Fatalf("append: %+v", out.Commands[0])
	}
	out = h.answer(refA0, 0, 14, 5, 5)
	if out.Fetch == nil {
		t.Fatal("no fetch after the position")
	}
	if p := h.fetched()[refA0]; p.FetchOffset != 14 || p.LastFetchedEpoch != 5 {
		t.Fatalf("next fetch: %+v", p)
	}
}

// An empty answer whose high watermark and log start the follower knows
// needs no command: the next fetch goes at once. A moved high watermark
// is passed on with zero records.
func TestEmptyResponses(t *testing.T) {
	h := newHarness(t)
	h.start(refA0)
	if out := h.respond(data(refA0, "", 8, 0)); len(out.Commands) != 0 || out.Fetch == nil {
		t.Fatalf("unchanged: %+v", out)
	}
	out := h.respond(data(refA0, "", 10, 0))
	if len(out.Commands) != 1 || out.Fetch != nil {
		t.Fatalf("new high watermark: %+v", out)
	}
	if a := out.Commands[0].Append; a == nil || len(a.Records) != 0 || a.LeaderHighWatermark != 10 || a.FetchOffset != 10 {
		t.Fatalf("high watermark append: %+v", out.Commands[0])
	}
	h.answer(refA0, 0, 10, 4, 5)
	if out := h.respond(data(refA0, "", 10, 3)); len(out.Commands) != 1 || out.Commands[0].Append.LeaderLogStartOffset != 3 {
		t.Fatalf("new log start: %+v", out)
	}
}

// The next fetch waits for the answers to the last response's commands,
// at most MaxWaitMs; an answer that never comes is given up on after the
// request timeout and the partition probed again.
func TestHoldAndAwaitTimeout(t *testing.T) {
	h := newHarness(t)
	h.start(refA0, refA1)
	out := h.respond(data(refA0, "x", 11, 0), data(refA1, "", 8, 0))
	if out.Fetch != nil {
		t.Fatal("fetch sent before a0's append was answered")
	}
	if out.WakeAtMs != h.now+tMaxWait {
		t.Fatalf("wake at %d, want %d", out.WakeAtMs, h.now+tMaxWait)
	}
	if out := h.tick(h.now + tMaxWait - 1); out.Fetch != nil {
		t.Fatal("fetch before the hold ended")
	}
	out = h.tick(h.now + 1)
	if out.Fetch == nil {
		t.Fatal("no fetch after the hold")
	}
	if got := h.fetched(); len(got) != 1 || got[refA1].FetchOffset != 10 {
		t.Fatalf("held fetch: %+v", got)
	}
	// a0 stays out until its answer or the timeout; a later round is not
	// held by it.
	h.respond(data(refA1, "", 8, 0))
	if h.fetch == nil {
		t.Fatal("a round was held by an older unanswered command")
	}
	sent := h.pending[refA0]
	delete(h.pending, refA0)
	h.respond(data(refA1, "", 8, 0))
	out = h.tick(sent.Append.NowMs + tTimeout)
	if len(out.Commands) != 1 || out.Commands[0].Append == nil || out.Commands[0].Append.FetchOffset != 10 || len(out.Commands[0].Append.Records) != 0 {
		t.Fatalf("after the timeout: %+v", out)
	}
	if p := h.position(refA0); !strings.Contains(p.LastError, "no answer") {
		t.Fatalf("position after the timeout: %+v", p)
	}
	// The late answer to the first command is ignored.
	h.take(h.s.OnPosition(&partition.ReplicaPosition{ID: sent.Append.ID, FetchOffset: 99, LastFetchedEpoch: 5, LeaderEpoch: 5}, h.now))
	if p := h.position(refA0); p.FetchOffset != 10 {
		t.Fatalf("late answer applied: %+v", p)
	}
}

func TestDivergingEpochTruncates(t *testing.T) {
	h := newHarness(t)
	h.start(refA0)
	out := h.respond(respPart{ref: refA0, hw: 8, records: []byte{}, divEpoch: 3, divEnd: 9})
	if len(out.Commands) != 1 || out.Commands[0].Truncate == nil {
		t.Fatalf("diverging: %+v", out)
	}
	if tr := out.Commands[0].Truncate; tr.Epoch != 3 || tr.EndOffset != 9 || tr.LeaderEpoch != 5 {
		t.Fatalf("truncate: %+v", tr)
	}
	if out := h.answer(refA0, 0, 9, 3, 5); out.Fetch == nil {
		t.Fatal("no fetch after the truncation")
	}
	if p := h.fetched()[refA0]; p.FetchOffset != 9 || p.LastFetchedEpoch != 3 {
		t.Fatalf("fetch after truncation: %+v", p)
	}
}

func TestOffsetOutOfRange(t *testing.T) {
	t.Run("below the leader's log start", func(t *testing.T) {
		h := newHarness(t)
		h.start(refA0)
		out := h.respond(failed(refA0, kerr.OffsetOutOfRange.Code, 40, 30))
		if len(out.Commands) != 1 || out.Commands[0].Reset == nil {
			t.Fatalf("out of range: %+v", out)
		}
		if r := out.Commands[0].Reset; r.LogStartOffset != 30 || r.LeaderLogEndOffset != -1 || r.LeaderEpoch != 5 {
			t.Fatalf("reset: %+v", r)
		}
		h.answer(refA0, 0, 30, -1, 5)
		if p := h.fetched()[refA0]; p.FetchOffset != 30 || p.LastFetchedEpoch != -1 {
			t.Fatalf("fetch after reset: %+v", p)
		}
	})
	t.Run("above the leader's end", func(t *testing.T) {
		h := newHarness(t)
		h.start(refA0)
		out := h.respond(failed(refA0, kerr.OffsetOutOfRange.Code, 6, 0))
		if len(out.Commands) != 1 || out.Commands[0].Reset == nil || out.Commands[0].Reset.LeaderLogEndOffset != 6 {
			t.Fatalf("out of range: %+v", out)
		}
	})
	t.Run("without offsets", func(t *testing.T) {
		h := newHarness(t)
		h.start(refA0)
		out := h.respond(failed(refA0, kerr.OffsetOutOfRange.Code, -1, -1))
		if len(out.Commands) != 0 || out.Fetch != nil {
			t.Fatalf("out of range without offsets: %+v", out)
		}
		if out.WakeAtMs != h.now+tBackoff {
			t.Fatalf("wake at %d, want the backoff's end %d", out.WakeAtMs, h.now+tBackoff)
		}
		out = h.tick(h.now + tBackoff)
		if len(out.Commands) != 1 || out.Commands[0].Append == nil || out.Commands[0].Append.FetchOffset != 10 {
			t.Fatalf("retry: %+v", out)
		}
	})
}

// Leader errors: each pauses or delays the partition; only the others
// go on being fetched.
func TestLeaderErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		code    int16
		paused  bool
		retried bool // after the backoff, without a newer Follow
	}{
		{"fenced", kerr.FencedLeaderEpoch.Code, true, false},
		{"not leader", kerr.NotLeaderForPartition.Code, true, true},
		{"unknown epoch", kerr.UnknownLeaderEpoch.Code, true, true},
		{"unknown partition", kerr.UnknownTopicOrPartition.Code, true, true},
		{"storage", kerr.KafkaStorageError.Code, false, true},
		{"other", kerr.CorruptMessage.Code, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.start(refA0, refB0)
			out := h.respond(failed(refA0, tc.code, -1, -1), data(refB0, "", 8, 0))
			if len(out.Commands) != 0 || out.Fetch == nil {
				t.Fatalf("response: %+v", out)
			}
			if got := h.fetched(); len(got) != 1 || got[refB0].FetchOffset != 10 {
				t.Fatalf("fetch without a0: %+v", got)
			}
			p := h.position(refA0)
			if p.Paused != tc.paused || !strings.Contains(p.LastError, kerr.ErrorForCode(tc.code).Error()) {
				t.Fatalf("position: %+v", p)
			}
			// The backoff passes: retried (probed) or not.
			h.respond(data(refB0, "", 8, 0))
			out = h.tick(h.now + tBackoff)
			if retried := len(out.Commands) == 1; retried != tc.retried {
				t.Fatalf("after the backoff: %d commands, want retried %v", len(out.Commands), tc.retried)
			}
			if !tc.retried {
				// Ticks do nothing; the same epoch does nothing; a newer
				// epoch resumes with a probe at that epoch.
				if out := h.tick(h.now + 10*tBackoff); len(out.Commands) != 0 {
					t.Fatalf("paused partition probed by a tick: %+v", out)
				}
				if out := h.follow(5, partition.Status{LogEndOffset: 10}, refA0); len(out.Commands) != 0 {
					t.Fatalf("same epoch resumed: %+v", out)
				}
				out = h.follow(6, partition.Status{LogEndOffset: 10, HighWatermark: 8}, refA0)
				if len(out.Commands) != 1 || out.Commands[0].Append.LeaderEpoch != 6 || h.position(refA0).Paused {
					t.Fatalf("newer epoch: %+v", out)
				}
			}
			h.respond(data(refB0, "", 8, 0))
			h.answer(refA0, 0, 10, 4, h.position(refA0).LeaderEpoch)
			if h.fetch == nil {
				h.respond(data(refB0, "", 8, 0))
			}
			if got := h.fetched(); got[refA0].FetchOffset != 10 || got[refA0].CurrentLeaderEpoch != h.position(refA0).LeaderEpoch {
				t.Fatalf("a0 not fetched again: %+v", got)
			}
			h.respond(data(refA0, "", 8, 0), data(refB0, "", 8, 0))
			if p := h.position(refA0); p.LastError != "" || p.Paused {
				t.Fatalf("position after success: %+v", p)
			}
		})
	}
}

// A newer Follow resumes a retried pause at once, without waiting for
// the backoff.
func TestNewerFollowResumesAtOnce(t *testing.T) {
	h := newHarness(t)
	h.start(refA0)
	h.respond(failed(refA0, kerr.NotLeaderForPartition.Code, -1, -1))
	out := h.follow(6, partition.Status{LogEndOffset: 10, HighWatermark: 8}, refA0)
	if len(out.Commands) != 1 || out.Commands[0].Append.LeaderEpoch != 6 {
		t.Fatalf("newer follow: %+v", out)
	}
}

// Follower replica errors in its answer.
func TestReplicaErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		code    int16
		paused  bool
		retried bool
	}{
		{"fenced", kerr.FencedLeaderEpoch.Code, true, false},
		{"leads", kerr.NotLeaderForPartition.Code, true, false},
		{"unknown epoch", kerr.UnknownLeaderEpoch.Code, true, true},
		{"storage", kerr.KafkaStorageError.Code, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.follow(5, partition.Status{LogEndOffset: 10, HighWatermark: 8}, refA0)
			out := h.answer(refA0, tc.code, 0, -1, 6)
			if out.Fetch != nil || len(out.Commands) != 0 {
				t.Fatalf("answer: %+v", out)
			}
			p := h.position(refA0)
			if p.Paused != tc.paused || !strings.Contains(p.LastError, "follower replica") || p.FetchOffset != -1 {
				t.Fatalf("position: %+v", p)
			}
			out = h.tick(h.now + tBackoff)
			if retried := len(out.Commands) == 1; retried != tc.retried {
				t.Fatalf("after the backoff: %+v, want retried %v", out, tc.retried)
			}
			if tc.retried && out.Commands[0].Append.FetchOffset != 10 {
				t.Fatalf("retry probe: %+v", out.Commands[0].Append)
			}
		})
	}
}

// A failed Fetch backs off, then asks for the same partitions again.
func TestFetchError(t *testing.T) {
	h := newHarness(t)
	h.start(refA0, refB0)
	id := h.fetch.ID
	h.fetch = nil
	out := h.take(h.s.OnFetchError(id, errTest, h.now))
	if out.Fetch != nil || out.WakeAtMs != h.now+tBackoff {
		t.Fatalf("after the error: fetch %v, wake %d", out.Fetch != nil, out.WakeAtMs)
	}
	if p := h.position(refA0); p.LastError != errTest.Error() || p.Paused || p.FetchOffset != 10 {
		t.Fatalf("position: %+v", p)
	}
	if h.s.FetchError() != errTest.Error() {
		t.Fatalf("fetch error %q", h.s.FetchError())
	}
	if out := h.tick(h.now + tBackoff - 1); out.Fetch != nil {
		t.Fatal("fetch during the backoff")
	}
	if out := h.tick(h.now + 1); out.Fetch == nil || len(h.fetched()) != 2 {
		t.Fatal("no fetch of both after the backoff")
	}
	// A late answer to the failed Fetch is ignored.
	h.take(h.s.OnFetchResponse(id, kmsg.NewPtrFetchResponse(), h.now))
	h.respond(data(refA0, "", 8, 0), data(refB0, "", 8, 0))
	if h.s.FetchError() != "" || h.position(refA0).LastError != "" {
		t.Fatal("error kept after a success")
	}
	// A top-level error is a failed Fetch.
	resp := kmsg.NewPtrFetchResponse()
	resp.ErrorCode = kerr.UnknownServerError.Code
	id = h.fetch.ID
	h.fetch = nil
	if out := h.take(h.s.OnFetchResponse(id, resp, h.now)); out.Fetch != nil || out.WakeAtMs != h.now+tBackoff {
		t.Fatalf("top-level error: %+v", out)
	}
}

type testError string

func (e testError) Error() string { return string(e) }

const errTest = testError("connection refused")

// Partitions unfollowed or replaced while fetched ignore that Fetch's
// answer, and answers to their commands.
func TestUnfollowAndReplaceDuringFetch(t *testing.T) {
	h := newHarness(t)
	h.start(refA0, refA1, refB0)
	h.take(h.s.Unfollow([]PartitionRef{refB0}, h.now))
	out := h.follow(7, partition.Status{LogEndOffset: 12, HighWatermark: 8}, refA1)
	if len(out.Commands) != 1 || out.Commands[0].Append.LeaderEpoch != 7 || out.Commands[0].Append.FetchOffset != 12 {
		t.Fatalf("replace: %+v", out)
	}
	out = h.respond(data(refA0, "", 8, 0), data(refA1, "stale", 20, 0), data(refB0, "gone", 20, 0))
	if len(out.Commands) != 0 {
		t.Fatalf("stale partitions got commands: %+v", out.Commands)
	}
	if out.Fetch != nil {
		t.Fatal("fetch before the replaced partition's probe was answered")
	}
	h.answer(refA1, 0, 12, 6, 7)
	got := h.fetched()
	if len(got) != 2 || got[refA1].FetchOffset != 12 || got[refA1].CurrentLeaderEpoch != 7 {
		t.Fatalf("fetch after replace: %+v", got)
	}
	if len(h.s.Positions()) != 2 {
		t.Fatalf("positions: %+v", h.s.Positions())
	}
	// An older epoch is ignored.
	if out := h.follow(6, partition.Status{}, refA1); len(out.Commands) != 0 {
		t.Fatalf("older epoch: %+v", out)
	}
	// Unfollowing an awaiting partition drops its answer.
	h.respond(data(refA0, "x", 9, 0), data(refA1, "", 8, 0))
	c := h.pending[refA0]
	h.take(h.s.Unfollow([]PartitionRef{refA0}, h.now))
	delete(h.pending, refA0)
	out = h.take(h.s.OnPosition(&partition.ReplicaPosition{ID: c.Append.ID, FetchOffset: 11}, h.now))
	if len(h.s.Positions()) != 1 {
		t.Fatalf("positions after unfollow: %+v", h.s.Positions())
	}
	if h.fetch == nil {
		t.Fatal("the unfollowed partition still holds the fetch")
	}
	if got := h.fetched(); len(got) != 1 {
		t.Fatalf("fetch after unfollow: %+v", got)
	}
}

// Partitions that returned records go to the end of the next Fetch.
func TestRotation(t *testing.T) {
	h := newHarness(t)
	h.start(refA0, refA1, refB0)
	h.respond(data(refA0, "x", 11, 0), data(refA1, "", 8, 0), data(refB0, "", 8, 0))
	h.answer(refA0, 0, 11, 5, 5)
	var order []PartitionRef
	for _, t := range h.fetch.Request.Topics {
		for _, p := range t.Partitions {
			id := topicA
			if t.Topic == "b" {
				id = topicB
			}
			order = append(order, PartitionRef{id, p.Partition})
		}
	}
	if len(order) != 3 || order[2] != refA0 {
		t.Fatalf("order %v, want a0 last", order)
	}
	if n := len(h.fetch.Request.Topics); n != 3 {
		t.Fatalf("%d topic entries, want 3 (a, b, a)", n)
	}
}

// Answers with unknown IDs change nothing.
func TestUnknownAnswer(t *testing.T) {
	h := newHarness(t)
	h.start(refA0)
	out := h.take(h.s.OnPosition(&partition.ReplicaPosition{ID: 12345, FetchOffset: 99}, h.now))
	if out.Fetch != nil || len(out.Commands) != 0 || h.position(refA0).FetchOffset != 10 {
		t.Fatalf("unknown answer: %+v", out)
	}
}

// A leader whose metadata lags this node's (it has not applied the
// election that makes it leader yet) is asked again within milliseconds,
// then less and less often, never later than the backoff; a success
// starts the count over.
func TestLaggingLeaderRetriedSoon(t *testing.T) {
	h := newHarness(t)
	h.start(refA0)
	wantRetryAfter := func(wait int64) {
		t.Helper()
		if out := h.tick(h.now + wait - 1); len(out.Commands) != 0 {
			t.Fatalf("retried before %d ms: %+v", wait, out)
		}
		out := h.tick(h.now + 1)
		if len(out.Commands) != 1 || out.Commands[0].Append == nil {
			t.Fatalf("not retried after %d ms: %+v", wait, out)
		}
		h.answer(refA0, 0, 10, 4, 5)
	}
	for _, wait := range []int64{laggingRetryMs, 2 * laggingRetryMs, 4 * laggingRetryMs, tBackoff, tBackoff} {
		h.respond(failed(refA0, kerr.UnknownLeaderEpoch.Code, -1, -1))
		wantRetryAfter(wait)
	}
	h.respond(data(refA0, "", 8, 0))
	h.respond(failed(refA0, kerr.NotLeaderForPartition.Code, -1, -1))
	wantRetryAfter(laggingRetryMs)
}

// A partition followed while a Fetch is in flight (a leadership that just
// moved to this leader) does not wait out that long poll: once its probe
// is answered the Fetch in flight is abandoned and a full one, closing
// the session, carries every partition; the abandoned one's answer is
// dropped.
func TestNewPartitionPreemptsLongPoll(t *testing.T) {
	h := newHarness(t)
	h.sessionID = 42
	h.start(refA0)
	h.respond(data(refA0, "", 8, 0))
	if h.fetch == nil || h.fetch.Request.SessionID != 42 || h.fetch.Request.SessionEpoch != 1 {
		t.Fatalf("no incremental Fetch in the session: %+v", h.fetch)
	}
	polling := h.fetch.ID
	if out := h.follow(5, partition.Status{LogEndOffset: 3, HighWatermark: 3}, refB0); out.Abandon != 0 || out.Fetch != nil {
		t.Fatalf("follow abandoned before the probe's answer: %+v", out)
	}
	out := h.answer(refB0, 0, 3, 4, 5)
	if out.Abandon != polling || out.Fetch == nil {
		t.Fatalf("probe answered: abandon %d (want %d), fetch %v", out.Abandon, polling, out.Fetch != nil)
	}
	if r := out.Fetch.Request; r.SessionID != 42 || r.SessionEpoch != 0 {
		t.Fatalf("the Fetch after abandoning: session %d epoch %d; want a full one closing 42", r.SessionID, r.SessionEpoch)
	}
	got := h.fetched()
	if len(got) != 2 || got[refA0].FetchOffset != 10 || got[refB0].FetchOffset != 3 {
		t.Fatalf("fetch after abandoning: %+v", got)
	}
	late := kmsg.NewPtrFetchResponse()
	late.SessionID = 42
	if out := h.s.OnFetchResponse(polling, late, h.now); len(out.Commands) != 0 || out.Fetch != nil || out.Abandon != 0 {
		t.Fatalf("the abandoned Fetch's answer was taken: %+v", out)
	}
	// A partition that becomes ready while nothing is in flight abandons
	// nothing.
	h.respond(data(refA0, "", 8, 0), data(refB0, "", 3, 0))
	h.respond(data(refA0, "", 8, 0), data(refB0, "", 3, 0))
	h.follow(5, partition.Status{LogEndOffset: 1, HighWatermark: 1}, refA1)
	fl := h.fetch.ID
	respA := h.s.OnFetchResponse(fl, kmsg.NewPtrFetchResponse(), h.now)
	h.fetch = nil
	h.take(respA)
	if out := h.answer(refA1, 0, 1, 4, 5); out.Abandon != 0 && out.Abandon != h.fetch.ID {
		t.Fatalf("unexpected abandon %d", out.Abandon)
	}
}
