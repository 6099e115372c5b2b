package group

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
)

// managerState is where a partition's coordinator is in its life.
type managerState uint8

const (
	// loading: reading the partition; requests get
	// COORDINATOR_LOAD_IN_PROGRESS.
	loading managerState = iota
	// active: the groups are served by their actors.
	active
	// unloading: the partition is no longer led here; requests get
	// NOT_COORDINATOR while the group actors answer what they hold.
	unloading
)

// groupRef is the manager's handle on one group actor.
type groupRef struct {
	pid   *actor.PID
	board *groupBoard
	// sent counts the Routes forwarded to the actor; a removal report
	// that has not seen them all is stale.
	sent uint64
}

// manager is the coordinator of one __consumer_offsets partition led
// here: it loads the partition (duty 2 of the package doc), spawns one
// actor per group and routes each Route to its group's actor, creating
// the group when a request does; it forwards Ticks to the groups with
// work due, answers ListGroups from their boards, and on unload has every
// group actor answer NOT_COORDINATOR and stop (duty 3), then stops.
type manager struct {
	cfg       *ShellConfig
	partition int32
	epoch     int32
	p         Partition
	log       *slog.Logger
	loaders   *sync.WaitGroup
	done      chan struct{}

	state      managerState
	groups     map[string]*groupRef
	cancelLoad context.CancelFunc
	loadStart  time.Time
	// deletedDuringLoad are topics deleted while the groups were loading,
	// passed on to them once loaded.
	deletedDuringLoad []string
}

// Manager messages.

// unloadCoordinator tells a manager its partition is no longer led here.
type unloadCoordinator struct{}

// groupsLoaded carries the partition's loaded groups from the loader.
type groupsLoaded struct {
	groups  []*Group
	batches int
	records int64
}

// Receive dispatches one message.
func (m *manager) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		m.startLoad(ctx)
	case *groupsLoaded:
		m.onLoaded(ctx, msg)
	case *Route:
		m.onRoute(ctx, msg)
	case *ListGroups:
		m.onListGroups(ctx, msg)
	case *TopicsDeleted:
		m.onTopicsDeleted(ctx, msg)
	case *Tick:
		m.onTick(ctx, msg)
	case *groupRemovable:
		m.onGroupRemovable(ctx, msg)
	case *unloadCoordinator:
		m.onUnload(ctx)
	case *actor.Terminated:
		if m.state == unloading && len(ctx.Children()) == 0 {
			ctx.Stop(ctx.Self())
		}
	case *actor.Stopping:
		if m.cancelLoad != nil {
			m.cancelLoad()
		}
	case *actor.Stopped:
		close(m.done)
	case *actor.Restarting:
	default:
		m.log.Warn("group coordinator: unknown message", "type", typeName(msg))
	}
}

// startLoad reads the partition on a goroutine of its own (the mailbox
// stays free to answer COORDINATOR_LOAD_IN_PROGRESS).
func (m *manager) startLoad(ctx actor.Context) {
	lctx, cancel := context.WithCancel(context.Background())
	m.cancelLoad = cancel
	m.loadStart = time.Now()
	self, root := ctx.Self(), ctx.ActorSystem().Root
	m.loaders.Add(1)
	go func() {
		defer m.loaders.Done()
		res, err := loadPartition(lctx, m.p, m.epoch, m.cfg, m.log)
		if err != nil {
			return // canceled: the manager is unloading or stopping
		}
		root.Send(self, res)
	}()
}

// onLoaded spawns an actor per loaded group and starts serving.
func (m *manager) onLoaded(ctx actor.Context, msg *groupsLoaded) {
	if m.state != loading {
		return
	}
	for _, g := range msg.groups {
		m.spawn(ctx, newStepper(g), Output{NextDeadlineMs: g.nextDeadline()})
	}
	m.state = active
	if len(m.deletedDuringLoad) > 0 {
		m.onTopicsDeleted(ctx, &TopicsDeleted{Topics: m.deletedDuringLoad})
		m.deletedDuringLoad = nil
	}
	m.log.Log(context.Background(), quietIfNone(len(msg.groups)), "group coordinator loaded", "leader_epoch", m.epoch,
		"groups", len(msg.groups), "batches", msg.batches, "records", msg.records,
		"took", time.Since(m.loadStart).Round(time.Millisecond).String())
}

// spawn starts a group actor over s, which performs out first.
func (m *manager) spawn(ctx actor.Context, s *stepper, out Output) *groupRef {
	board := &groupBoard{}
	a := &groupActor{s: s, cfg: m.cfg, p: m.p, board: board, log: m.log, pending: out, inflight: map[uint64]bool{}, epoch: m.epoch}
	board.nextDeadlineMs.Store(out.NextDeadlineMs)
	ov := s.g.Overview()
	board.overview.Store(&ov)
	pid := ctx.Spawn(actor.PropsFromProducer(func() actor.Actor { return a }))
	ref := &groupRef{pid: pid, board: board}
	m.groups[s.g.ID()] = ref
	return ref
}

