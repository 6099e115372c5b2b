package group

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/log/batch"
)

// TestScenarios replays testdata/*.txt. To regenerate the expected output
// after a deliberate change: go test ./actors/group -run TestScenarios
// -rewrite.
//
// Commands (one group "g" per scenario; times in ms; request ids are
// chosen by the file):
//
//	new [delay=D] [max-size=N] [retention=R] [check=C] [now=T]: a fresh
//	  (not yet existing) group with group.initial.rebalance.delay.ms D
//	join id=R [member=M] [instance=I] [v=V] [protos=range:t1+t2,rr:t1]
//	  [type=consumer] [session=S] [rebalance=B] [client=c] [now=T]
//	sync id=R member=M gen=N [instance=I] [v=V] [assign=M1:x,M2:y]
//	  [ptype=P] [pname=P] [now=T]
//	hb id=R member=M gen=N [instance=I] [v=V] [now=T]
//	leave id=R [v=V] [member=M] [members=M1/I1,/I2] [now=T]
//	commit id=R [member=M] [gen=N] [instance=I] [v=V]
//	  offsets=t:0:10[:meta],... [unknown=t:1] [now=T]
//	fetch [topics=t:0+1] [stable]: OffsetFetch of the group
//	odelete id=R topics=t:0+1 [unknown=t:2] [now=T]
//	delete id=R [v=V] [now=T]
//	describe [v=V] | list [states=a,b] [types=c]
//	tick now=T | unload [now=T]
//	done append=A [err=CODE] [now=T]: complete an append (appended to a
//	  simulated __consumer_offsets log on success)
//	reload [now=T]: load the simulated log into a new group and print its
//	  state
//	state: the group's state
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := &scenario{}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			return s.run(t, td)
		})
	})
}

type scenario struct {
	cfg  Config
	g    *Group
	now  int64
	ids  int
	log  [][]byte // batches of the simulated __consumer_offsets log
	leo  int64
	apps map[uint64]*Append
}

func (s *scenario) run(t *testing.T, td *datadriven.TestData) string {
	if td.Cmd != "new" && s.g == nil {
		s.reset(t, td)
	}
	if td.HasArg("now") {
		td.ScanArgs(t, "now", &s.now)
	}
	switch td.Cmd {
	case "new":
		s.reset(t, td)
		return "ok"
	case "join":
		return s.render(s.g.JoinGroup(s.join(t, td)))
	case "sync":
		return s.render(s.g.SyncGroup(s.sync(t, td)))
	case "hb":
		req := kmsg.NewPtrHeartbeatRequest()
		req.Version, req.Group = int16(intArg(t, td, "v", 4)), "g"
		req.MemberID, req.Generation, req.InstanceID = strArg(td, "member", ""), int32(intArg(t, td, "gen", -1)), optArg(td, "instance")
		return s.render(s.g.Heartbeat(&Heartbeat{ID: uint64(intArg(t, td, "id", 0)), Req: req, NowMs: s.now}))
	case "leave":
		return s.render(s.g.LeaveGroup(s.leave(t, td)))
	case "commit":
		return s.render(s.g.OffsetCommit(s.commit(t, td)))
	case "fetch":
		return s.fetch(t, td)
	case "odelete":
		return s.render(s.g.OffsetDelete(s.odelete(t, td)))
	case "delete":
		return s.render(s.g.DeleteGroup(&DeleteGroup{ID: uint64(intArg(t, td, "id", 0)), Version: int16(intArg(t, td, "v", 2)), NowMs: s.now}))
	case "describe":
		return describeString(s.g.Describe(int16(intArg(t, td, "v", 5))))
	case "list":
		o := s.g.Overview()
		states, types := listArg(td, "states"), listArg(td, "types")
		if !o.Matches(states, types) {
			return "(not listed)"
		}
		l := o.Listed()
		return fmt.Sprintf("%s type=%q state=%s group-type=%s", l.Group, l.ProtocolType, l.GroupState, l.GroupType)
	case "tick":
		return s.render(s.g.Tick(&Tick{NowMs: s.now}))
	case "topics-deleted":
		return s.render(s.g.TopicsDeleted(&TopicsDeleted{NowMs: s.now, Topics: listArg(td, "topics")}))
	case "unload":
		return s.render(s.g.Unload(&Unload{NowMs: s.now}))
	case "done":
		return s.done(t, td)
	case "reload":
		return s.reload(t)
	case "state":
		return stateString(s.g)
	}
	t.Fatalf("unknown command %s", td.Cmd)
	return ""
}

