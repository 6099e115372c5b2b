package replicafetcher

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/partition"
)

// FetchVersion is the Fetch version the fetcher sends: the newest weir
// serves (topic names; last_fetched_epoch and diverging_epoch, KIP-595).
const FetchVersion = 12

// State is one fetcher's decision logic: which partitions the next Fetch
// carries and from where, and what each partition of a response becomes
// for its follower replica. It is stepped by the methods below, each
// returning the Output the shell performs; it does no I/O, reads no clock
// (time comes in as nowMs) and is not safe for concurrent use.
//
// Each partition moves through these phases:
//   - awaiting: a command was sent to the follower replica (an
//     AppendReplicated, TruncateDiverging or ResetToLeaderStart; a newly
//     followed partition gets a zero-record AppendReplicated, the probe)
//     and its ReplicaPosition, the next fetch position, is awaited. An
//     answer that does not come within RequestTimeout is given up on and
//     the partition probed again.
//   - ready: its position is known; the next Fetch carries it.
//   - fetching: it is in the Fetch in flight.
//   - delayed: a failure that may clear by itself (a storage error on
//     either side, OFFSET_OUT_OF_RANGE without the offsets to act on):
//     probed again after BackoffMs.
//   - paused: an epoch or leadership disagreement: FENCED_LEADER_EPOCH
//     from the leader, or FENCED_LEADER_EPOCH / NOT_LEADER_OR_FOLLOWER from
//     the follower replica, waits for a Follow with a newer epoch;
//     NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH and
//     UNKNOWN_TOPIC_OR_PARTITION from the leader (whose metadata may lag
//     this node's) and UNKNOWN_LEADER_EPOCH from the follower (which has
//     not seen its BecomeFollower yet) are also retried, since no newer
//     Follow may ever come for them: after laggingRetryMs, doubling with
//     each such answer in a row up to BackoffMs (Kafka's fetcher waits
//     BackoffMs at once).
//
// One Fetch is in flight at a time. The next one goes out once the
// previous one is answered, the fetcher's backoff after a failed Fetch has
// passed, and the partitions the last step sent commands to have answered
// (so that they ride in it rather than wait out a whole long poll), or
// MaxWaitMs has passed since those commands. Partitions that returned
// records move to the end of the fetch order, so a response's max bytes
// serves every partition in turn.
type State struct {
	cfg   Config
	parts map[PartitionRef]*part
	// order is the fetch order.
	order []PartitionRef
	// awaiting maps the ID of each command awaiting its answer to its
	// partition.
	awaiting map[uint64]PartitionRef
	nextID   uint64
	counts   [numPhases]int
	// fetch is the Fetch in flight, nil if none.
	fetch *inflight
	// backoffUntilMs holds the next Fetch after a failed one.
	backoffUntilMs int64
	// round counts the Fetches sent; roundAwaiting is the number of
	// partitions awaiting the answer to a command sent since the last one,
	// which hold the next Fetch until holdUntilMs.
	round         uint64
	roundAwaiting int
	holdUntilMs   int64
	// wakeAtMs is no later than the earliest deadline held (0: none);
	// OnTick recomputes it exactly.
	wakeAtMs int64
	// fetchError is the last Fetch's failure, "" after a success.
	fetchError string
	// session is the incremental fetch session with the leader
	// (session.go).
	session fetchSession
	// preempt is set when a newly followed partition became ready while
	// a Fetch was in flight (see next).
	preempt bool
}

// phase is where a partition is (see State).
type phase uint8

const (
	phaseAwaiting phase = iota
	phaseReady
	phaseFetching
	phaseDelayed
	phasePaused
	numPhases
)

