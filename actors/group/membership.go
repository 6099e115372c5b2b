package group

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Heartbeat steps a Heartbeat request; it is answered at once.
func (g *Group) Heartbeat(m *Heartbeat) Output {
	return g.step(m.NowMs, func() {
		resp := kmsg.NewPtrHeartbeatResponse()
		resp.Version = m.Req.Version
		resp.ErrorCode = g.onHeartbeat(m.Req)
		g.reply(m.ID, Reply{Response: resp})
	})
}

// onHeartbeat is Kafka's handleHeartbeat.
func (g *Group) onHeartbeat(req *kmsg.HeartbeatRequest) int16 {
	if code := ValidateGroupID(kmsg.Heartbeat.Int16(), req.Group); code != 0 {
		return code
	}
	if g.absent {
		return kerr.UnknownMemberID.Code
	}
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable.Code
	}
	if code := g.validateCurrentMember(req.MemberID, req.InstanceID, "heartbeat"); code != 0 {
		return code
	}
	if req.Generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	mb := g.members[req.MemberID]
	switch g.state {
	case Empty:
		return kerr.UnknownMemberID.Code
	case PreparingRebalance:
		g.scheduleHeartbeat(mb, int64(mb.sessionTimeoutMs))
		return kerr.RebalanceInProgress.Code
	}
	g.scheduleHeartbeat(mb, int64(mb.sessionTimeoutMs))
	return 0
}

// LeaveGroup steps a LeaveGroup request: v0-2 name one member, v3+ a
// batch of members by member id and/or group.instance.id, each answered
// with its own error code.
func (g *Group) LeaveGroup(m *LeaveGroup) Output {
	return g.step(m.NowMs, func() { g.onLeaveGroup(m) })
}

// onLeaveGroup is Kafka's handleLeaveGroup.
func (g *Group) onLeaveGroup(m *LeaveGroup) {
	req := m.Req
	leaving := req.Members
	if req.Version < 3 {
		leaving = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	}
	top := int16(0)
	var results []kmsg.LeaveGroupResponseMember
	switch {
	case ValidateGroupID(kmsg.LeaveGroup.Int16(), req.Group) != 0:
		top = kerr.InvalidGroupID.Code
	case g.state == Dead && !g.absent:
		top = kerr.CoordinatorNotAvailable.Code
	default:
		for _, l := range leaving {
			r := kmsg.NewLeaveGroupResponseMember()
			r.MemberID, r.InstanceID = l.MemberID, l.InstanceID
			r.ErrorCode = g.leaveOne(l)
			results = append(results, r)
		}
	}
	resp := kmsg.NewPtrLeaveGroupResponse()
	resp.Version = req.Version
	resp.ErrorCode = top
	if req.Version >= 3 {
		resp.Members = results
	} else if top == 0 {
		for _, r := range results {
			if r.ErrorCode != 0 {
				resp.ErrorCode = r.ErrorCode
				break
			}
		}
	}
	g.reply(m.ID, Reply{Response: resp})
}

// leaveOne removes one leaving member and returns its error code.
func (g *Group) leaveOne(l kmsg.LeaveGroupRequestMember) int16 {
	if g.absent {
		return kerr.UnknownMemberID.Code
	}
	if l.MemberID == "" { // administrative removal by group.instance.id
		id, ok := g.currentStaticMember(l.InstanceID)
		if !ok {
			return kerr.UnknownMemberID.Code
		}
		g.removeLeaving(id, l.Reason)
		return 0
	}
	if _, pending := g.pendingMembers[l.MemberID]; pending {
		g.logf("group %s: pending member %s left", g.id, l.MemberID)
		g.removePendingMemberAndUpdateGroup(l.MemberID)
		return 0
	}
	if code := g.validateCurrentMember(l.MemberID, l.InstanceID, "leave-group"); code != 0 {
		return code
	}
	g.removeLeaving(l.MemberID, l.Reason)
	return 0
}

// removeLeaving removes a member that left with LeaveGroup.
func (g *Group) removeLeaving(id string, reason *string) {
	why := "not provided"
	if reason != nil {
		why = *reason
	}
	g.logf("group %s: member %s left (client reason: %s)", g.id, id, why)
	g.removeMemberAndUpdateGroup(g.members[id], "removing member "+id+" on LeaveGroup")
}

// members in join order, for views.
func (g *Group) memberList() []*member {
	out := make([]*member, 0, len(g.order))
	for _, id := range slices.Clone(g.order) {
		out = append(out, g.members[id])
	}
	return out
}
