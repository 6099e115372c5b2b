package group

import (
	"fmt"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Group is one classic consumer group's decision logic, Kafka's
// GroupCoordinator and GroupMetadata for a single group id: membership,
// the rebalance state machine, committed offsets and the records that
// persist them. It is stepped by messages and returns what to reply and
// append (see the package doc for the caller's duties). It does no I/O,
// reads no clock and is not safe for concurrent use.
type Group struct {
	cfg Config
	id  string
	// absent: Kafka would hold no such group; the first step that would
	// create it in Kafka's cache clears the flag.
	absent bool

	state            State
	stateTimestampMs int64 // -1: unknown (old record schema)
	protocolType     *string
	protocolName     *string
	generation       int32
	leader           string // "": none

	members        map[string]*member
	order          []string          // member ids in the order they joined
	static         map[string]string // group.instance.id -> member id
	pendingMembers map[string]int64  // member id -> expiry deadline
	pendingSync    map[string]bool
	newMemberAdded bool
	// subscribed is the union of the members' subscribed topics for a
	// "consumer" group; nil when unknown (Kafka's None).
	subscribed map[string]bool

	join         joinTimer
	syncDeadline deadline
	syncGen      int32
	nextExpiryMs int64

	offsets offsetStore

	appends      map[uint64]*pendingAppend
	nextAppendID uint64

	nowMs int64
	out   *Output
}

// deadline is an armed timer (at is meaningful only when set).
type deadline struct {
	set bool
	at  int64
}

// joinTimer is the rebalance's delayed join: Kafka's DelayedJoin, or its
// InitialDelayedJoin (initial) with the delay and the time left before the
// rebalance timeout.
type joinTimer struct {
	deadline
	initial     bool
	delayMs     int64
	remainingMs int64
}

// pendingAppend is an Append waiting for its AppendCompleted.
type pendingAppend struct {
	waiting []uint64
	done    func(code int16, baseOffset int64)
}

// NewGroup returns the group id as Kafka sees a group it does not hold
// yet: requests are answered as for an unknown group, and the group comes
// into being only on a step that creates it in Kafka (a JoinGroup without
// member id, an OffsetCommit with generation -1). Until then every Output
// has Removed set.
func NewGroup(cfg Config, id string, nowMs int64) (*Group, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := newGroup(cfg, id, nowMs)
	g.absent = true
	return g, nil
}

// newGroup returns an existing Empty group.
func newGroup(cfg Config, id string, nowMs int64) *Group {
	return &Group{
		cfg: cfg, id: id, state: Empty, stateTimestampMs: nowMs,
		members: map[string]*member{}, static: map[string]string{},
		pendingMembers: map[string]int64{}, pendingSync: map[string]bool{},
		offsets: newOffsetStore(), appends: map[uint64]*pendingAppend{},
		nowMs: nowMs, nextExpiryMs: nowMs + cfg.OffsetsRetentionCheckIntervalMs,
	}
}

// ID returns the group id.
func (g *Group) ID() string { return g.id }

// State returns the group's state.
func (g *Group) State() State { return g.state }

// Generation returns the generation id.
func (g *Group) Generation() int32 { return g.generation }

// Tick fires every deadline at or before m.NowMs.
func (g *Group) Tick(m *Tick) Output { return g.step(m.NowMs, func() {}) }

// AppendCompleted completes an Append: it applies what the write made
// durable and sends the replies that waited for it. Unknown IDs (an
// append abandoned by Unload) are ignored.
func (g *Group) AppendCompleted(m *AppendCompleted) Output {
	return g.step(m.NowMs, func() {
		pa, ok := g.appends[m.ID]
		if !ok {
			return
		}
		delete(g.appends, m.ID)
		pa.done(m.ErrorCode, m.BaseOffset)
	})
}

// Unload makes the group Dead because its partition moved away: parked
// joins and syncs, and every reply waiting for an append, are answered
// NOT_COORDINATOR; later AppendCompleted messages are ignored.
func (g *Group) Unload(m *Unload) Output {
	return g.step(m.NowMs, func() {
		if g.absent {
			return
		}
		g.logf("unloading group %s with generation %d", g.id, g.generation)
		for _, id := range slices.Clone(g.order) {
			mb := g.members[id]
			g.answerJoin(mb, joinError(mb.id, kerr.NotCoordinator.Code))
			g.answerSync(mb, syncError(kerr.NotCoordinator.Code))
		}
		g.toDead()
		ids := make([]uint64, 0, len(g.appends))
		for id := range g.appends {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			pa := g.appends[id]
			delete(g.appends, id)
			pa.done(kerr.NotLeaderForPartition.Code, -1)
		}
	})
}

// step runs fn at nowMs between two passes over due deadlines and fills
// the Output's bookkeeping fields.
func (g *Group) step(nowMs int64, fn func()) Output {
	var out Output
	g.out = &out
	g.fireDue(max(g.nowMs, nowMs))
	fn()
	g.fireDue(g.nowMs)
	g.out = nil
	out.NextDeadlineMs = g.nextDeadline()
	out.Removed = g.removable()
	return out
}

// removable reports whether the shell may drop the group.
func (g *Group) removable() bool {
	if g.absent {
		return true
	}
	if g.state != Dead {
		return false
	}
	for _, pa := range g.appends {
		if len(pa.waiting) > 0 {
			return false
		}
	}
	return true
}

// toDead moves the group to Dead and disarms its timers.
func (g *Group) toDead() {
	g.transition(Dead)
	g.join = joinTimer{}
	g.syncDeadline = deadline{}
	for _, mb := range g.members {
		mb.heartbeatDeadlineMs = 0
	}
	clear(g.pendingMembers)
}

// transition moves the group to s and stamps the time.
func (g *Group) transition(s State) {
	if !g.state.canEnter(s) {
		g.logf("group %s: unexpected transition from %s to %s", g.id, g.state, s)
	}
	g.state = s
	g.stateTimestampMs = g.nowMs
}

// reply queues a response to request id.
func (g *Group) reply(id uint64, r Reply) {
	r.ID = id
	g.out.Replies = append(g.out.Replies, r)
}

// logf queues a log line.
func (g *Group) logf(format string, args ...any) {
	if g.out != nil {
		g.out.Logs = append(g.out.Logs, fmt.Sprintf(format, args...))
	}
}

// appendRecords queues an Append; done runs on its AppendCompleted.
func (g *Group) appendRecords(recs []Record, waiting []uint64, done func(code int16, base int64)) {
	g.nextAppendID++
	id := g.nextAppendID
	g.appends[id] = &pendingAppend{waiting: waiting, done: done}
	g.out.Appends = append(g.out.Appends, &Append{ID: id, TimestampMs: g.nowMs, Records: recs, Waiting: waiting})
}

// Membership bookkeeping.

// add adds a member (Kafka's GroupMetadata.add).
func (g *Group) add(m *member) {
	if m.instanceID != nil {
		g.static[*m.instanceID] = m.id
	}
	if len(g.members) == 0 {
		pt := m.protocolType
		g.protocolType = &pt
	}
	if g.leader == "" {
		g.leader = m.id
	}
	g.members[m.id] = m
	g.order = append(g.order, m.id)
	delete(g.pendingMembers, m.id)
}

// remove drops a member; a leader is replaced by the longest-standing
// member left.
func (g *Group) remove(id string) {
	if m, ok := g.members[id]; ok {
		delete(g.members, id)
		g.order = slices.DeleteFunc(g.order, func(s string) bool { return s == id })
		if m.instanceID != nil {
			delete(g.static, *m.instanceID)
		}
	}
	if g.leader == id {
		g.leader = ""
		if len(g.order) > 0 {
			g.leader = g.order[0]
		}
	}
	delete(g.pendingMembers, id)
	delete(g.pendingSync, id)
}

// replaceStatic gives a static member a new member id, fencing requests
// parked under the old one with FENCED_INSTANCE_ID.
func (g *Group) replaceStatic(instanceID, oldID, newID string) *member {
	m := g.members[oldID]
	g.answerJoin(m, joinError(oldID, kerr.FencedInstanceID.Code))
	g.answerSync(m, syncError(kerr.FencedInstanceID.Code))
	delete(g.members, oldID)
	m.id = newID
	g.members[newID] = m
	g.order[slices.Index(g.order, oldID)] = newID
	if g.leader == oldID {
		g.leader = newID
	}
	g.static[instanceID] = newID
	return m
}

// currentStaticMember returns the member id mapped to an instance id.
func (g *Group) currentStaticMember(instanceID *string) (string, bool) {
	if instanceID == nil {
		return "", false
	}
	id, ok := g.static[*instanceID]
	return id, ok
}

// validateCurrentMember is Kafka's check that a request's (member id,
// instance id) names a current member: FENCED_INSTANCE_ID when the
// instance id maps to another member id, UNKNOWN_MEMBER_ID when either is
// unknown.
func (g *Group) validateCurrentMember(memberID string, instanceID *string, op string) int16 {
	if instanceID != nil {
		cur, ok := g.static[*instanceID]
		switch {
		case !ok:
			return kerr.UnknownMemberID.Code
		case cur != memberID:
			g.logf("group %s: %s from member %s with group.instance.id %s fenced by current member %s",
				g.id, op, memberID, *instanceID, cur)
			return kerr.FencedInstanceID.Code
		}
		return 0
	}
	if _, ok := g.members[memberID]; !ok {
		return kerr.UnknownMemberID.Code
	}
	return 0
}

// rebalanceTimeoutMs is the largest rebalance timeout of the members.
func (g *Group) rebalanceTimeoutMs() int64 {
	var t int32
	for _, m := range g.members {
		t = max(t, m.rebalanceTimeoutMs)
	}
	return int64(t)
}

// numAwaitingJoin counts the members with a parked JoinGroup.
func (g *Group) numAwaitingJoin() int {
	n := 0
	for _, m := range g.members {
		if m.join != nil {
			n++
		}
	}
	return n
}

// hasAllMembersJoined: every member has rejoined and no member id handed
// out with MEMBER_ID_REQUIRED is still expected.
func (g *Group) hasAllMembersJoined() bool {
	return g.numAwaitingJoin() == len(g.members) && len(g.pendingMembers) == 0
}

// canRebalance reports whether a rebalance may start from the state.
func (g *Group) canRebalance() bool { return g.state.canEnter(PreparingRebalance) }

// supportedCounts counts, per protocol name, the members supporting it.
func (g *Group) supportedCounts() map[string]int {
	counts := map[string]int{}
	for _, m := range g.members {
		for _, p := range m.protocols {
			counts[p.name]++
		}
	}
	return counts
}

// supportsProtocols is Kafka's check of a joining member's protocols: an
// Empty group takes any non-empty type and list; otherwise the type must
// match and one protocol must be supported by every current member.
func (g *Group) supportsProtocols(protocolType string, names map[string]bool) bool {
	if g.state == Empty {
		return protocolType != "" && len(names) > 0
	}
	if g.protocolType == nil || *g.protocolType != protocolType {
		return false
	}
	counts := g.supportedCounts()
	for n := range names {
		if counts[n] == len(g.members) {
			return true
		}
	}
	return false
}

// selectProtocol picks the protocol every member supports with the most
// votes, each member voting for its most preferred candidate (Kafka's
// selectProtocol). Kafka breaks ties arbitrarily; here the tied protocol
// voted for first, in join order, wins.
func (g *Group) selectProtocol() string {
	counts := g.supportedCounts()
	candidates := map[string]bool{}
	for n, c := range counts {
		if c == len(g.members) {
			candidates[n] = true
		}
	}
	votes := map[string]int{}
	var order []string
	for _, id := range g.order {
		v := g.members[id].vote(candidates)
		if votes[v] == 0 {
			order = append(order, v)
		}
		votes[v]++
	}
	best := ""
	for _, p := range order {
		if best == "" || votes[p] > votes[best] {
			best = p
		}
	}
	return best
}

// Deadlines.

// scheduleHeartbeat arms a member's session deadline.
func (g *Group) scheduleHeartbeat(m *member, timeoutMs int64) {
	m.heartbeatDeadlineMs = g.nowMs + timeoutMs
}

// dueKind names a deadline.
type dueKind uint8

const (
	dueJoin dueKind = iota
	dueSync
	dueMember
	duePending
	dueExpiry
)

// nextDue returns the earliest deadline at or before target, if any.
func (g *Group) nextDue(target int64) (dueKind, string, int64, bool) {
	var (
		kind  dueKind
		key   string
		at    int64
		found bool
	)
	consider := func(k dueKind, s string, t int64) {
		if t <= target && (!found || t < at) {
			kind, key, at, found = k, s, t, true
		}
	}
	if g.join.set {
		consider(dueJoin, "", g.join.at)
	}
	if g.syncDeadline.set {
		consider(dueSync, "", g.syncDeadline.at)
	}
	for _, id := range g.order {
		if d := g.members[id].heartbeatDeadlineMs; d != 0 {
			consider(dueMember, id, d)
		}
	}
	pending := make([]string, 0, len(g.pendingMembers))
	for id := range g.pendingMembers {
		pending = append(pending, id)
	}
	sort.Strings(pending)
	for _, id := range pending {
		consider(duePending, id, g.pendingMembers[id])
	}
	if !g.absent && g.state != Dead {
		consider(dueExpiry, "", g.nextExpiryMs)
	}
	return kind, key, at, found
}

// nextDeadline returns the earliest armed deadline (0: none).
func (g *Group) nextDeadline() int64 {
	var next int64
	take := func(t int64) {
		if next == 0 || t < next {
			next = t
		}
	}
	if g.join.set {
		take(g.join.at)
	}
	if g.syncDeadline.set {
		take(g.syncDeadline.at)
	}
	for _, m := range g.members {
		if m.heartbeatDeadlineMs != 0 {
			take(m.heartbeatDeadlineMs)
		}
	}
	for _, t := range g.pendingMembers {
		take(t)
	}
	if !g.absent && g.state != Dead {
		take(g.nextExpiryMs)
	}
	return next
}

// maxFiresPerStep bounds one step's timer firings (a guard; every firing
// disarms or moves its own deadline).
const maxFiresPerStep = 1 << 20

// fireDue advances the group's time to target, firing every deadline up
// to it in time order, each at its own time, as exact timers would (a
// late Tick therefore changes nothing but the moment replies leave).
func (g *Group) fireDue(target int64) {
	defer func() { g.nowMs = target }()
	for range maxFiresPerStep {
		kind, key, at, ok := g.nextDue(target)
		if !ok {
			return
		}
		g.nowMs = max(g.nowMs, at)
		switch kind {
		case dueJoin:
			g.join.set = false
			g.onJoinTimer()
		case dueSync:
			g.syncDeadline = deadline{}
			g.onExpirePendingSync(g.syncGen)
		case dueMember:
			g.onExpireHeartbeat(g.members[key])
		case duePending:
			delete(g.pendingMembers, key)
			g.logf("group %s: pending member %s removed after its session timeout", g.id, key)
			g.removePendingMemberAndUpdateGroup(key)
		case dueExpiry:
			g.nextExpiryMs = g.nowMs + g.cfg.OffsetsRetentionCheckIntervalMs
			g.expireOffsets()
		}
	}
}

// onExpireHeartbeat handles a member's session deadline.
func (g *Group) onExpireHeartbeat(m *member) {
	m.heartbeatDeadlineMs = 0
	if !m.expiresAtDeadline() {
		return
	}
	g.logf("group %s: member %s has failed (session timeout), removing it", g.id, m.id)
	g.removeMemberAndUpdateGroup(m, "removing member "+m.id+" on heartbeat expiration")
}
