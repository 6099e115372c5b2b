package group

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster/config"
)

// ShellConfig is what the coordinator actors are built from.
type ShellConfig struct {
	// Group holds the groups' settings.
	Group Config
	// CommitTimeoutMs is offsets.commit.timeout.ms: how long an append to
	// __consumer_offsets waits for its replicas before the partition
	// answers REQUEST_TIMED_OUT. Default 5000.
	CommitTimeoutMs int32
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives the coordinators' log lines; nil means
	// slog.Default().
	Logger *slog.Logger
}

// DefaultShellConfig returns Kafka's defaults.
func DefaultShellConfig() ShellConfig {
	return ShellConfig{Group: DefaultConfig(), CommitTimeoutMs: 5000}
}

// ShellConfigFromBroker reads the group coordinator's broker configs:
// group.min.session.timeout.ms, group.max.session.timeout.ms,
// group.max.size, group.initial.rebalance.delay.ms,
// offset.metadata.max.bytes, offsets.retention.minutes,
// offsets.retention.check.interval.ms and offsets.commit.timeout.ms.
func ShellConfigFromBroker(b *config.Broker) (ShellConfig, error) {
	c := DefaultShellConfig()
	c.Group.GroupMinSessionTimeoutMs = int32(b.Int("group.min.session.timeout.ms"))
	c.Group.GroupMaxSessionTimeoutMs = int32(b.Int("group.max.session.timeout.ms"))
	c.Group.GroupMaxSize = int32(b.Int("group.max.size"))
	c.Group.GroupInitialRebalanceDelayMs = int32(b.Int("group.initial.rebalance.delay.ms"))
	c.Group.OffsetMetadataMaxBytes = int32(b.Int("offset.metadata.max.bytes"))
	c.Group.OffsetsRetentionMs = b.Int("offsets.retention.minutes") * 60 * 1000
	c.Group.OffsetsRetentionCheckIntervalMs = b.Int("offsets.retention.check.interval.ms")
	c.CommitTimeoutMs = int32(b.Int("offsets.commit.timeout.ms"))
	if err := c.validate(); err != nil {
		return ShellConfig{}, err
	}
	return c, nil
}

// validate checks the settings and fills the defaults.
func (c *ShellConfig) validate() error {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.CommitTimeoutMs <= 0 {
		return fmt.Errorf("%w: offsets.commit.timeout.ms %d below 1", ErrInvalidConfig, c.CommitTimeoutMs)
	}
	return c.Group.Validate()
}

// Partition is what a coordinator needs of its __consumer_offsets
// partition's replica on this node: *partition.Client. Tests substitute
// their own.
type Partition interface {
	// Status returns the replica's published status.
	Status() partition.Status
	// ReadNow reads whole batches below the high watermark.
	ReadNow(m *partition.ReadRecords) *partition.ReadRecordsResult
	// SendAppend appends without blocking; the AppendBatchesResult (or a
	// *actor.DeadLetterResponse) goes to replyTo.
	SendAppend(req *partition.AppendBatches, replyTo *actor.PID)
}

var _ Partition = (*partition.Client)(nil)

// target is where the answer to a request goes: the sender of its Route
// and the ID the sender chose.
type target struct {
	pid *actor.PID
	id  uint64
}

// stepper steps one Group with Routes: it gives each request a group-level
// id and remembers whom to answer. The manager uses one for a group it
// does not hold yet, the group actor for the rest of the group's life.
type stepper struct {
	g       *Group
	nextID  uint64
	waiting map[uint64]target
}

func newStepper(g *Group) *stepper { return &stepper{g: g, waiting: map[uint64]target{}} }

