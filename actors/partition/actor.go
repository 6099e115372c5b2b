package partition

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/actors/stopped"
	"github.com/weirmq/weir/internal/kafkaerr"
	"github.com/weirmq/weir/log"
)

// ErrNotStarted is returned by the facade when the actor could not rebuild
// its state from the log; it is wrapped with detail.
var ErrNotStarted = errors.New("partition: actor not started")

// ErrUnexpectedReply is an answer of the wrong type; wrapped with detail.
var ErrUnexpectedReply = errors.New("partition: unexpected reply")

// defaultRequestTimeout bounds a facade request whose context has no
// deadline.
const defaultRequestTimeout = 30 * time.Second

// ActorConfig is what the partition actor is built from.
type ActorConfig struct {
	// Log is the partition's opened log (log.Manager.OpenLog). The actor
	// does not close it: the Manager does.
	Log *log.Log
	// Replica holds the decision logic's settings.
	Replica Config
	// Now is the clock; nil means time.Now. Tests inject their own.
	Now func() time.Time
	// Logger receives the actor's warnings; nil means slog.Default().
	Logger *slog.Logger
	// LeaseValid, if set, tells whether the node may act as a leader
	// (cluster.Node.LeaseValid): a leader refuses appends without it.
	LeaseValid func() bool
	// Board, if set, is where the actor publishes its status; Spawn sets
	// it. A Board must be used by one actor at a time.
	Board *Board
	// ProposeISR receives the leader's ISR proposals (the cluster batches
	// them into AlterPartition requests). It is called from the actor and
	// must not block; nil: the leader never proposes.
	ProposeISR func(ISRChange)
}

// Board is the partition's published state, readable from any goroutine
// without asking the actor: an immutable Status swapped in after every step
// that changes it, and counters.
type Board struct {
	status  atomic.Pointer[Status]
	unknown atomic.Uint64
	timers  atomic.Bool
	// tickAtMs is when the actor next needs a Tick (its clock, ms; 0:
	// never), for the node's ticker (TickDue).
	tickAtMs atomic.Int64
	// watchers are signalled after each status change (status_watch.go).
	watchers statusWatchers
	storage  storageHealth // storage_health.go
	// stopped is set once the actor is stopping; gone is the code it then
	// answers with (gone.go).
	stopped atomic.Bool
	gone    atomic.Int32
	// mailbox is the actor's mailbox (an actor.Mailbox), for Queued.
	mailbox atomic.Value
}

// NeedsTicks reports whether the actor holds something with a deadline
// (an acks=all wait, a parked read or watch), so that the node's ticker
// should tick it at its fast rate; an idle partition needs only the slow
// ticks that drive producer expiry.
func (b *Board) NeedsTicks() bool { return b.timers.Load() }

// TickDue reports whether the actor needs a Tick at nowMs (its clock, in
// ms): it needs the fast ticks (NeedsTicks), or a deadline of its replica
// (Replica.NextTickMs) has come. A partition with neither is skipped by
// the node's ticker.
func (b *Board) TickDue(nowMs int64) bool {
	if b.timers.Load() {
		return true
	}
	at := b.tickAtMs.Load()
	return at != 0 && at <= nowMs
}

// Status returns the last published status (the zero Status before the
// actor has started).
func (b *Board) Status() Status {
	if s := b.status.Load(); s != nil {
		return *s
	}
	return Status{}
}

// UnknownMessages counts the messages the actor did not understand.
func (b *Board) UnknownMessages() uint64 { return b.unknown.Load() }

// pendingReply is where a request's answer goes: the requester's PID and
// the ID it chose, which the shell replaces with its own unique ID while
// the request is in the replica.
type pendingReply struct {
	to       *actor.PID
	callerID uint64
}