// part is one followed partition.
type part struct {
	ref         PartitionRef
	topic       string
	leaderEpoch int32
	replica     *partition.Client
	phase       phase
	// fetchOffset and lastFetchedEpoch are the follower's last answer;
	// fetchOffset is -1 until it has answered.
	fetchOffset      int64
	lastFetchedEpoch int32
	// probeOffset is what a probe names as the fetch offset before the
	// follower has answered (its status's log end offset).
	probeOffset int64
	// sentHW and sentLogStart are the leader's high watermark and log
	// start offset as the follower last heard them (at first its own).
	sentHW, sentLogStart int64
	// awaitID, sentMs and round are the command awaiting its answer
	// (awaiting).
	awaitID uint64
	sentMs  int64
	round   uint64
	// fetchID is the Fetch it is in (fetching).
	fetchID uint64
	// retryAtMs is when a delayed or paused partition is probed again
	// (0: a paused one waits for a newer Follow only).
	retryAtMs int64
	lastError string
	// preempts is set by a Follow that added or replaced the partition,
	// until its probe's answer.
	preempts bool
	// lagged counts the answers in a row that said the other side has not
	// caught up with this epoch yet (lagRetryAt).
	lagged int
}

// laggingRetryMs is the first retry after an answer saying that the
// leader's metadata, or the follower replica, has not caught up with the
// epoch of this node's Follow yet: the nodes apply one metadata log, so
// it is a matter of milliseconds. The wait doubles with each such answer
// in a row, up to BackoffMs (Kafka waits replica.fetch.backoff.ms, a
// second, at once, which holds acks=all writes on a new leader back for
// as long).
const laggingRetryMs = 20

// lagRetryAt is when p, lagging for another answer, is retried.
func (s *State) lagRetryAt(p *part, nowMs int64) int64 {
	wait := int64(s.cfg.BackoffMs)
	if p.lagged < 16 {
		wait = min(wait, int64(laggingRetryMs)<<p.lagged)
	}
	p.lagged++
	return nowMs + wait
}

// inflight is the Fetch in flight and what it asked for.
type inflight struct {
	id   uint64
	sent []sentPartition
	// session is what the Fetch asked of the fetch session.
	session *sessionBuild
}

// sentPartition is one partition of the Fetch in flight.
type sentPartition struct {
	ref         PartitionRef
	topic       string
	fetchOffset int64
}

// topicPartition keys a response's partitions.
type topicPartition struct {
	topic     string
	partition int32
}

// FollowItem is one partition of a Follow with its follower replica's
// status as the shell read it (Client.Status): a probe names its log end
// offset, high watermark and log start offset, so that whatever the
// replica makes of the probe changes nothing.
type FollowItem struct {
	Followed
	Status partition.Status
}

// Command is a message for one follower replica; exactly one of Append,
// Truncate and Reset is set. Its ReplicaPosition goes to the fetcher.
type Command struct {
	Replica  *partition.Client
	Append   *partition.AppendReplicated
	Truncate *partition.TruncateDiverging
	Reset    *partition.ResetToLeaderStart
}

// Send sends the command with replyTo as the sender.
func (c Command) Send(replyTo *actor.PID) {
	switch {
	case c.Append != nil:
		c.Replica.SendAppendReplicated(c.Append, replyTo)
	case c.Truncate != nil:
		c.Replica.SendTruncateDiverging(c.Truncate, replyTo)
	case c.Reset != nil:
		c.Replica.SendResetToLeaderStart(c.Reset, replyTo)
	}
}

// FetchRequest is a Fetch to send; its outcome goes back with ID
// (OnFetchResponse, OnFetchError).
type FetchRequest struct {
	ID      uint64
	Request *kmsg.FetchRequest
}

// Output is what one step asks of the shell: send Commands, send Fetch
// (if set), and call OnTick at WakeAtMs (0: nothing to wake for; a
// WakeAtMs replaces the previous one).
type Output struct {
	Commands []Command
	// Abandon is the Fetch in flight given up on (0: none): the shell
	// ends it and closes its connection before it sends Fetch, and drops
	// its outcome.
	Abandon  uint64
	Fetch    *FetchRequest
	WakeAtMs int64
}

// NewState returns the decision logic for cfg (zero fields defaulted as
// Spawn does).
func NewState(cfg Config) *State {
	return &State{
		cfg:      cfg.withDefaults(),
		parts:    map[PartitionRef]*part{},
		awaiting: map[uint64]PartitionRef{},
	}
}