func (s *scenario) reset(t *testing.T, td *datadriven.TestData) {
	s.cfg = DefaultConfig()
	s.cfg.GroupInitialRebalanceDelayMs = int32(intArg(t, td, "delay", 0))
	s.cfg.GroupMaxSize = int32(intArg(t, td, "max-size", int(s.cfg.GroupMaxSize)))
	s.cfg.OffsetsRetentionMs = int64(intArg(t, td, "retention", int(s.cfg.OffsetsRetentionMs)))
	s.cfg.OffsetsRetentionCheckIntervalMs = int64(intArg(t, td, "check", int(s.cfg.OffsetsRetentionCheckIntervalMs)))
	s.cfg.OffsetMetadataMaxBytes = int32(intArg(t, td, "max-metadata", 4096))
	s.ids = 0
	s.cfg.MemberIDSuffix = func() string { s.ids++; return strconv.Itoa(s.ids) }
	s.now = 0
	g, err := NewGroup(s.cfg, "g", s.now)
	if err != nil {
		t.Fatal(err)
	}
	s.g, s.log, s.leo, s.apps = g, nil, 0, map[uint64]*Append{}
}

func (s *scenario) join(t *testing.T, td *datadriven.TestData) *JoinGroup {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version, req.Group = int16(intArg(t, td, "v", 5)), strArg(td, "group", "g")
	req.MemberID, req.InstanceID = strArg(td, "member", ""), optArg(td, "instance")
	req.SessionTimeoutMillis = int32(intArg(t, td, "session", 10000))
	req.RebalanceTimeoutMillis = int32(intArg(t, td, "rebalance", 30000))
	req.ProtocolType = strArg(td, "type", "consumer")
	for _, p := range listArg(td, "protos") {
		name, topics, _ := strings.Cut(p, ":")
		req.Protocols = append(req.Protocols, kmsg.JoinGroupRequestProtocol{Name: name, Metadata: subscription(topics)})
	}
	if !td.HasArg("protos") {
		req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: subscription("t")}}
	}
	return &JoinGroup{ID: uint64(intArg(t, td, "id", 0)), Req: req, ClientID: strArg(td, "client", "c"), ClientHost: "/127.0.0.1", NowMs: s.now}
}

// subscription encodes a consumer subscription of topics joined by "+";
// "bad" gives bytes that do not parse.
func subscription(topics string) []byte {
	if topics == "bad" {
		return []byte{0}
	}
	m := kmsg.NewConsumerMemberMetadata()
	if topics != "" {
		m.Topics = strings.Split(topics, "+")
	}
	return m.AppendTo(nil)
}

func (s *scenario) sync(t *testing.T, td *datadriven.TestData) *SyncGroup {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version, req.Group = int16(intArg(t, td, "v", 5)), "g"
	req.MemberID, req.Generation, req.InstanceID = strArg(td, "member", ""), int32(intArg(t, td, "gen", -1)), optArg(td, "instance")
	req.ProtocolType, req.Protocol = optArg(td, "ptype"), optArg(td, "pname")
	for _, a := range listArg(td, "assign") {
		m, v, _ := strings.Cut(a, ":")
		req.GroupAssignment = append(req.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: m, MemberAssignment: []byte(v)})
	}
	return &SyncGroup{ID: uint64(intArg(t, td, "id", 0)), Req: req, NowMs: s.now}
}