// partitionActor is the thin shell around Replica: it rebuilds the state
// from the log, steps messages in mailbox order and performs each Output
// (see the package doc's duties).
type partitionActor struct {
	cfg      ActorConfig
	log      *slog.Logger
	now      func() time.Time
	board    *Board
	r        *Replica
	startErr error
	nextID   uint64
	pending  map[uint64]pendingReply
	// handOverTo is the sender of the last HandOver (a planned move).
	handOverTo *actor.PID
	system     *actor.ActorSystem
	self       *actor.PID
	// parked are long-poll reads; tickMs is the last Tick's time, which
	// their deadlines are checked against.
	parked []*parkedRead
	tickMs int64
	// watches are parked WatchHighWatermark requests.
	watches map[watchKey]*parkedWatch
	// snaps writes producer snapshots; snapOffset is the offset of the
	// last one taken (or loaded), segBase the active segment's base
	// offset after the last append, replay how the state was rebuilt.
	snaps      *snapshotWriter
	snapOffset int64
	segBase    int64
	replay     replayInfo
	// deletes are DeleteRecords running off the mailbox (admin.go), on
	// the deleting goroutines.
	deletes    map[uint64]pendingDelete
	nextDelete uint64
	deleting   sync.WaitGroup
	// startRequested is the highest log start offset a follower asked
	// its log to move to (replication_actor.go).
	startRequested int64
	// sessions are the followers' fetch sessions that hold this
	// partition, by replica id (follower_session.go).
	sessions map[int32]*FollowerSession
}

// Props returns the props of a partition actor over cfg.Log, in system.
// Its mailbox answers the requests it holds when the actor stops (gone.go);
// send through Client, which reaches that mailbox even after the stop,
// rather than through the PID. Requests
// (*AppendBatches, *ReadRecords) are answered to their sender: send them
// with Request or RequestFuture (a plain Send gets no answer). The answer
// to an AppendBatches carries the sender's own ID; the actor owns the
// message's Records from then on (the log rewrites them in place).
// Leadership comes from outside with *BecomeLeader / *BecomeFollower, time
// with *Tick (NowMs 0: the actor's clock). A supervisor restart rebuilds
// the state from the log; requests in flight are then lost.
func Props(system *actor.ActorSystem, cfg ActorConfig) *actor.Props {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Board == nil {
		cfg.Board = &Board{}
	}
	board := cfg.Board
	return actor.PropsFromProducer(func() actor.Actor {
		return &partitionActor{
			cfg: cfg, now: cfg.Now, board: cfg.Board,
			log:     cfg.Logger.With("partition", cfg.Log.TopicPartition().String()),
			pending: map[uint64]pendingReply{},
		}
	}, actor.WithMailbox(func() actor.Mailbox {
		mb := stopped.Mailbox(system, board.answerGone)()
		board.mailbox.Store(mb)
		return mb
	}))
}