// Follow adds or updates partitions (see the Follow message) and probes
// each new or replaced one.
func (s *State) Follow(items []FollowItem, nowMs int64) Output {
	var out Output
	for _, it := range items {
		if it.Replica == nil {
			continue
		}
		ref := it.Ref()
		p, ok := s.parts[ref]
		switch {
		case !ok:
			p = &part{ref: ref, phase: phaseReady, fetchOffset: -1, lastFetchedEpoch: -1}
			s.parts[ref] = p
			s.order = append(s.order, ref)
			s.counts[phaseReady]++
		case it.LeaderEpoch < p.leaderEpoch, it.LeaderEpoch == p.leaderEpoch && it.Replica == p.replica:
			continue
		}
		p.topic, p.leaderEpoch, p.replica = it.Topic, it.LeaderEpoch, it.Replica
		p.fetchOffset, p.lastFetchedEpoch = -1, -1
		p.probeOffset, p.sentHW, p.sentLogStart = it.Status.LogEndOffset, it.Status.HighWatermark, it.Status.LogStartOffset
		p.lastError, p.preempts = "", true
		s.probe(p, nowMs, &out)
	}
	s.next(nowMs, &out)
	return out
}

// Unfollow removes partitions.
func (s *State) Unfollow(refs []PartitionRef, nowMs int64) Output {
	removed := false
	for _, ref := range refs {
		p, ok := s.parts[ref]
		if !ok {
			continue
		}
		s.leave(p)
		delete(s.awaiting, p.awaitID)
		delete(s.parts, ref)
		removed = true
	}
	if removed {
		s.order = slices.DeleteFunc(s.order, func(ref PartitionRef) bool { return s.parts[ref] == nil })
	}
	var out Output
	s.next(nowMs, &out)
	return out
}

// OnPosition takes a follower replica's answer to a command.
func (s *State) OnPosition(m *partition.ReplicaPosition, nowMs int64) Output {
	var out Output
	ref, ok := s.awaiting[m.ID]
	if ok {
		delete(s.awaiting, m.ID)
		if p := s.parts[ref]; p != nil && p.phase == phaseAwaiting && p.awaitID == m.ID {
			s.onPosition(p, m, nowMs)
		}
	}
	s.next(nowMs, &out)
	return out
}

// onPosition applies an awaited answer.
func (s *State) onPosition(p *part, m *partition.ReplicaPosition, nowMs int64) {
	switch m.ErrorCode {
	case 0:
		p.fetchOffset, p.lastFetchedEpoch = m.FetchOffset, m.LastFetchedEpoch
		s.setPhase(p, phaseReady)
		if p.preempts {
			p.preempts = false
			s.preempt = s.fetch != nil
		}
	case kerr.FencedLeaderEpoch.Code, kerr.NotLeaderForPartition.Code:
		// The replica has moved on to a newer epoch, or leads: only a
		// newer Follow (or an Unfollow) helps.
		s.pause(p, 0, replicaError(m.ErrorCode))
	case kerr.UnknownLeaderEpoch.Code:
		// The replica has not seen the epoch yet: it soon will.
		s.pause(p, s.lagRetryAt(p, nowMs), replicaError(m.ErrorCode))
	default:
		s.delay(p, nowMs, replicaError(m.ErrorCode))
	}
}