func (s *scenario) leave(t *testing.T, td *datadriven.TestData) *LeaveGroup {
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version, req.Group = int16(intArg(t, td, "v", 3)), strArg(td, "group", "g")
	req.MemberID = strArg(td, "member", "")
	for _, m := range listArg(td, "members") {
		id, inst, hasInst := strings.Cut(m, "/")
		lm := kmsg.NewLeaveGroupRequestMember()
		lm.MemberID = id
		if hasInst {
			lm.InstanceID = &inst
		}
		req.Members = append(req.Members, lm)
	}
	return &LeaveGroup{ID: uint64(intArg(t, td, "id", 0)), Req: req, NowMs: s.now}
}

func (s *scenario) commit(t *testing.T, td *datadriven.TestData) *OffsetCommit {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group = int16(intArg(t, td, "v", 7)), strArg(td, "group", "g")
	req.MemberID, req.Generation, req.InstanceID = strArg(td, "member", ""), int32(intArg(t, td, "gen", -1)), optArg(td, "instance")
	for _, o := range listArg(td, "offsets") {
		f := strings.Split(o, ":")
		p, _ := strconv.Atoi(f[1])
		off, _ := strconv.Atoi(f[2])
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = int32(p), int64(off), 3
		if len(f) > 3 {
			md := f[3]
			if strings.HasPrefix(md, "x") { // xN: N bytes of metadata
				n, _ := strconv.Atoi(md[1:])
				md = strings.Repeat("m", n)
			}
			rp.Metadata = &md
		}
		if len(req.Topics) == 0 || req.Topics[len(req.Topics)-1].Topic != f[0] {
			req.Topics = append(req.Topics, kmsg.OffsetCommitRequestTopic{Topic: f[0]})
		}
		last := &req.Topics[len(req.Topics)-1]
		last.Partitions = append(last.Partitions, rp)
	}
	return &OffsetCommit{ID: uint64(intArg(t, td, "id", 0)), Req: req, PartitionErrors: unknownArg(td), NowMs: s.now}
}

func (s *scenario) odelete(t *testing.T, td *datadriven.TestData) *OffsetDelete {
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Group = strArg(td, "group", "g")
	for _, tp := range topicsArg(td, "topics") {
		rt := kmsg.OffsetDeleteRequestTopic{Topic: tp.Topic}
		for _, p := range tp.Partitions {
			rt.Partitions = append(rt.Partitions, kmsg.OffsetDeleteRequestTopicPartition{Partition: p})
		}
		req.Topics = append(req.Topics, rt)
	}
	return &OffsetDelete{ID: uint64(intArg(t, td, "id", 0)), Req: req, PartitionErrors: unknownArg(td), NowMs: s.now}
}

func (s *scenario) fetch(t *testing.T, td *datadriven.TestData) string {
	var topics []kmsg.OffsetFetchRequestGroupTopic
	if td.HasArg("topics") {
		topics = topicsArg(td, "topics")
	}
	r := s.g.FetchOffsets(topics, td.HasArg("stable"))
	var b strings.Builder
	fmt.Fprintf(&b, "fetch err=%s", errName(r.ErrorCode))
	for _, tp := range r.Topics {
		for _, p := range tp.Partitions {
			fmt.Fprintf(&b, " %s-%d=%d/e%d/%q/%s", tp.Topic, p.Partition, p.Offset, p.LeaderEpoch, deref(p.Metadata), errName(p.ErrorCode))
		}
	}
	return b.String()
}