// Receive dispatches one message. It never blocks on another actor or on
// an fsync: flush completions come back as FlushCompleted messages.
func (a *partitionActor) Receive(ctx actor.Context) {
	defer a.publishTimers()
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.onStarted(ctx)
	case *actor.Stopping:
		a.onStopping(ctx)
	case *actor.Restarting:
		if a.snaps != nil {
			a.snaps.wait() // the next incarnation lists the snapshots
		}
	case *actor.Stopped:
	case *AppendBatches:
		a.onAppendBatches(ctx, m)
	case *FlushCompleted:
		a.board.noteStorage(a.log, storageFlush, m.Err)
		a.step(ctx, func(r *Replica) Output { return r.OnFlushCompleted(m) })
	case *Tick:
		t := *m
		if t.NowMs == 0 {
			t.NowMs = a.now().UnixMilli()
		}
		a.tickMs = max(a.tickMs, t.NowMs)
		a.checkHeldLease(ctx)
		a.step(ctx, func(r *Replica) Output { return r.OnTick(&t) })
		a.wakeWatches(ctx, true, false)
	case *BecomeLeader:
		a.checkHeldLease(ctx)
		a.step(ctx, func(r *Replica) Output { return r.BecomeLeader(m) })
	case *BecomeFollower:
		a.step(ctx, func(r *Replica) Output { return r.BecomeFollower(m) })
	case *ReadRecords:
		a.onReadRecords(ctx, m)
	case *WatchHighWatermark:
		a.onWatch(ctx, m)
	case *CancelWatch:
		a.onCancelWatch(m)
	case *DeleteRecords:
		a.onDeleteRecords(ctx, m)
	case *recordsDeleted:
		a.onRecordsDeleted(ctx, m)
	case *Reconfigure:
		a.onReconfigure(ctx, m)
	case *DescribeProducers:
		a.onDescribeProducers(ctx, m)
	case *SyncStatus:
		a.onSyncStatus(ctx, m)
	case *AppendReplicated:
		a.onAppendReplicated(ctx, m)
	case *TruncateDiverging:
		a.onTruncateDiverging(ctx, m)
	case *ResetToLeaderStart:
		a.onResetToLeaderStart(ctx, m)
	case *FollowerFetched:
		a.onFollowerFetched(ctx, m)
	case *FollowerLeftSession:
		if a.sessions[m.ReplicaID] == m.Session {
			delete(a.sessions, m.ReplicaID)
		}
	case *ISRChangeRefused:
		a.step(ctx, func(r *Replica) Output { return r.OnISRChangeRefused(m) })
	case *HandOver:
		a.handOverTo = ctx.Sender()
		a.step(ctx, func(r *Replica) Output { return r.OnHandOver(m) })
	case *HandOverCancel:
		a.checkHeldLease(ctx)
		a.step(ctx, func(r *Replica) Output { return r.OnHandOverCancel(m) })
	default:
		a.board.unknown.Add(1)
		a.log.Warn("partition actor: unknown message", "type", fmt.Sprintf("%T", m))
	}
}

// onStarted rebuilds the replica from the log (duty 1): the producer state
// from the newest usable snapshot plus the batch headers after it, and the
// high watermark at the log start offset, the only offset known to be
// committed (no high-watermark checkpoint is kept): a leader moves it up as
// soon as its ISR allows (at once for a single replica, to its log end or
// flushed offset), a follower from its leader's.
func (a *partitionActor) onStarted(ctx actor.Context) {
	a.system, a.self = ctx.ActorSystem(), ctx.Self()
	l := a.cfg.Log
	a.snaps = &snapshotWriter{fsys: l.FS(), dir: l.Dir(), logger: a.log}
	r, info, err := rebuild(a.cfg, a.log)
	if err != nil {
		a.startErr = err
		a.log.Error("partition actor: rebuilding state from the log", "err", err)
		return
	}
	a.log.Debug("partition actor: producer state rebuilt", "snapshot", info.snapshot, "batches", info.batches)
	a.r = r
	a.replay = info
	a.segBase = l.ActiveSegmentBase()
	a.snapOffset = info.snapshot
	a.publish()
}

// rebuild recovers the producer state from the snapshots and the log and
// creates the replica.
func rebuild(cfg ActorConfig, logger *slog.Logger) (*Replica, replayInfo, error) {
	l := cfg.Log
	ps, info, err := recoverProducerState(l, logger)
	if err != nil {
		return nil, info, err
	}
	end, start := l.LogEndOffset(), l.LogStartOffset()
	r, err := NewReplica(cfg.Replica, Start{
		LogStartOffset: start, LogEndOffset: end, FlushedOffset: l.FlushedOffset(),
		HighWatermark: start, Producers: ps, LatestEpoch: l.LatestEpoch(),
	})
	if err != nil {
		return nil, info, fmt.Errorf("partition: creating replica for %s: %w", l.TopicPartition(), err)
	}
	r.noProposals = cfg.ProposeISR == nil
	return r, info, nil
}

// snapshotProducers schedules a producer snapshot at the state's end
// offset (duty 9), unless one was already taken there or the log holds
// nothing to replay (an empty log: no fsync for idle new partitions). The
// encoding runs here (it is small: a few dozen bytes per producer); the
// write and its fsync run on the snapshot writer's goroutine.
func (a *partitionActor) snapshotProducers() {
	ps := a.r.Producers()
	if off := ps.EndOffset(); off != a.snapOffset && off > a.r.Status().LogStartOffset {
		a.snapOffset = off
		a.snaps.write(off, ps.Snapshot())
	}
}