// OnFetchResponse takes the answer to the Fetch with id and turns each
// of its partitions into a command or a phase.
func (s *State) OnFetchResponse(id uint64, resp *kmsg.FetchResponse, nowMs int64) Output {
	if s.fetch == nil || s.fetch.id != id {
		var out Output
		s.next(nowMs, &out)
		return out
	}
	if sessionError(resp.ErrorCode) {
		return s.onSessionError(resp.ErrorCode, nowMs)
	}
	if resp.ErrorCode != 0 {
		return s.OnFetchError(id, fmt.Errorf("fetch from leader: %w", kerr.ErrorForCode(resp.ErrorCode)), nowMs)
	}
	fl := s.fetch
	s.fetch, s.fetchError = nil, ""
	s.session.onResponse(fl.session, 0, resp.SessionID)
	got := make(map[topicPartition]*kmsg.FetchResponseTopicPartition, len(fl.sent))
	for ti := range resp.Topics {
		t := &resp.Topics[ti]
		for pi := range t.Partitions {
			got[topicPartition{t.Topic, t.Partitions[pi].Partition}] = &t.Partitions[pi]
		}
	}
	var out Output
	var moved map[PartitionRef]bool
	for _, sp := range fl.sent {
		p := s.parts[sp.ref]
		if p == nil || p.phase != phaseFetching || p.fetchID != id {
			continue // unfollowed or replaced meanwhile
		}
		rp := got[topicPartition{sp.topic, sp.ref.Partition}]
		if rp == nil {
			s.setPhase(p, phaseReady) // not answered: asked again
			continue
		}
		if rp.ErrorCode == 0 && len(rp.RecordBatches) > 0 {
			if moved == nil {
				moved = map[PartitionRef]bool{}
			}
			moved[sp.ref] = true
		}
		s.onPartition(p, sp, rp, nowMs, &out)
	}
	if len(moved) > 0 {
		// Kafka's rotation: partitions that got data go last.
		slices.SortStableFunc(s.order, func(a, b PartitionRef) int {
			return cmp.Compare(b2i(moved[a]), b2i(moved[b]))
		})
	}
	s.next(nowMs, &out)
	return out
}

// b2i orders false before true.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// onPartition decides what one response partition becomes.
func (s *State) onPartition(p *part, sp sentPartition, rp *kmsg.FetchResponseTopicPartition, nowMs int64, out *Output) {
	switch rp.ErrorCode {
	case 0:
		p.lastError, p.lagged = "", 0
		switch {
		case rp.DivergingEpoch.Epoch >= 0 && rp.DivergingEpoch.EndOffset >= 0:
			s.command(p, nowMs, out, Command{Truncate: &partition.TruncateDiverging{
				LeaderEpoch: p.leaderEpoch, Epoch: rp.DivergingEpoch.Epoch, EndOffset: rp.DivergingEpoch.EndOffset,
			}})
		case len(rp.RecordBatches) > 0 || rp.HighWatermark != p.sentHW || rp.LogStartOffset != p.sentLogStart:
			// Records, or news of the high watermark or log start the
			// follower must hear (zero records then).
			p.sentHW, p.sentLogStart = rp.HighWatermark, rp.LogStartOffset
			s.command(p, nowMs, out, Command{Append: &partition.AppendReplicated{
				LeaderEpoch: p.leaderEpoch, FetchOffset: sp.fetchOffset, Records: rp.RecordBatches,
				LeaderHighWatermark: rp.HighWatermark, LeaderLogStartOffset: rp.LogStartOffset, NowMs: nowMs,
			}})
		default:
			s.setPhase(p, phaseReady)
		}
	case kerr.OffsetOutOfRange.Code:
		s.outOfRange(p, sp, rp, nowMs, out)
	case kerr.FencedLeaderEpoch.Code:
		// This node's epoch is older than the leader's: the newer Follow
		// is on its way.
		s.pause(p, 0, leaderError(rp.ErrorCode))
	case kerr.NotLeaderForPartition.Code, kerr.UnknownLeaderEpoch.Code, kerr.UnknownTopicOrPartition.Code:
		// The leader's metadata may lag this node's: retried soon, then
		// less and less often, unless a newer Follow comes first.
		s.pause(p, s.lagRetryAt(p, nowMs), leaderError(rp.ErrorCode))
	default:
		s.delay(p, nowMs, leaderError(rp.ErrorCode))
	}
}

