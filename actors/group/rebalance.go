package group

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// joinResult is Kafka's JoinGroupResult, rendered per version by
// joinResponse.
type joinResult struct {
	members      []kmsg.JoinGroupResponseMember
	memberID     string
	generation   int32
	protocolType *string
	protocolName *string
	leader       string
	skip         bool
	code         int16
}

// joinError is the result of a failed join.
func joinError(memberID string, code int16) joinResult {
	return joinResult{memberID: memberID, generation: -1, code: code}
}

// joinResponse renders a join result for a request version.
func joinResponse(version int16, r joinResult) Reply {
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Version = version
	resp.ErrorCode = r.code
	resp.Generation = r.generation
	resp.Protocol = r.protocolName
	if version >= 7 {
		resp.ProtocolType = r.protocolType // a field of v7+
	}
	if version < 7 && resp.Protocol == nil {
		empty := ""
		resp.Protocol = &empty // not nullable before v7
	}
	resp.LeaderID = r.leader
	resp.SkipAssignment = r.skip
	resp.MemberID = r.memberID
	resp.Members = r.members
	return Reply{Response: resp}
}

// syncResult is Kafka's SyncGroupResult.
type syncResult struct {
	protocolType *string
	protocolName *string
	assignment   []byte
	code         int16
}

// syncError is the result of a failed sync.
func syncError(code int16) syncResult { return syncResult{code: code} }

// syncResponse renders a sync result for a request version.
func syncResponse(version int16, r syncResult) Reply {
	resp := kmsg.NewPtrSyncGroupResponse()
	resp.Version = version
	resp.ErrorCode = r.code
	if version >= 5 { // fields of v5+
		resp.ProtocolType = r.protocolType
		resp.Protocol = r.protocolName
	}
	resp.MemberAssignment = r.assignment
	if resp.MemberAssignment == nil {
		resp.MemberAssignment = []byte{}
	}
	return Reply{Response: resp}
}

// answerJoin answers a member's parked JoinGroup, if any.
func (g *Group) answerJoin(m *member, r joinResult) bool {
	if m == nil || m.join == nil {
		return false
	}
	p := m.join
	m.join = nil
	g.reply(p.id, joinResponse(p.version, r))
	return true
}

// answerSync answers a member's parked SyncGroup, if any.
func (g *Group) answerSync(m *member, r syncResult) bool {
	if m == nil || m.sync == nil {
		return false
	}
	p := m.sync
	m.sync = nil
	g.reply(p.id, syncResponse(p.version, r))
	return true
}

// parkJoin parks a member's JoinGroup; one parked earlier (a client's
// retry; Kafka drops its callback) is answered REBALANCE_IN_PROGRESS so
// the shell never holds a request forever.
func (g *Group) parkJoin(m *member, id uint64, version int16) {
	g.answerJoin(m, joinError(m.id, kerr.RebalanceInProgress.Code))
	m.join = &parked{id: id, version: version}
}

// parkSync parks a member's SyncGroup, answering an earlier one as
// parkJoin does.
func (g *Group) parkSync(m *member, id uint64, version int16) {
	g.answerSync(m, syncError(kerr.RebalanceInProgress.Code))
	m.sync = &parked{id: id, version: version}
}

// currentMemberMetadata is the leader's member list: every member's
// metadata for the selected protocol, in join order.
func (g *Group) currentMemberMetadata() []kmsg.JoinGroupResponseMember {
	out := make([]kmsg.JoinGroupResponseMember, 0, len(g.order))
	for _, id := range g.order {
		m := g.members[id]
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID = id
		jm.InstanceID = m.instanceID
		jm.ProtocolMetadata = m.metadata(deref(g.protocolName))
		out = append(out, jm)
	}
	return out
}

// currentJoinResult is the join answer for a member of the current
// generation; the leader gets the member list.
func (g *Group) currentJoinResult(memberID string) joinResult {
	r := joinResult{
		memberID: memberID, generation: g.generation, protocolType: g.protocolType,
		protocolName: g.protocolName, leader: g.leader,
	}
	if memberID == g.leader {
		r.members = g.currentMemberMetadata()
	}
	return r
}

