package group

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// JoinGroup steps a JoinGroup request. The answer comes at once (errors,
// MEMBER_ID_REQUIRED, a member of a stable group with unchanged metadata)
// or when the join phase completes, in this or a later Output.
func (g *Group) JoinGroup(m *JoinGroup) Output {
	return g.step(m.NowMs, func() { g.onJoinGroup(m) })
}

// onJoinGroup is Kafka's handleJoinGroup.
func (g *Group) onJoinGroup(m *JoinGroup) {
	req := m.Req
	fail := func(memberID string, code int16) {
		g.reply(m.ID, joinResponse(req.Version, joinError(memberID, code)))
	}
	if code := ValidateGroupID(kmsg.JoinGroup.Int16(), req.Group); code != 0 {
		g.logf("JoinGroup with invalid group id (%d bytes)", len(req.Group))
		fail(req.MemberID, code)
		return
	}
	if req.SessionTimeoutMillis < g.cfg.GroupMinSessionTimeoutMs || req.SessionTimeoutMillis > g.cfg.GroupMaxSessionTimeoutMs {
		g.logf("group %s: JoinGroup with session timeout %d ms outside [%d, %d]", g.id,
			req.SessionTimeoutMillis, g.cfg.GroupMinSessionTimeoutMs, g.cfg.GroupMaxSessionTimeoutMs)
		fail(req.MemberID, kerr.InvalidSessionTimeout.Code)
		return
	}
	isUnknown := req.MemberID == ""
	if g.absent {
		if !isUnknown {
			fail(req.MemberID, kerr.UnknownMemberID.Code)
			return
		}
		g.absent = false // Kafka's getOrMaybeCreateGroup creates it.
	}
	switch {
	case !g.acceptJoiningMember(req.MemberID):
		g.remove(req.MemberID)
		g.logf("group %s: JoinGroup rejected, the group is at group.max.size %d", g.id, g.cfg.GroupMaxSize)
		fail("", kerr.GroupMaxSizeReached.Code)
	case isUnknown:
		g.doNewMemberJoin(m)
	default:
		g.doCurrentMemberJoin(m)
	}
	g.tryCompleteJoin()
}

// acceptJoiningMember is Kafka's check against group.max.size.
func (g *Group) acceptJoiningMember(memberID string) bool {
	mb, known := g.members[memberID]
	switch g.state {
	case PreparingRebalance:
		return (known && mb.join != nil) || g.numAwaitingJoin() < int(g.cfg.GroupMaxSize)
	case CompletingRebalance, Stable:
		return known || len(g.members) < int(g.cfg.GroupMaxSize)
	}
	return true
}

// rebalanceTimeout is the request's rebalance timeout; version 0 has none
// and uses the session timeout, as Kafka's JoinGroupRequest does.
func rebalanceTimeout(req *kmsg.JoinGroupRequest) int32 {
	if req.Version == 0 {
		return req.SessionTimeoutMillis
	}
	return req.RebalanceTimeoutMillis
}

// doNewMemberJoin handles a join without member id.
func (g *Group) doNewMemberJoin(m *JoinGroup) {
	req := m.Req
	fail := func(code int16) { g.reply(m.ID, joinResponse(req.Version, joinError("", code))) }
	if g.state == Dead {
		fail(kerr.CoordinatorNotAvailable.Code)
		return
	}
	protocols := protocolsOf(req.Protocols)
	if !g.supportsProtocols(req.ProtocolType, protocolNames(protocols)) {
		g.logf("group %s: JoinGroup with protocol type %q and no protocol in common with the group", g.id, req.ProtocolType)
		fail(kerr.InconsistentGroupProtocol.Code)
		return
	}
	prefix := m.ClientID
	if req.InstanceID != nil {
		prefix = *req.InstanceID
	}
	newID := prefix + "-" + g.cfg.memberIDSuffix()
	if req.InstanceID != nil {
		if oldID, ok := g.static[*req.InstanceID]; ok {
			g.logf("group %s: static member %s rejoins without member id; replacing member %s by %s",
				g.id, *req.InstanceID, oldID, newID)
			g.updateStaticMemberAndRebalance(m, oldID, newID, protocols)
			return
		}
		g.addMemberAndRebalance(m, newID, protocols)
		return
	}
	if req.Version >= 4 { // KIP-394: dynamic members must rejoin with their id.
		g.pendingMembers[newID] = g.nowMs + int64(req.SessionTimeoutMillis)
		g.reply(m.ID, joinResponse(req.Version, joinError(newID, kerr.MemberIDRequired.Code)))
		return
	}
	g.addMemberAndRebalance(m, newID, protocols)
}