// outOfRange handles OFFSET_OUT_OF_RANGE from the response's offsets: a
// fetch offset below the leader's log start offset restarts the follower
// there; one above the leader's high watermark (the leader's log end
// offset is not in the response, and the high watermark is no higher)
// truncates it to that high watermark: what the leader has above it is
// fetched again. Otherwise the partition is retried after the backoff.
func (s *State) outOfRange(p *part, sp sentPartition, rp *kmsg.FetchResponseTopicPartition, nowMs int64, out *Output) {
	reset := &partition.ResetToLeaderStart{LeaderEpoch: p.leaderEpoch, LogStartOffset: rp.LogStartOffset, LeaderLogEndOffset: -1}
	switch {
	case rp.LogStartOffset >= 0 && sp.fetchOffset < rp.LogStartOffset:
	case rp.HighWatermark >= 0 && sp.fetchOffset > rp.HighWatermark:
		reset.LeaderLogEndOffset = rp.HighWatermark
	default:
		s.delay(p, nowMs, leaderError(rp.ErrorCode))
		return
	}
	p.lastError = leaderError(rp.ErrorCode)
	p.sentHW, p.sentLogStart = rp.HighWatermark, rp.LogStartOffset
	s.command(p, nowMs, out, Command{Reset: reset})
}

// onSessionError takes a fetch session error of the Fetch in flight: the
// session is dropped and its partitions are fetched again at once, in a
// full Fetch (which never gets a session error).
func (s *State) onSessionError(code int16, nowMs int64) Output {
	fl := s.fetch
	s.fetch = nil
	s.session.reset()
	for _, sp := range fl.sent {
		if p := s.parts[sp.ref]; p != nil && p.phase == phaseFetching && p.fetchID == fl.id {
			s.setPhase(p, phaseReady)
		}
	}
	s.fetchError = leaderError(code)
	var out Output
	s.next(nowMs, &out)
	return out
}

// OnFetchError takes the failure of the Fetch with id (the connection's:
// the shell closes it and dials again for the next one): its partitions
// are asked again once BackoffMs has passed.
func (s *State) OnFetchError(id uint64, err error, nowMs int64) Output {
	var out Output
	if s.fetch != nil && s.fetch.id == id {
		fl := s.fetch
		s.fetch = nil
		s.fetchError = err.Error()
		s.session.reset()
		for _, sp := range fl.sent {
			if p := s.parts[sp.ref]; p != nil && p.phase == phaseFetching && p.fetchID == id {
				p.lastError = s.fetchError
				s.setPhase(p, phaseReady)
			}
		}
		s.backoffUntilMs = nowMs + int64(s.cfg.BackoffMs)
		s.wakeBy(s.backoffUntilMs)
	}
	s.next(nowMs, &out)
	return out
}

// OnTick ends the waits whose time has come: backoffs, delays, retries
// and answers given up on.
func (s *State) OnTick(nowMs int64) Output {
	var out Output
	if s.wakeAtMs != 0 && nowMs >= s.wakeAtMs {
		s.wakeAtMs = 0
		timeout := s.cfg.RequestTimeout.Milliseconds()
		for _, ref := range s.order {
			p := s.parts[ref]
			switch {
			case (p.phase == phaseDelayed || p.phase == phasePaused) && p.retryAtMs > 0:
				if nowMs >= p.retryAtMs {
					s.probe(p, nowMs, &out)
				} else {
					s.wakeBy(p.retryAtMs)
				}
			case p.phase == phaseAwaiting:
				if nowMs >= p.sentMs+timeout {
					p.lastError = fmt.Sprintf("no answer from the follower replica in %v", s.cfg.RequestTimeout)
					s.probe(p, nowMs, &out)
				} else {
					s.wakeBy(p.sentMs + timeout)
				}
			}
		}
		if s.backoffUntilMs > nowMs {
			s.wakeBy(s.backoffUntilMs)
		}
		if s.roundAwaiting > 0 && s.holdUntilMs > nowMs {
			s.wakeBy(s.holdUntilMs)
		}
	}
	s.next(nowMs, &out)
	return out
}