// maybePrepareRebalance starts a rebalance if the state allows one.
func (g *Group) maybePrepareRebalance(reason string) {
	if g.canRebalance() {
		g.prepareRebalance(reason)
	}
}

// prepareRebalance moves the group to PreparingRebalance: parked syncs
// get REBALANCE_IN_PROGRESS, the sync deadline is disarmed, and the
// delayed join is armed: the initial delay for an Empty group, else the
// rebalance timeout.
func (g *Group) prepareRebalance(reason string) {
	if g.state == CompletingRebalance {
		g.resetAndPropagateAssignmentError(kerr.RebalanceInProgress.Code)
	}
	g.removeSyncExpiration()
	if g.state == Empty {
		delay := int64(g.cfg.GroupInitialRebalanceDelayMs)
		g.join = joinTimer{
			deadline: deadline{set: true, at: g.nowMs + delay}, initial: true,
			delayMs: delay, remainingMs: max(g.rebalanceTimeoutMs()-delay, 0),
		}
	} else {
		g.join = joinTimer{deadline: deadline{set: true, at: g.nowMs + g.rebalanceTimeoutMs()}}
	}
	g.transition(PreparingRebalance)
	g.logf("preparing to rebalance group %s with old generation %d (reason: %s)", g.id, g.generation, reason)
	g.tryCompleteJoin()
}

// tryCompleteJoin completes the join phase early once every member has
// rejoined (never during the initial delay).
func (g *Group) tryCompleteJoin() {
	if g.state != PreparingRebalance || !g.join.set || g.join.initial {
		return
	}
	if g.hasAllMembersJoined() {
		g.join = joinTimer{}
		g.onCompleteJoin()
	}
}

// onJoinTimer handles the delayed join's deadline: an initial delay is
// extended while new members keep arriving and time is left before the
// rebalance timeout (Kafka's InitialDelayedJoin); otherwise the join
// phase completes.
func (g *Group) onJoinTimer() {
	if g.state != PreparingRebalance {
		return
	}
	j := g.join
	if j.initial && g.newMemberAdded && j.remainingMs != 0 {
		g.newMemberAdded = false
		delay := min(int64(g.cfg.GroupInitialRebalanceDelayMs), j.remainingMs)
		g.join = joinTimer{
			deadline: deadline{set: true, at: g.nowMs + delay}, initial: true,
			delayMs: delay, remainingMs: max(j.remainingMs-j.delayMs, 0),
		}
		return
	}
	g.onCompleteJoin()
}

// onCompleteJoin ends the join phase: dynamic members that did not rejoin
// are removed, a leader that did not rejoin is replaced, the next
// generation starts and every parked join is answered.
func (g *Group) onCompleteJoin() {
	for _, id := range slices.Clone(g.order) {
		m := g.members[id]
		if m.join == nil && m.instanceID == nil {
			g.logf("group %s: removing member %s which did not rejoin", g.id, id)
			g.remove(id)
		}
	}
	if g.state == Dead {
		return
	}
	if !g.maybeElectNewJoinedLeader() && len(g.members) > 0 {
		g.logf("group %s could not complete rebalance because no members rejoined", g.id)
		g.join = joinTimer{deadline: deadline{set: true, at: g.nowMs + max(g.rebalanceTimeoutMs(), 1)}}
		return
	}
	g.initNextGeneration()
	if g.state == Empty {
		g.logf("group %s with generation %d is now empty", g.id, g.generation)
		g.storeGroup(nil, nil, func(code int16) {
			if code != 0 {
				g.logf("group %s: failed to write empty metadata: error %d", g.id, code)
			}
		})
		return
	}
	g.logf("stabilized group %s generation %d with %d members", g.id, g.generation, len(g.members))
	for _, id := range g.order {
		m := g.members[id]
		g.answerJoin(m, g.currentJoinResult(id))
		g.scheduleHeartbeat(m, int64(m.sessionTimeoutMs))
		m.isNew = false
		g.pendingSync[id] = true
	}
	g.syncDeadline = deadline{set: true, at: g.nowMs + g.rebalanceTimeoutMs()}
	g.syncGen = g.generation
}