func (s *scenario) done(t *testing.T, td *datadriven.TestData) string {
	id := uint64(intArg(t, td, "append", 0))
	code := int16(intArg(t, td, "err", 0))
	a := s.apps[id]
	if a == nil {
		return fmt.Sprintf("no append %d", id)
	}
	base := int64(-1)
	if code == 0 {
		b, err := a.Batch()
		if err != nil {
			t.Fatal(err)
		}
		base = s.leo
		batch.SetBaseOffset(b, base)
		s.log = append(s.log, b)
		s.leo += int64(len(a.Records))
	}
	return s.render(s.g.AppendCompleted(&AppendCompleted{ID: id, BaseOffset: base, ErrorCode: code, NowMs: s.now}))
}

func (s *scenario) reload(t *testing.T) string {
	l := NewLoader()
	for _, b := range s.log {
		if err := l.AddBatch(b); err != nil {
			t.Fatal(err)
		}
	}
	groups, err := l.Groups(s.cfg, s.now)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) == 0 {
		g, _ := NewGroup(s.cfg, "g", s.now)
		s.g = g
		return "no groups loaded"
	}
	s.g, s.apps = groups[0], map[uint64]*Append{}
	return stateString(s.g)
}

// render prints an Output.
func (s *scenario) render(out Output) string {
	var b strings.Builder
	for _, r := range out.Replies {
		fmt.Fprintf(&b, "reply %d: %s\n", r.ID, replyString(r.Response))
	}
	for _, a := range out.Appends {
		s.apps[a.ID] = a
		fmt.Fprintf(&b, "append %d waiting %v:\n", a.ID, a.Waiting)
		for _, r := range a.Records {
			fmt.Fprintf(&b, "  %s\n", recordString(r))
		}
	}
	for _, l := range out.Logs {
		fmt.Fprintf(&b, "log: %s\n", l)
	}
	if out.Removed {
		b.WriteString("removed\n")
	}
	if b.Len() == 0 {
		return "(nothing)"
	}
	return strings.TrimRight(b.String(), "\n")
}

func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return e.Message
	}
	return strconv.Itoa(int(code))
}

func replyString(resp kmsg.Response) string {
	switch r := resp.(type) {
	case *kmsg.JoinGroupResponse:
		s := fmt.Sprintf("join v%d err=%s gen=%d member=%s leader=%s proto=%q", r.Version, errName(r.ErrorCode), r.Generation, r.MemberID, r.LeaderID, deref(r.Protocol))
		if r.ProtocolType != nil {
			s += " ptype=" + *r.ProtocolType
		}
		if r.SkipAssignment {
			s += " skip-assignment"
		}
		if len(r.Members) > 0 {
			var ms []string
			for _, m := range r.Members {
				ms = append(ms, m.MemberID+instSuffix(m.InstanceID)+"("+metaString(m.ProtocolMetadata)+")")
			}
			s += " members=" + strings.Join(ms, ",")
		}
		return s
	case *kmsg.SyncGroupResponse:
		s := fmt.Sprintf("sync err=%s assignment=%q", errName(r.ErrorCode), r.MemberAssignment)
		if r.ProtocolType != nil || r.Protocol != nil {
			s += fmt.Sprintf(" ptype=%s pname=%s", deref(r.ProtocolType), deref(r.Protocol))
		}
		return s
	case *kmsg.HeartbeatResponse:
		return "heartbeat err=" + errName(r.ErrorCode)
	case *kmsg.LeaveGroupResponse:
		s := "leave err=" + errName(r.ErrorCode)
		for _, m := range r.Members {
			s += fmt.Sprintf(" %s%s=%s", m.MemberID, instSuffix(m.InstanceID), errName(m.ErrorCode))
		}
		return s
	case *kmsg.OffsetCommitResponse:
		s := "commit"
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				s += fmt.Sprintf(" %s-%d=%s", t.Topic, p.Partition, errName(p.ErrorCode))
			}
		}
		return s
	case *kmsg.OffsetDeleteResponse:
		s := "offset-delete err=" + errName(r.ErrorCode)
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				s += fmt.Sprintf(" %s-%d=%s", t.Topic, p.Partition, errName(p.ErrorCode))
			}
		}
		return s
	case *kmsg.DeleteGroupsResponse:
		return fmt.Sprintf("delete %s err=%s", r.Groups[0].Group, errName(r.Groups[0].ErrorCode))
	}
	return fmt.Sprintf("%T", resp)
}