// probe asks the follower replica for its position with a zero-record
// AppendReplicated at what this state takes for its position, which
// appends nothing and tells it nothing new.
func (s *State) probe(p *part, nowMs int64, out *Output) {
	offset := p.fetchOffset
	if offset < 0 {
		offset = p.probeOffset
	}
	s.command(p, nowMs, out, Command{Append: &partition.AppendReplicated{
		LeaderEpoch: p.leaderEpoch, FetchOffset: offset,
		LeaderHighWatermark: p.sentHW, LeaderLogStartOffset: p.sentLogStart, NowMs: nowMs,
	}})
}

// command sends c to p's replica with a new ID and awaits the answer.
func (s *State) command(p *part, nowMs int64, out *Output, c Command) {
	delete(s.awaiting, p.awaitID)
	s.nextID++
	id := s.nextID
	switch {
	case c.Append != nil:
		c.Append.ID = id
	case c.Truncate != nil:
		c.Truncate.ID = id
	case c.Reset != nil:
		c.Reset.ID = id
	}
	c.Replica = p.replica
	out.Commands = append(out.Commands, c)
	s.awaiting[id] = p.ref
	s.setPhase(p, phaseAwaiting)
	p.awaitID, p.sentMs, p.retryAtMs, p.round = id, nowMs, 0, s.round
	s.roundAwaiting++
	s.holdUntilMs = nowMs + int64(s.cfg.MaxWaitMs)
	s.wakeBy(s.holdUntilMs)
	s.wakeBy(nowMs + s.cfg.RequestTimeout.Milliseconds())
}

// delay retries p after the backoff.
func (s *State) delay(p *part, nowMs int64, why string) {
	p.lastError = why
	p.retryAtMs = nowMs + int64(s.cfg.BackoffMs)
	s.setPhase(p, phaseDelayed)
	s.wakeBy(p.retryAtMs)
}

// pause holds p until a newer Follow, or until retryAtMs when > 0.
func (s *State) pause(p *part, retryAtMs int64, why string) {
	p.lastError = why
	p.retryAtMs = retryAtMs
	s.setPhase(p, phasePaused)
	if retryAtMs > 0 {
		s.wakeBy(retryAtMs)
	}
}

// setPhase moves p to ph, keeping the counts.
func (s *State) setPhase(p *part, ph phase) {
	s.leave(p)
	p.phase = ph
	s.counts[ph]++
}

// leave takes p out of the counts of its phase.
func (s *State) leave(p *part) {
	s.counts[p.phase]--
	if p.phase == phaseAwaiting && p.round == s.round {
		s.roundAwaiting--
	}
}

// wakeBy makes sure OnTick is called no later than atMs.
func (s *State) wakeBy(atMs int64) {
	if s.wakeAtMs == 0 || atMs < s.wakeAtMs {
		s.wakeAtMs = atMs
	}
}

// next sends the next Fetch when it may go (see State) and sets the
// wake-up time.
func (s *State) next(nowMs int64, out *Output) {
	held := s.roundAwaiting > 0 && nowMs < s.holdUntilMs
	if s.preempt && !held {
		// A newly followed partition (a leadership that just moved to
		// this fetcher's leader) would otherwise wait out the long poll
		// in flight, up to MaxWaitMs, before the leader hears its
		// position: the new leader's high watermark, and its acks=all
		// writes, wait for it. The Fetch in flight is given up on and
		// its partitions fetched again at once with the new ones.
		s.preempt = false
		if fl := s.fetch; fl != nil {
			s.fetch = nil
			s.session.abandon()
			for _, sp := range fl.sent {
				if p := s.parts[sp.ref]; p != nil && p.phase == phaseFetching && p.fetchID == fl.id {
					s.setPhase(p, phaseReady)
				}
			}
			out.Abandon = fl.id
		}
	}
	if s.fetch == nil && nowMs >= s.backoffUntilMs && !held && s.counts[phaseReady] > 0 {
		out.Fetch = s.buildFetch()
	}
	out.WakeAtMs = s.wakeAtMs
}