// checkRoll takes a producer snapshot when the last append rolled the log
// to a new segment, as Kafka does at every roll.
func (a *partitionActor) checkRoll() {
	if base := a.cfg.Log.ActiveSegmentBase(); base != a.segBase {
		a.segBase = base
		a.snapshotProducers()
	}
}

// onStopping answers every parked request NOT_LEADER_OR_FOLLOWER (or the
// Board's gone code) so no requester waits for its timeout; those still
// in the mailbox are answered by it (gone.go).
func (a *partitionActor) onStopping(ctx actor.Context) {
	a.board.stopped.Store(true)
	a.answerParkedReads(ctx)
	defer a.wakeWatches(ctx, false, true)
	a.answerPendingDeletes(ctx)
	if a.r == nil {
		return
	}
	st := a.r.Status()
	a.step(ctx, func(r *Replica) Output {
		out := r.BecomeFollower(&BecomeFollower{Leader: -1, LeaderEpoch: st.LeaderEpoch, PartitionEpoch: st.PartitionEpoch})
		r.answerPositions(&out, kerr.NotLeaderForPartition.Code)
		return out
	})
	// Clean shutdown: a snapshot at the log end, so the next start replays
	// nothing. Stopping may wait for its fsync.
	a.snapshotProducers()
	a.snaps.wait()
}

// onReconfigure applies new settings; an invalid Config is logged and
// the old one kept.
func (a *partitionActor) onReconfigure(ctx actor.Context, m *Reconfigure) {
	if a.r == nil {
		return
	}
	a.step(ctx, func(r *Replica) Output {
		out, err := r.Reconfigure(m.Config)
		if err != nil {
			a.log.Warn("partition actor: reconfigure refused", "err", err)
			return out
		}
		// A supervisor restart rebuilds with the new settings.
		a.cfg.Replica = m.Config
		a.cfg.Replica.NodeID = r.cfg.NodeID
		return out
	})
}

// onAppendBatches stamps the request with the clock and a unique ID,
// remembers where to answer, and steps it.
func (a *partitionActor) onAppendBatches(ctx actor.Context, m *AppendBatches) {
	if a.r == nil {
		a.reply(ctx, pendingReply{to: ctx.Sender(), callerID: m.ID}, &AppendBatchesResult{
			ID: m.ID, Acks: m.Acks, ErrorCode: kerr.KafkaStorageError.Code,
			ErrorMessage: fmt.Sprintf("partition not started: %v", a.startErr),
			BaseOffset:   -1, LogAppendTimeMs: -1, LogStartOffset: -1,
			CurrentLeader: LeaderHint{LeaderID: -1, LeaderEpoch: -1},
		})
		return
	}
	if a.cfg.LeaseValid != nil && a.r.role == Leader && !a.cfg.LeaseValid() {
		// The node's lease lapsed (docs/DESIGN.md "Leader lease"),
		// checked again here, where the append happens: another node may
		// lead by now.
		res := a.r.failure(m.ID, m.Acks, kerr.NotLeaderForPartition.Code, "the leader's lease lapsed")
		a.reply(ctx, pendingReply{to: ctx.Sender(), callerID: m.ID}, res)
		return
	}
	a.nextID++
	id := a.nextID
	a.pending[id] = pendingReply{to: ctx.Sender(), callerID: m.ID}
	req := *m
	req.ID, req.NowMs = id, a.now().UnixMilli()
	a.step(ctx, func(r *Replica) Output { return r.OnAppendBatches(&req) })
}

// checkHeldLease refuses the appends a rebalance's hand-over holds, and
// those waiting for their leadership (early.go), once the node's lease
// lapsed (LeaseLapsed), before a step that may run them:
// their lease was checked when they came (onAppendBatches), and they may
// have waited a second or more since.
func (a *partitionActor) checkHeldLease(ctx actor.Context) {
	if a.r == nil || a.cfg.LeaseValid == nil || !a.r.holdsAppends() || a.cfg.LeaseValid() {
		return
	}
	a.step(ctx, func(r *Replica) Output { return r.OnLeaseLapsed(&LeaseLapsed{}) })
}

