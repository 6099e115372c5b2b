package group

import (
	"log/slog"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/internal/kafkaerr"
)

// groupBoard is what a group actor publishes for its manager to read
// without asking it: the time its next Tick has work to do and its
// ListGroups overview.
type groupBoard struct {
	nextDeadlineMs atomic.Int64
	overview       atomic.Pointer[Overview]
	// received counts the Routes the actor has stepped.
	received atomic.Uint64
}

// groupActor is the shell of one group: it steps the Group with the
// Routes its manager forwards, Ticks and append outcomes, and performs
// each Output (package doc, duty 6). It never blocks: appends go to the
// partition actor with the group actor as the sender.
type groupActor struct {
	s       *stepper
	cfg     *ShellConfig
	p       Partition
	board   *groupBoard
	log     *slog.Logger
	pending Output // the first Output, stepped by the manager
	// inflight holds the ids of appends sent and not answered yet.
	inflight map[uint64]bool
	// epoch is the leader epoch of the partition the group was loaded
	// from; appends are conditional on it.
	epoch    int32
	unloaded bool
}

// unloadGroup tells a group actor its partition is unloading: it steps
// Unload, answers every waiting request and stops.
type unloadGroup struct{}

// groupRemovable tells the manager that the group actor's last Output
// said Removed after stepping received Routes.
type groupRemovable struct {
	group    string
	pid      *actor.PID
	received uint64
}

func (a *groupActor) nowMs() int64 { return a.cfg.Now().UnixMilli() }

// Receive dispatches one message.
func (a *groupActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		out := a.pending
		a.pending = Output{}
		a.perform(ctx, out)
	case *Route:
		a.board.received.Add(1)
		a.perform(ctx, a.s.route(m, ctx.Sender(), a.nowMs()))
	case *Tick:
		a.perform(ctx, a.s.g.Tick(&Tick{NowMs: a.nowMs()}))
	case *TopicsDeleted:
		a.perform(ctx, a.s.g.TopicsDeleted(&TopicsDeleted{NowMs: a.nowMs(), Topics: m.Topics}))
	case *partition.AppendBatchesResult:
		if !a.inflight[m.ID] {
			return
		}
		delete(a.inflight, m.ID)
		a.perform(ctx, a.s.g.AppendCompleted(&AppendCompleted{
			ID: m.ID, BaseOffset: m.BaseOffset, ErrorCode: m.ErrorCode, NowMs: a.nowMs(),
		}))
	case *actor.DeadLetterResponse:
		a.onPartitionGone(ctx)
	case *unloadGroup:
		a.unloaded = true
		a.perform(ctx, a.s.g.Unload(&Unload{NowMs: a.nowMs()}))
		ctx.Stop(ctx.Self())
	case *actor.Stopping, *actor.Stopped, *actor.Restarting:
	default:
		a.log.Warn("group actor: unknown message", "group", a.s.g.ID(), "type", typeName(m))
	}
}

// onPartitionGone fails every append in flight: the partition actor is
// gone, so none of them will be answered (the partition moved; an Unload
// follows).
func (a *groupActor) onPartitionGone(ctx actor.Context) {
	ids := make([]uint64, 0, len(a.inflight))
	for id := range a.inflight {
		ids = append(ids, id)
	}
	clear(a.inflight)
	for _, id := range sortedIDs(ids) {
		a.perform(ctx, a.s.g.AppendCompleted(&AppendCompleted{
			ID: id, BaseOffset: -1, ErrorCode: kerr.NotLeaderForPartition.Code, NowMs: a.nowMs(),
		}))
	}
}

// perform carries out one Output: replies, appends, logs, the published
// board, and removal.
func (a *groupActor) perform(ctx actor.Context, out Output) {
	a.s.reply(ctx, out.Replies)
	for _, ap := range out.Appends {
		a.append(ctx, ap)
	}
	for _, l := range out.Logs {
		a.log.Info(l)
	}
	a.board.nextDeadlineMs.Store(out.NextDeadlineMs)
	ov := a.s.g.Overview()
	a.board.overview.Store(&ov)
	if out.Removed && !a.unloaded {
		ctx.Send(ctx.Parent(), &groupRemovable{group: a.s.g.ID(), pid: ctx.Self(), received: a.board.received.Load()})
	}
}

// append sends one Append to the partition with acks=all. A batch that
// cannot be built completes at once with the code of a failed append
// (kafkaerr.StorageCode: KAFKA_STORAGE_ERROR).
func (a *groupActor) append(ctx actor.Context, ap *Append) {
	b, err := ap.Batch()
	if err != nil {
		a.log.Error("group actor: cannot build __consumer_offsets batch", "group", a.s.g.ID(), "err", err)
		a.perform(ctx, a.s.g.AppendCompleted(&AppendCompleted{
			ID: ap.ID, BaseOffset: -1, ErrorCode: kafkaerr.StorageCode(err), NowMs: a.nowMs(),
		}))
		return
	}
	a.inflight[ap.ID] = true
	a.p.SendAppend(&partition.AppendBatches{
		ID: ap.ID, Records: b, Acks: -1, TimeoutMs: a.cfg.CommitTimeoutMs, NowMs: a.nowMs(),
		// Only into the leadership this coordinator was loaded from.
		CheckLeaderEpoch: true, LeaderEpoch: a.epoch,
	}, ctx.Self())
}