// onRoute forwards a request to its group's actor, steps it on a group
// not held yet (creating the actor only if the request created the
// group), or answers the coordinator's error.
func (m *manager) onRoute(ctx actor.Context, msg *Route) {
	switch m.state {
	case loading:
		m.reject(ctx, msg, kerr.CoordinatorLoadInProgress.Code)
		return
	case unloading:
		m.reject(ctx, msg, notCoordinator)
		return
	}
	if ref := m.groups[msg.Group]; ref != nil {
		ref.sent++
		ctx.RequestWithCustomSender(ref.pid, msg, ctx.Sender())
		return
	}
	nowMs := m.cfg.Now().UnixMilli()
	g, err := NewGroup(m.cfg.Group, msg.Group, nowMs)
	if err != nil { // the config was validated: unreachable
		m.log.Error("group coordinator: cannot create group", "group", msg.Group, "err", err)
		m.reject(ctx, msg, kerr.UnknownServerError.Code)
		return
	}
	s := newStepper(g)
	out := s.route(msg, ctx.Sender(), nowMs)
	if out.Removed && len(out.Appends) == 0 {
		s.reply(ctx, out.Replies)
		for _, l := range out.Logs {
			m.log.Info(l)
		}
		return
	}
	m.spawn(ctx, s, out)
}

// reject answers a Route with a coordinator error.
func (m *manager) reject(ctx actor.Context, msg *Route, code int16) {
	resp, err := coordinatorAnswer(msg, code)
	if err != nil {
		m.log.Error("group coordinator: bad route", "group", msg.Group, "err", err)
		return
	}
	if ctx.Sender() != nil {
		ctx.Send(ctx.Sender(), &RouteResult{ID: msg.ID, Response: resp})
	}
}

// onListGroups answers from the group actors' boards.
func (m *manager) onListGroups(ctx actor.Context, msg *ListGroups) {
	res := &GroupsListed{ID: msg.ID}
	switch m.state {
	case loading:
		res.ErrorCode = kerr.CoordinatorLoadInProgress.Code
	case unloading:
		res.ErrorCode = notCoordinator
	default:
		for _, ref := range m.groups {
			if ov := ref.board.overview.Load(); ov != nil {
				res.Groups = append(res.Groups, *ov)
			}
		}
		slices.SortFunc(res.Groups, func(a, b Overview) int { return strings.Compare(a.GroupID, b.GroupID) })
	}
	if ctx.Sender() != nil {
		ctx.Send(ctx.Sender(), res)
	}
}

// onTopicsDeleted passes a deletion on to every group; during the load
// it is kept and passed on once the groups are loaded.
func (m *manager) onTopicsDeleted(ctx actor.Context, msg *TopicsDeleted) {
	switch m.state {
	case loading:
		m.deletedDuringLoad = append(m.deletedDuringLoad, msg.Topics...)
	case active:
		for _, ref := range m.groups {
			ctx.Send(ref.pid, msg)
		}
	}
}

// onTick forwards the tick to every group with a deadline due.
func (m *manager) onTick(ctx actor.Context, msg *Tick) {
	if m.state != active {
		return
	}
	for _, ref := range m.groups {
		if d := ref.board.nextDeadlineMs.Load(); d != 0 && d <= msg.NowMs {
			ctx.Send(ref.pid, msg)
		}
	}
}

// onGroupRemovable drops a group whose actor has stepped every Route
// sent to it and said Removed.
func (m *manager) onGroupRemovable(ctx actor.Context, msg *groupRemovable) {
	ref := m.groups[msg.group]
	if ref == nil || !ref.pid.Equal(msg.pid) || ref.sent != msg.received || m.state != active {
		return
	}
	delete(m.groups, msg.group)
	ctx.Stop(ref.pid)
}

// onUnload stops the load, tells every group actor to unload, and stops
// once they all have.
func (m *manager) onUnload(ctx actor.Context) {
	if m.state == unloading {
		return
	}
	if m.cancelLoad != nil {
		m.cancelLoad()
	}
	m.state = unloading
	m.log.Log(context.Background(), quietIfNone(len(m.groups)), "group coordinator unloading",
		"leader_epoch", m.epoch, "groups", len(m.groups))
	for _, ref := range m.groups {
		ctx.Send(ref.pid, &unloadGroup{})
	}
	clear(m.groups)
	if len(ctx.Children()) == 0 {
		ctx.Stop(ctx.Self())
	}
}

// typeName names a message's type for a log line.
func typeName(m any) string { return fmt.Sprintf("%T", m) }

// sortedIDs sorts ids in place and returns them.
func sortedIDs(ids []uint64) []uint64 {
	slices.Sort(ids)
	return ids
}

// quietIfNone logs the load and unload of a partition without groups (most
// of the 50) at Debug, the others at Info.
func quietIfNone(groups int) slog.Level {
	if groups == 0 {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}