// step applies one message to the replica and performs its Output and
// those of the LogAppended events it causes (duties 3 to 7).
func (a *partitionActor) step(ctx actor.Context, fn func(*Replica) Output) {
	if a.r == nil {
		return
	}
	// The sessions' fetches since the last step count first (duty: the
	// caught-up times are current before an append or a tick reads them).
	for id, s := range a.sessions {
		a.r.OnFollowerSessionFetched(id, s.LastFetchMs())
	}
	out := fn(a.r)
	for {
		// Publish first: a producer that hears of its append must find
		// its records readable (reads use the published status).
		a.publish()
		for _, rep := range out.Replies {
			if p, ok := a.pending[rep.ID]; ok {
				delete(a.pending, rep.ID)
				a.reply(ctx, p, rep)
			}
		}
		if upTo := out.FlushUpTo; upTo > 0 {
			system, self := a.system, a.self
			// Runs on the fsync goroutine (or here, at once): only send.
			a.cfg.Log.OnFlushed(upTo, func(err error) {
				system.Root.Send(self, &FlushCompleted{UpTo: upTo, Err: err})
			})
		}
		a.sendPositions(ctx, out.Positions)
		if len(out.ExpiredProducers) > 0 {
			a.log.Debug("partition actor: producers expired", "ids", out.ExpiredProducers)
		}
		if c := out.ProposeISR; c != nil && a.cfg.ProposeISR != nil {
			a.cfg.ProposeISR(*c)
		}
		if h := out.HandOverReady; h != nil && a.handOverTo != nil {
			ctx.Send(a.handOverTo, h)
		}
		if out.AdvanceLogStart > 0 {
			a.advanceFollowerStart(out.AdvanceLogStart)
		}
		if t := out.Truncate; t != nil {
			out = a.r.OnLogTruncated(a.truncate(t))
			continue
		}
		ap := out.Append
		if ap == nil {
			break
		}
		// A page-cache write: acceptable inside Receive (never an fsync).
		res, err := a.cfg.Log.Append(ap.Records, ap.Options)
		if err != nil {
			err = fmt.Errorf("partition: append to %s: %w", a.cfg.Log.TopicPartition(), err)
		}
		if err == nil || kafkaerr.StorageCode(err) == kerr.KafkaStorageError.Code {
			a.board.noteStorage(a.log, storageAppend, err)
		}
		out = a.r.OnLogAppended(&LogAppended{Seq: ap.Seq, Result: res, Err: err})
		if err == nil {
			a.checkRoll()
		}
	}
	a.publish()
	a.wakeReads(ctx)
	a.wakeWatches(ctx, false, false)
}

// reply sends res, with the requester's own ID, to the requester.
func (a *partitionActor) reply(ctx actor.Context, p pendingReply, res *AppendBatchesResult) {
	if p.to == nil {
		return // sent without a sender: nobody to answer
	}
	out := *res
	out.ID = p.callerID
	if out.ErrorCode == kerr.NotLeaderForPartition.Code && a.board.stopped.Load() {
		out.ErrorCode = a.board.goneCode() // waits the stop fails
	}
	ctx.Send(p.to, &out)
}

// publishTimers tells the node's ticker whether this actor has deadlines.
func (a *partitionActor) publishTimers() {
	need := len(a.parked) > 0 || len(a.watches) > 0 || (a.r != nil && a.r.HasWaiters())
	if a.board.timers.Load() != need {
		a.board.timers.Store(need)
	}
	var at int64
	if a.r != nil && !need {
		at = a.r.NextTickMs()
	}
	if a.board.tickAtMs.Load() != at {
		a.board.tickAtMs.Store(at)
	}
}