// buildFetch builds a Fetch of every ready partition, in fetch order.
func (s *State) buildFetch() *FetchRequest {
	s.nextID++
	fl := &inflight{id: s.nextID}
	// Answers still awaited from before hold nothing from now on.
	s.round++
	s.roundAwaiting = 0
	req := kmsg.NewPtrFetchRequest()
	req.Version = FetchVersion
	req.ReplicaID = s.cfg.NodeID
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = s.cfg.MaxWaitMs, s.cfg.MinBytes, s.cfg.MaxBytes
	req.IsolationLevel = 0 // read_uncommitted
	var ready []readyPart
	for _, ref := range s.order {
		if p := s.parts[ref]; p.phase == phaseReady {
			ready = append(ready, readyPart{ref: ref, sessionPart: sessionPart{
				topic: p.topic, fetchOffset: p.fetchOffset, lastFetchedEpoch: p.lastFetchedEpoch, leaderEpoch: p.leaderEpoch}})
		}
	}
	fl.session = s.session.build(ready)
	req.SessionID, req.SessionEpoch = fl.session.id, fl.session.epoch
	for _, f := range fl.session.forgotten {
		if n := len(req.ForgottenTopics); n == 0 || req.ForgottenTopics[n-1].Topic != f.topic {
			t := kmsg.NewFetchRequestForgottenTopic()
			t.Topic = f.topic
			req.ForgottenTopics = append(req.ForgottenTopics, t)
		}
		t := &req.ForgottenTopics[len(req.ForgottenTopics)-1]
		t.Partitions = append(t.Partitions, f.ref.Partition)
	}
	for _, r := range ready {
		ref, p := r.ref, s.parts[r.ref]
		fl.sent = append(fl.sent, sentPartition{ref: ref, topic: p.topic, fetchOffset: p.fetchOffset})
		p.fetchID = fl.id
		s.setPhase(p, phaseFetching)
		if !fl.session.include[ref] {
			continue // in the session at this position: left out
		}
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != p.topic {
			t := kmsg.NewFetchRequestTopic()
			t.Topic = p.topic
			req.Topics = append(req.Topics, t)
		}
		t := &req.Topics[len(req.Topics)-1]
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch = ref.Partition, p.leaderEpoch
		rp.FetchOffset, rp.LastFetchedEpoch = p.fetchOffset, p.lastFetchedEpoch
		rp.LogStartOffset, rp.PartitionMaxBytes = -1, s.cfg.PartitionMaxBytes
		t.Partitions = append(t.Partitions, rp)
	}
	s.fetch = fl
	return &FetchRequest{ID: fl.id, Request: req}
}

// Settled reports whether every command sent since the last Fetch has
// been answered: the shell publishes positions then, not after each
// answer of a round.
func (s *State) Settled() bool { return s.roundAwaiting == 0 }

// Positions returns every partition's position, by topic id and
// partition.
func (s *State) Positions() []Position {
	ps := make([]Position, 0, len(s.parts))
	for _, p := range s.parts {
		pos := Position{
			TopicID: p.ref.TopicID, Partition: p.ref.Partition,
			FetchOffset: p.fetchOffset, LastFetchedEpoch: p.lastFetchedEpoch, LeaderEpoch: p.leaderEpoch,
			LastError: p.lastError, Paused: p.phase == phasePaused,
		}
		ps = append(ps, pos)
	}
	slices.SortFunc(ps, func(a, b Position) int {
		if c := slices.Compare(a.TopicID[:], b.TopicID[:]); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
	return ps
}

// FetchError is the last Fetch's failure, "" after a success.
func (s *State) FetchError() string { return s.fetchError }

// leaderError describes a Kafka error from the leader.
func leaderError(code int16) string {
	return fmt.Sprintf("leader: %v", kerr.ErrorForCode(code))
}

// replicaError describes a Kafka error from the follower replica.
func replicaError(code int16) string {
	return fmt.Sprintf("follower replica: %v", kerr.ErrorForCode(code))
}
