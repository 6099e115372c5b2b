package wire

// ListGroups (key 16), versions 0-4.
//
// v1 throttle time. v3 flexible (KIP-482). v4 states_filter and
// group_state (KIP-518), matched without case. v5 (types_filter,
// KIP-848) is not served.
//
// Lists the groups of every __consumer_offsets partition led here, as a
// Kafka broker lists its own; a partition still loading makes the answer
// COORDINATOR_LOAD_IN_PROGRESS (with the groups of the others), as in
// Kafka.

import (
	"context"
	"slices"
	"strings"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/group"
	"github.com/weirmq/weir/actors/partition"
)

func (h *BrokerHandler) handleListGroups(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.ListGroupsRequest)
	resp := r.ResponseKind().(*kmsg.ListGroupsResponse)
	resp.Groups = []kmsg.ListGroupsResponseGroup{}
	var coords []*group.Coordinator
	if c := h.broker.GroupCoordinators(); c != nil {
		coords = c.All()
	}
	if len(coords) == 0 {
		return Reply(resp)
	}
	inbox := partition.NewInbox(h.cfg.System)
	for _, co := range coords {
		co.SendListGroups(&group.ListGroups{ID: inbox.NextID()}, inbox.PID())
	}
	var states []string
	if r.Version >= 4 {
		states = r.StatesFilter
	}
	return Defer(func(ctx context.Context) Response {
		defer inbox.Close()
		wctx, cancel := context.WithTimeout(ctx, groupBackstop)
		defer cancel()
		var overviews []group.Overview
		for range coords {
			m, err := inbox.Receive(wctx)
			if err != nil {
				if ctx.Err() != nil {
					return CloseConnection(ctx.Err())
				}
				resp.ErrorCode = kerr.CoordinatorLoadInProgress.Code
				break
			}
			switch m := m.(type) {
			case *group.GroupsListed:
				if m.ErrorCode == kerr.CoordinatorLoadInProgress.Code {
					resp.ErrorCode = m.ErrorCode
				}
				overviews = append(overviews, m.Groups...)
			case *actor.DeadLetterResponse:
				// Unloaded meanwhile: its groups are listed elsewhere.
			}
		}
		slices.SortFunc(overviews, func(a, b group.Overview) int { return strings.Compare(a.GroupID, b.GroupID) })
		for _, o := range overviews {
			if o.Matches(states, nil) {
				resp.Groups = append(resp.Groups, o.Listed())
			}
		}
		return Reply(resp)
	})
}
