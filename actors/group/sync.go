package group

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SyncGroup steps a SyncGroup request. In CompletingRebalance it is parked:
// the leader's assignment is written to __consumer_offsets and every
// parked sync is answered when that write completes.
func (g *Group) SyncGroup(m *SyncGroup) Output {
	return g.step(m.NowMs, func() { g.onSyncGroup(m) })
}

// onSyncGroup is Kafka's handleSyncGroup.
func (g *Group) onSyncGroup(m *SyncGroup) {
	req := m.Req
	fail := func(code int16) { g.reply(m.ID, syncResponse(req.Version, syncError(code))) }
	if code := ValidateGroupID(kmsg.SyncGroup.Int16(), req.Group); code != 0 {
		fail(code)
		return
	}
	if g.absent {
		fail(kerr.UnknownMemberID.Code)
		return
	}
	if code := g.validateSyncGroup(req); code != 0 {
		fail(code)
		return
	}
	switch g.state {
	case Empty:
		fail(kerr.UnknownMemberID.Code)
	case PreparingRebalance:
		fail(kerr.RebalanceInProgress.Code)
	case CompletingRebalance:
		mb := g.members[req.MemberID]
		g.parkSync(mb, m.ID, req.Version)
		g.removePendingSyncMember(mb.id)
		if mb.id == g.leader {
			g.onLeaderAssignment(req)
		}
	case Stable:
		mb := g.members[req.MemberID]
		g.removePendingSyncMember(mb.id)
		g.reply(m.ID, syncResponse(req.Version, syncResult{
			protocolType: g.protocolType, protocolName: g.protocolName, assignment: mb.assignment,
		}))
		g.scheduleHeartbeat(mb, int64(mb.sessionTimeoutMs))
	}
}

// validateSyncGroup is Kafka's validateSyncGroup.
func (g *Group) validateSyncGroup(req *kmsg.SyncGroupRequest) int16 {
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable.Code
	}
	if code := g.validateCurrentMember(req.MemberID, req.InstanceID, "sync-group"); code != 0 {
		return code
	}
	switch {
	case req.Generation != g.generation:
		return kerr.IllegalGeneration.Code
	case req.ProtocolType != nil && (g.protocolType == nil || *g.protocolType != *req.ProtocolType):
		return kerr.InconsistentGroupProtocol.Code
	case req.Protocol != nil && (g.protocolName == nil || *g.protocolName != *req.Protocol):
		return kerr.InconsistentGroupProtocol.Code
	}
	return 0
}

// onLeaderAssignment persists the leader's assignment: members it leaves
// out get an empty one, entries for unknown members are ignored. When the
// write completes in the same generation, every parked sync is answered
// and the group is Stable; a failed write answers them with the error and
// rebalances.
func (g *Group) onLeaderAssignment(req *kmsg.SyncGroupRequest) {
	assignment := make(map[string][]byte, len(g.members))
	for _, a := range req.GroupAssignment {
		if _, ok := g.members[a.MemberID]; !ok {
			g.logf("group %s: leader %s sent an assignment for unknown member %s; ignored", g.id, req.MemberID, a.MemberID)
			continue
		}
		assignment[a.MemberID] = a.MemberAssignment
	}
	var missing []string
	for _, id := range g.order {
		if _, ok := assignment[id]; !ok {
			assignment[id] = []byte{}
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		g.logf("group %s: setting empty assignments for members %v in generation %d", g.id, missing, g.generation)
	}
	g.logf("group %s: assignment received from leader %s for generation %d (%d members)", g.id, req.MemberID, g.generation, len(g.members))
	gen := g.generation
	g.storeGroup(assignment, g.parkedSyncs(), func(code int16) {
		if g.state != CompletingRebalance || gen != g.generation {
			return
		}
		if code != 0 {
			g.resetAndPropagateAssignmentError(code)
			g.maybePrepareRebalance("error storing the group assignment")
			return
		}
		for _, id := range g.order {
			g.members[id].assignment = assignment[id]
		}
		g.propagateAssignment(0)
		g.transition(Stable)
	})
}

// parkedSyncs lists the request ids of the parked syncs.
func (g *Group) parkedSyncs() []uint64 {
	var ids []uint64
	for _, id := range g.order {
		if p := g.members[id].sync; p != nil {
			ids = append(ids, p.id)
		}
	}
	return ids
}

// storeGroup appends the group's metadata record with the assignment
// (Kafka's storeGroup); done gets the append's outcome mapped as Kafka's
// GroupMetadataManager maps it.
func (g *Group) storeGroup(assignment map[string][]byte, waiting []uint64, done func(code int16)) {
	v, size := g.metadataValue(assignment)
	rec := Record{Key: groupMetadataKey(g.id), Value: v.AppendTo(make([]byte, 0, size))}
	g.appendRecords([]Record{rec}, waiting, func(code int16, _ int64) { done(groupAppendError(code)) })
}

// metadataValue is the group's GroupMetadataValue (version 3, as Kafka
// writes it) with the members' assignment, and a bound on its encoded
// size. Its byte fields alias the members' metadata and assignment, so it
// must be encoded before the group changes; encoding it into a buffer of
// that size copies them once.
func (g *Group) metadataValue(assignment map[string][]byte) (*kmsg.GroupMetadataValue, int) {
	v := new(kmsg.GroupMetadataValue)
	v.Default()
	v.Version = 3
	v.ProtocolType = deref(g.protocolType)
	v.Generation = g.generation
	v.Protocol = cloneString(g.protocolName)
	if g.leader != "" {
		v.Leader = cloneString(&g.leader)
	}
	v.CurrentStateTimestamp = g.stateTimestampMs
	// Each string and bytes field costs at most its length plus a 4-byte
	// prefix; the fixed fields fit in 64 bytes per value and per member.
	size := 64 + len(v.ProtocolType) + len(deref(v.Protocol)) + len(deref(v.Leader)) + 12
	for _, id := range g.order {
		m := g.members[id]
		vm := kmsg.NewGroupMetadataValueMember()
		vm.MemberID = id
		vm.InstanceID = cloneString(m.instanceID)
		vm.ClientID = m.clientID
		vm.ClientHost = m.clientHost
		vm.RebalanceTimeoutMillis = m.rebalanceTimeoutMs
		vm.SessionTimeoutMillis = m.sessionTimeoutMs
		vm.Subscription = m.metadata(deref(g.protocolName))
		vm.Assignment = assignment[id]
		if vm.Assignment == nil {
			vm.Assignment = []byte{}
		}
		if vm.Subscription == nil {
			vm.Subscription = []byte{}
		}
		v.Members = append(v.Members, vm)
		size += 64 + len(id) + len(deref(vm.InstanceID)) + len(vm.ClientID) + len(vm.ClientHost) + len(vm.Subscription) + len(vm.Assignment)
	}
	return v, size
}