func instSuffix(s *string) string {
	if s == nil {
		return ""
	}
	return "/" + *s
}

// metaString shows a consumer subscription's topics.
func metaString(b []byte) string {
	ts, err := subscribedTopics(b)
	if err != nil {
		return fmt.Sprintf("%q", b)
	}
	return strings.Join(ts, "+")
}

func recordString(r Record) string {
	k, err := DecodeKey(r.Key)
	if err != nil {
		return "bad key: " + err.Error()
	}
	switch k.Kind {
	case KeyOffset:
		if r.Value == nil {
			return fmt.Sprintf("tombstone offset %s/%s-%d", k.Group, k.Topic, k.Partition)
		}
		om, err := DecodeOffsetValue(r.Value)
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("offset %s/%s-%d = %d epoch=%d meta=%q ts=%d", k.Group, k.Topic, k.Partition, om.Offset, om.LeaderEpoch, om.Metadata, om.CommitTimestampMs)
	case KeyGroup:
		if r.Value == nil {
			return "tombstone group " + k.Group
		}
		v, err := DecodeGroupValue(r.Value)
		if err != nil {
			return err.Error()
		}
		var ms []string
		for _, m := range v.Members {
			ms = append(ms, fmt.Sprintf("%s%s(%s;%q;s=%d,r=%d)", m.MemberID, instSuffix(m.InstanceID), metaString(m.Subscription), m.Assignment, m.SessionTimeoutMillis, m.RebalanceTimeoutMillis))
		}
		return fmt.Sprintf("group %s v%d type=%q gen=%d proto=%q leader=%q ts=%d members=[%s]", k.Group, v.Version, v.ProtocolType, v.Generation, deref(v.Protocol), deref(v.Leader), v.CurrentStateTimestamp, strings.Join(ms, " "))
	}
	return "unknown key"
}

func describeString(d kmsg.DescribeGroupsResponseGroup) string {
	s := fmt.Sprintf("describe %s err=%s state=%s type=%q proto=%q", d.Group, errName(d.ErrorCode), d.State, d.ProtocolType, d.Protocol)
	for _, m := range d.Members {
		s += fmt.Sprintf("\n  %s%s client=%s host=%s meta=%s assignment=%q", m.MemberID, instSuffix(m.InstanceID), m.ClientID, m.ClientHost, metaString(m.ProtocolMetadata), m.MemberAssignment)
	}
	return s
}