// maybeElectNewJoinedLeader keeps a leader that rejoined or picks the
// first member that did; false if the group has no leader or no member
// rejoined.
func (g *Group) maybeElectNewJoinedLeader() bool {
	if g.leader == "" {
		return false
	}
	if g.members[g.leader].join != nil {
		return true
	}
	for _, id := range g.order {
		if g.members[id].join != nil {
			g.logf("group %s: leader %s failed to join before the rebalance timeout; %s is the new leader", g.id, g.leader, id)
			g.leader = id
			return true
		}
	}
	return false
}

// initNextGeneration bumps the generation and selects the protocol.
func (g *Group) initNextGeneration() {
	g.generation++
	if len(g.members) > 0 {
		p := g.selectProtocol()
		g.protocolName = &p
		g.subscribed = g.computeSubscribedTopics()
		g.transition(CompletingRebalance)
	} else {
		g.protocolName = nil
		g.subscribed = g.computeSubscribedTopics()
		g.transition(Empty)
	}
	clear(g.pendingSync)
}

// removeSyncExpiration forgets the members still expected to sync.
func (g *Group) removeSyncExpiration() {
	clear(g.pendingSync)
	g.syncDeadline = deadline{}
}

// removePendingSyncMember records a member's SyncGroup.
func (g *Group) removePendingSyncMember(id string) {
	delete(g.pendingSync, id)
	if len(g.pendingSync) == 0 {
		g.syncDeadline = deadline{}
	}
}

// onExpirePendingSync removes the members that did not sync within the
// rebalance timeout after the join phase, and rebalances.
func (g *Group) onExpirePendingSync(generation int32) {
	if generation != g.generation || (g.state != CompletingRebalance && g.state != Stable) || len(g.pendingSync) == 0 {
		return
	}
	var gone []string
	for _, id := range g.order {
		if g.pendingSync[id] {
			gone = append(gone, id)
		}
	}
	for _, id := range gone {
		g.remove(id)
	}
	g.logf("group %s removed members %v which did not send their SyncGroup", g.id, gone)
	g.prepareRebalance("removing members which did not sync")
}

// removeMemberAndUpdateGroup removes a member (left, expired): its parked
// join gets UNKNOWN_MEMBER_ID (its parked sync too, which Kafka would
// drop), and the group rebalances or re-checks its join phase.
func (g *Group) removeMemberAndUpdateGroup(m *member, reason string) {
	g.answerJoin(m, joinError("", kerr.UnknownMemberID.Code))
	g.answerSync(m, syncError(kerr.UnknownMemberID.Code))
	g.remove(m.id)
	switch g.state {
	case Stable, CompletingRebalance:
		g.maybePrepareRebalance(reason)
	case PreparingRebalance:
		g.tryCompleteJoin()
	}
}

// removePendingMemberAndUpdateGroup forgets a pending member id.
func (g *Group) removePendingMemberAndUpdateGroup(id string) {
	g.remove(id)
	if g.state == PreparingRebalance {
		g.tryCompleteJoin()
	}
}

// resetAndPropagateAssignmentError clears assignments and answers every
// parked sync with code.
func (g *Group) resetAndPropagateAssignmentError(code int16) {
	for _, id := range g.order {
		g.members[id].assignment = nil
	}
	g.propagateAssignment(code)
}

// propagateAssignment answers every parked sync with the member's
// assignment (or code) and restarts its session timer.
func (g *Group) propagateAssignment(code int16) {
	for _, id := range g.order {
		m := g.members[id]
		r := syncError(code)
		if code == 0 {
			r = syncResult{protocolType: g.protocolType, protocolName: g.protocolName, assignment: m.assignment}
		}
		if g.answerSync(m, r) {
			g.scheduleHeartbeat(m, int64(m.sessionTimeoutMs))
		}
	}
}

// deref returns *s or "".
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