// doCurrentMemberJoin handles a join with a member id.
func (g *Group) doCurrentMemberJoin(m *JoinGroup) {
	req := m.Req
	fail := func(code int16) { g.reply(m.ID, joinResponse(req.Version, joinError(req.MemberID, code))) }
	if g.state == Dead {
		fail(kerr.CoordinatorNotAvailable.Code)
		return
	}
	protocols := protocolsOf(req.Protocols)
	if !g.supportsProtocols(req.ProtocolType, protocolNames(protocols)) {
		g.logf("group %s: JoinGroup from %s with protocol type %q and no protocol in common with the group", g.id, req.MemberID, req.ProtocolType)
		fail(kerr.InconsistentGroupProtocol.Code)
		return
	}
	if _, pending := g.pendingMembers[req.MemberID]; pending {
		if req.InstanceID != nil { // Kafka throws IllegalStateException here.
			g.logf("group %s: JoinGroup with group.instance.id %s for pending member %s", g.id, *req.InstanceID, req.MemberID)
			fail(kerr.UnknownServerError.Code)
			return
		}
		g.addMemberAndRebalance(m, req.MemberID, protocols)
		return
	}
	if code := g.validateCurrentMember(req.MemberID, req.InstanceID, "join-group"); code != 0 {
		fail(code)
		return
	}
	mb := g.members[req.MemberID]
	switch g.state {
	case PreparingRebalance:
		g.updateMemberAndRebalance(mb, m, protocols, "member joining during PreparingRebalance")
	case CompletingRebalance:
		if mb.matches(protocols) { // a retry: the current generation's answer
			g.reply(m.ID, joinResponse(req.Version, g.currentJoinResult(mb.id)))
			return
		}
		g.updateMemberAndRebalance(mb, m, protocols, "member "+mb.id+" changed its metadata during CompletingRebalance")
	case Stable:
		if mb.id == g.leader || !mb.matches(protocols) {
			g.updateMemberAndRebalance(mb, m, protocols, "leader rejoining or member metadata changed during Stable")
			return
		}
		g.reply(m.ID, joinResponse(req.Version, g.currentJoinResult(mb.id)))
	default:
		fail(kerr.UnknownMemberID.Code)
	}
}

// addMemberAndRebalance adds a member with its join parked.
func (g *Group) addMemberAndRebalance(m *JoinGroup, memberID string, protocols []protocol) {
	req := m.Req
	mb := &member{
		id: memberID, instanceID: cloneString(req.InstanceID), clientID: m.ClientID, clientHost: m.ClientHost,
		rebalanceTimeoutMs: rebalanceTimeout(req), sessionTimeoutMs: req.SessionTimeoutMillis,
		protocolType: req.ProtocolType, protocols: protocols, isNew: true,
	}
	if g.state == PreparingRebalance && g.generation == 0 {
		g.newMemberAdded = true
	}
	g.add(mb)
	g.parkJoin(mb, m.ID, req.Version)
	g.scheduleHeartbeat(mb, NewMemberJoinTimeoutMs)
	g.maybePrepareRebalance("adding new member " + memberID)
}

// updateMemberAndRebalance records a member's new join and rebalances.
func (g *Group) updateMemberAndRebalance(mb *member, m *JoinGroup, protocols []protocol, reason string) {
	mb.protocols = protocols
	mb.rebalanceTimeoutMs = rebalanceTimeout(m.Req)
	mb.sessionTimeoutMs = m.Req.SessionTimeoutMillis
	g.parkJoin(mb, m.ID, m.Req.Version)
	g.maybePrepareRebalance(reason)
}

// updateStaticMemberAndRebalance gives a known static member that rejoined
// without member id a new member id (fencing the old one). A stable group
// whose protocol would not change keeps its assignment: the group is
// persisted and the member answered once the write is durable.
func (g *Group) updateStaticMemberAndRebalance(m *JoinGroup, oldID, newID string, protocols []protocol) {
	req := m.Req
	instanceID := *req.InstanceID
	currentLeader := g.leader
	mb := g.replaceStatic(instanceID, oldID, newID)
	g.scheduleHeartbeat(mb, int64(mb.sessionTimeoutMs))
	oldProtocols, oldRebalance, oldSession := mb.protocols, mb.rebalanceTimeoutMs, mb.sessionTimeoutMs
	mb.protocols, mb.rebalanceTimeoutMs, mb.sessionTimeoutMs = protocols, rebalanceTimeout(req), req.SessionTimeoutMillis
	g.parkJoin(mb, m.ID, req.Version)
	switch g.state {
	case Stable:
		if deref(g.protocolName) != g.selectProtocol() {
			g.maybePrepareRebalance("static member " + newID + " joined with a change of protocol")
			return
		}
		assignment := map[string][]byte{}
		for id, x := range g.members {
			assignment[id] = x.assignment
		}
		joinID := m.ID
		g.storeGroup(assignment, []uint64{joinID}, func(code int16) {
			cur := g.members[newID]
			if cur == nil || cur.join == nil || cur.join.id != joinID {
				return // answered meanwhile (a rebalance, an unload)
			}
			if code != 0 {
				g.logf("group %s: failed to persist static member %s: error %d; reverting", g.id, newID, code)
				p := cur.join
				cur.join = nil
				cur.protocols, cur.rebalanceTimeoutMs, cur.sessionTimeoutMs = oldProtocols, oldRebalance, oldSession
				if g.static[instanceID] == newID {
					g.scheduleHeartbeat(g.replaceStatic(instanceID, newID, oldID), int64(oldSession))
				}
				g.reply(p.id, joinResponse(p.version, joinResult{
					generation: g.generation, protocolType: g.protocolType, protocolName: g.protocolName,
					leader: currentLeader, code: code,
				}))
				return
			}
			if req.Version >= 9 { // KIP-814: the leader learns it leads but skips the assignment.
				r := g.currentJoinResult(newID)
				r.skip = newID == g.leader
				g.answerJoin(cur, r)
				return
			}
			g.answerJoin(cur, joinResult{
				memberID: newID, generation: g.generation, protocolType: g.protocolType,
				protocolName: g.protocolName, leader: currentLeader,
			})
		})
	case CompletingRebalance:
		g.prepareRebalance("static member " + newID + " rejoined during CompletingRebalance")
	}
}

// cloneString copies an optional string.
func cloneString(s *string) *string {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}