// stateString prints the group's full state.
func stateString(g *Group) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s gen=%d type=%q proto=%q leader=%q state-ts=%d", g.state, g.generation, deref(g.protocolType), deref(g.protocolName), g.leader, g.stateTimestampMs)
	if g.absent {
		b.WriteString(" (absent)")
	}
	b.WriteString("\n")
	for _, id := range g.order {
		m := g.members[id]
		fmt.Fprintf(&b, "member %s%s session=%d rebalance=%d hb-deadline=%d assignment=%q protos=", id, instSuffix(m.instanceID), m.sessionTimeoutMs, m.rebalanceTimeoutMs, m.heartbeatDeadlineMs, m.assignment)
		var ps []string
		for _, p := range m.protocols {
			ps = append(ps, p.name+":"+metaString(p.metadata))
		}
		b.WriteString(strings.Join(ps, ","))
		if m.join != nil {
			fmt.Fprintf(&b, " join=%d", m.join.id)
		}
		if m.sync != nil {
			fmt.Fprintf(&b, " sync=%d", m.sync.id)
		}
		if m.isNew {
			b.WriteString(" new")
		}
		b.WriteString("\n")
	}
	var pend []string
	for id, at := range g.pendingMembers {
		pend = append(pend, fmt.Sprintf("%s@%d", id, at))
	}
	slices.Sort(pend)
	if len(pend) > 0 {
		fmt.Fprintf(&b, "pending %v\n", pend)
	}
	var ps []string
	for id := range g.pendingSync {
		ps = append(ps, id)
	}
	slices.Sort(ps)
	if len(ps) > 0 {
		fmt.Fprintf(&b, "pending-sync %v\n", ps)
	}
	if g.join.set {
		fmt.Fprintf(&b, "join-timer %d initial=%v delay=%d remaining=%d\n", g.join.at, g.join.initial, g.join.delayMs, g.join.remainingMs)
	}
	if g.syncDeadline.set {
		fmt.Fprintf(&b, "sync-timer %d\n", g.syncDeadline.at)
	}
	if g.subscribed != nil {
		var ts []string
		for t := range g.subscribed {
			ts = append(ts, t)
		}
		slices.Sort(ts)
		fmt.Fprintf(&b, "subscribed %v\n", ts)
	}
	for _, tp := range g.offsets.sortedCommitted() {
		c := g.offsets.committed[tp]
		fmt.Fprintf(&b, "offset %s-%d=%d epoch=%d meta=%q ts=%d\n", tp.Topic, tp.Partition, c.Offset, c.LeaderEpoch, c.Metadata, c.CommitTimestampMs)
	}
	var pk []TopicPartition
	for tp := range g.offsets.pending {
		pk = append(pk, tp)
	}
	slices.SortFunc(pk, compareTP)
	for _, tp := range pk {
		fmt.Fprintf(&b, "pending-offset %s-%d=%d\n", tp.Topic, tp.Partition, g.offsets.pending[tp].Offset)
	}
	fmt.Fprintf(&b, "next-deadline %d", g.nextDeadline())
	return b.String()
}

func intArg(t *testing.T, td *datadriven.TestData, key string, def int) int {
	if !td.HasArg(key) {
		return def
	}
	var v int
	td.ScanArgs(t, key, &v)
	return v
}

func strArg(td *datadriven.TestData, key, def string) string {
	for _, a := range td.CmdArgs {
		if a.Key == key {
			if len(a.Vals) == 0 {
				return ""
			}
			return a.Vals[0]
		}
	}
	return def
}

func optArg(td *datadriven.TestData, key string) *string {
	if !td.HasArg(key) {
		return nil
	}
	v := strArg(td, key, "")
	return &v
}

func listArg(td *datadriven.TestData, key string) []string {
	for _, a := range td.CmdArgs {
		if a.Key == key {
			var out []string
			for _, v := range a.Vals {
				out = append(out, strings.Split(v, ",")...)
			}
			return out
		}
	}
	return nil
}

// topicsArg parses t:0+1,u:2.
func topicsArg(td *datadriven.TestData, key string) []kmsg.OffsetFetchRequestGroupTopic {
	out := []kmsg.OffsetFetchRequestGroupTopic{}
	for _, v := range listArg(td, key) {
		name, ps, _ := strings.Cut(v, ":")
		tp := kmsg.OffsetFetchRequestGroupTopic{Topic: name}
		for _, p := range strings.Split(ps, "+") {
			n, _ := strconv.Atoi(p)
			tp.Partitions = append(tp.Partitions, int32(n))
		}
		out = append(out, tp)
	}
	return out
}

// unknownArg marks partitions UNKNOWN_TOPIC_OR_PARTITION.
func unknownArg(td *datadriven.TestData) map[TopicPartition]int16 {
	m := map[TopicPartition]int16{}
	for _, tp := range topicsArg(td, "unknown") {
		for _, p := range tp.Partitions {
			m[TopicPartition{tp.Topic, p}] = kerr.UnknownTopicOrPartition.Code
		}
	}
	return m
}