// publish swaps in a new Status if it changed, then signals the status
// watchers if what they wait for changed.
func (a *partitionActor) publish() {
	st := a.r.Status()
	old := a.board.status.Load()
	if old != nil && old.equal(&st) {
		return
	}
	a.board.status.Store(&st)
	if old == nil || old.watchedChange(&st) {
		a.board.watchers.signal()
	}
}

// Client is a typed facade over a partition actor for callers outside
// actors. Its methods block the calling goroutine (never call them from a
// Receive).
type Client struct {
	system *actor.ActorSystem
	pid    *actor.PID
	// proc is the actor's process, kept from the spawn: sends go to its
	// mailbox even once the actor is gone, where they are answered
	// (gone.go), never to dead letters.
	proc   actor.Process
	board  *Board
	log    *log.Log
	logger *slog.Logger // storage state changes seen by reads (storage_health.go)
}

// Spawn starts a partition actor in system and returns its facade. The
// caller sends BecomeLeader (Client.BecomeLeader) to make it accept
// appends.
func Spawn(system *actor.ActorSystem, cfg ActorConfig) *Client {
	if cfg.Board == nil {
		cfg.Board = &Board{}
	}
	pid := system.Root.Spawn(Props(system, cfg))
	proc, _ := system.ProcessRegistry.Get(pid)
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return &Client{system: system, pid: pid, proc: proc, board: cfg.Board, log: cfg.Log,
		logger: logger.With("partition", cfg.Log.TopicPartition().String())}
}

// PID returns the actor's PID, for actors that talk to it directly.
func (c *Client) PID() *actor.PID { return c.pid }

// Status returns the last published status without asking the actor.
func (c *Client) Status() Status { return c.board.Status() }

// NeedsTicks reports whether the actor has deadlines to tick (Board.NeedsTicks).
func (c *Client) NeedsTicks() bool { return c.board.NeedsTicks() }

// TickDue reports whether the actor needs a Tick at nowMs (Board.TickDue).
func (c *Client) TickDue(nowMs int64) bool { return c.board.TickDue(nowMs) }

// Queued returns the number of messages waiting in the actor's mailbox.
func (c *Client) Queued() int {
	if mb, ok := c.board.mailbox.Load().(actor.Mailbox); ok {
		return mb.UserMessageCount()
	}
	return 0
}

// UnknownMessages counts the messages the actor did not understand.
func (c *Client) UnknownMessages() uint64 { return c.board.UnknownMessages() }

// BecomeLeader tells the actor it leads the partition.
func (c *Client) BecomeLeader(m *BecomeLeader) { c.send(m) }

// BecomeFollower tells the actor it follows m.Leader.
func (c *Client) BecomeFollower(m *BecomeFollower) { c.send(m) }

// Reconfigure sends the replica new settings (see Reconfigure).
func (c *Client) Reconfigure(cfg Config) { c.send(&Reconfigure{Config: cfg}) }

// Tick sends the clock's reading (0: the actor's own clock).
func (c *Client) Tick(nowMs int64) { c.send(&Tick{NowMs: nowMs}) }

// send posts msg to the actor's mailbox without a sender.
func (c *Client) send(msg any) { c.proc.SendUserMessage(c.pid, msg) }

// sendFrom posts msg to the actor's mailbox with replyTo as the sender.
func (c *Client) sendFrom(msg any, replyTo *actor.PID) {
	c.proc.SendUserMessage(c.pid, &actor.MessageEnvelope{Message: msg, Sender: replyTo})
}

// StopDeleted stops the actor of a deleted partition: requests parked,
// queued or sent later are answered UNKNOWN_TOPIC_OR_PARTITION, as Kafka
// answers for a topic its metadata no longer holds.
func (c *Client) StopDeleted() error {
	c.board.gone.Store(int32(kerr.UnknownTopicOrPartition.Code))
	return c.Stop()
}

// Stop stops the actor and waits until it has stopped; parked requests are
// answered NOT_LEADER_OR_FOLLOWER first (see StopDeleted), and those still
// queued or sent later are answered so too by its mailbox.
func (c *Client) Stop() error {
	if err := c.system.Root.StopFuture(c.pid).Wait(); err != nil {
		return fmt.Errorf("partition: stopping %s: %w", c.pid, err)
	}
	return nil
}