// route steps m.Op at nowMs for the sender from.
func (s *stepper) route(m *Route, from *actor.PID, nowMs int64) Output {
	s.nextID++
	id := s.nextID
	s.waiting[id] = target{pid: from, id: m.ID}
	g := s.g
	switch op := m.Op.(type) {
	case *JoinGroup:
		c := *op
		c.ID, c.NowMs = id, nowMs
		return g.JoinGroup(&c)
	case *SyncGroup:
		c := *op
		c.ID, c.NowMs = id, nowMs
		return g.SyncGroup(&c)
	case *Heartbeat:
		c := *op
		c.ID, c.NowMs = id, nowMs
		return g.Heartbeat(&c)
	case *LeaveGroup:
		c := *op
		c.ID, c.NowMs = id, nowMs
		return g.LeaveGroup(&c)
	case *OffsetCommit:
		c := *op
		c.ID, c.NowMs = id, nowMs
		return g.OffsetCommit(&c)
	case *OffsetDelete:
		c := *op
		c.ID, c.NowMs = id, nowMs
		return g.OffsetDelete(&c)
	case *DeleteGroup:
		c := *op
		c.ID, c.NowMs = id, nowMs
		return g.DeleteGroup(&c)
	case *FetchOffsets:
		resp := kmsg.NewPtrOffsetFetchResponse()
		resp.Version = 8
		resp.Groups = []kmsg.OffsetFetchResponseGroup{g.FetchOffsets(op.Topics, op.RequireStable)}
		return s.read(id, resp)
	case *DescribeGroup:
		resp := kmsg.NewPtrDescribeGroupsResponse()
		resp.Version = op.Version
		resp.Groups = []kmsg.DescribeGroupsResponseGroup{g.Describe(op.Version)}
		return s.read(id, resp)
	}
	delete(s.waiting, id)
	return Output{NextDeadlineMs: g.nextDeadline(), Removed: g.removable()}
}

// read is the Output of a read: its reply and the unchanged bookkeeping.
func (s *stepper) read(id uint64, resp kmsg.Response) Output {
	return Output{
		Replies:        []Reply{{ID: id, Response: resp}},
		NextDeadlineMs: s.g.nextDeadline(), Removed: s.g.removable(),
	}
}

// reply sends the replies of an Output from the actor context ctx.
func (s *stepper) reply(ctx actor.Context, replies []Reply) {
	for _, r := range replies {
		t, ok := s.waiting[r.ID]
		if !ok {
			continue
		}
		delete(s.waiting, r.ID)
		if t.pid != nil {
			ctx.Send(t.pid, &RouteResult{ID: t.id, Response: r.Response})
		}
	}
}

// errUnknownOp is a Route whose Op the shell does not know (a caller bug).
var errUnknownOp = errors.New("group: unknown route op")

// coordinatorAnswer answers a Route the coordinator rejects as a whole
// (COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR) in the shape of its Op,
// with Kafka's substitutions (CoordinatorError).
func coordinatorAnswer(m *Route, code int16) (kmsg.Response, error) {
	switch op := m.Op.(type) {
	case *JoinGroup:
		return CoordinatorError(op.Req, code), nil
	case *SyncGroup:
		return CoordinatorError(op.Req, code), nil
	case *Heartbeat:
		return CoordinatorError(op.Req, code), nil
	case *LeaveGroup:
		return CoordinatorError(op.Req, code), nil
	case *OffsetCommit:
		return CoordinatorError(op.Req, code), nil
	case *OffsetDelete:
		return CoordinatorError(op.Req, code), nil
	case *DeleteGroup:
		resp := kmsg.NewPtrDeleteGroupsResponse()
		resp.Version = op.Version
		resp.Groups = []kmsg.DeleteGroupsResponseGroup{DeleteError(m.Group, code)}
		return resp, nil
	case *FetchOffsets:
		resp := kmsg.NewPtrOffsetFetchResponse()
		resp.Version = 8
		resp.Groups = []kmsg.OffsetFetchResponseGroup{OffsetFetchError(m.Group, code)}
		return resp, nil
	case *DescribeGroup:
		resp := kmsg.NewPtrDescribeGroupsResponse()
		resp.Version = op.Version
		resp.Groups = []kmsg.DescribeGroupsResponseGroup{DescribeError(m.Group, code)}
		return resp, nil
	}
	return nil, fmt.Errorf("%w: %T", errUnknownOp, m.Op)
}

// notCoordinator is NOT_COORDINATOR's code.
var notCoordinator = kerr.NotCoordinator.Code