// Append sends req and waits for its answer, until ctx's deadline (30s
// without one). req.Records is copied: the log rewrites offsets in place.
// The error is for the exchange only; Kafka errors are in the result's
// ErrorCode.
func (c *Client) Append(ctx context.Context, req *AppendBatches) (*AppendBatchesResult, error) {
	m := *req
	m.Records = append([]byte(nil), req.Records...)
	res, err := c.request(ctx, &m)
	if err != nil {
		return nil, fmt.Errorf("partition: append: %w", err)
	}
	r, ok := res.(*AppendBatchesResult)
	if !ok {
		return nil, fmt.Errorf("partition: append: %w: %T", ErrUnexpectedReply, res)
	}
	return r, nil
}

// Read sends req and waits for its answer (see ReadRecords).
func (c *Client) Read(ctx context.Context, req *ReadRecords) (*ReadRecordsResult, error) {
	m := *req
	res, err := c.request(ctx, &m)
	if err != nil {
		return nil, fmt.Errorf("partition: read: %w", err)
	}
	r, ok := res.(*ReadRecordsResult)
	if !ok {
		return nil, fmt.Errorf("partition: read: %w: %T", ErrUnexpectedReply, res)
	}
	return r, nil
}

// request asks the actor and waits, from the caller's goroutine.
func (c *Client) request(ctx context.Context, msg any) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	timeout := defaultRequestTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
		if timeout <= 0 {
			return nil, context.DeadlineExceeded
		}
	}
	f := actor.NewFuture(c.system, timeout)
	c.sendFrom(msg, f.PID())
	return f.Result()
}

// parkedRead is a long-poll read waiting for data or its deadline.
type parkedRead struct {
	to         *actor.PID
	req        ReadRecords
	deadlineMs int64
}

// onReadRecords answers a read at once, or parks it when it found nothing
// and may wait.
func (a *partitionActor) onReadRecords(ctx actor.Context, m *ReadRecords) {
	res := a.read(m)
	if res.ErrorCode == 0 && len(res.Records) == 0 && m.MaxWaitMs > 0 && ctx.Sender() != nil {
		a.parked = append(a.parked, &parkedRead{
			to: ctx.Sender(), req: *m, deadlineMs: a.now().UnixMilli() + int64(m.MaxWaitMs),
		})
		return
	}
	if ctx.Sender() != nil {
		ctx.Send(ctx.Sender(), res)
	}
}

// read serves m from the log, bounded by the high watermark: a page-cache
// read, acceptable inside Receive.
func (a *partitionActor) read(m *ReadRecords) *ReadRecordsResult {
	if a.r == nil {
		return &ReadRecordsResult{ErrorCode: kerr.KafkaStorageError.Code, ErrorMessage: fmt.Sprintf("partition not started: %v", a.startErr),
			HighWatermark: -1, LogStartOffset: -1, LastStableOffset: -1}
	}
	st := a.r.Status()
	return readLog(a.cfg.Log, &st, m)
}

// wakeReads answers the parked reads that now find data or whose deadline
// the last tick passed.
func (a *partitionActor) wakeReads(ctx actor.Context) {
	if len(a.parked) == 0 {
		return
	}
	kept := a.parked[:0]
	for _, p := range a.parked {
		res := a.read(&p.req)
		if res.ErrorCode != 0 || len(res.Records) > 0 || p.deadlineMs <= a.tickMs {
			ctx.Send(p.to, res)
			continue
		}
		kept = append(kept, p)
	}
	clear(a.parked[len(kept):])
	a.parked = kept
}

// answerParkedReads answers every parked read with what is there now (on
// stop).
func (a *partitionActor) answerParkedReads(ctx actor.Context) {
	for _, p := range a.parked {
		ctx.Send(p.to, a.read(&p.req))
	}
	a.parked = nil
}
