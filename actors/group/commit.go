package group

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// commitEntry is one partition of an OffsetCommit.
type commitEntry struct {
	tp       TopicPartition
	om       OffsetAndMetadata
	preErr   int16 // from the shell (OffsetCommit.PartitionErrors)
	tooLarge bool
}

// OffsetCommit steps an OffsetCommit request. Valid commits are written to
// __consumer_offsets and acknowledged when the write completes; a failed
// validation is answered at once.
func (g *Group) OffsetCommit(m *OffsetCommit) Output {
	return g.step(m.NowMs, func() { g.onOffsetCommit(m) })
}

// onOffsetCommit is Kafka's handleCommitOffsets and storeOffsets.
func (g *Group) onOffsetCommit(m *OffsetCommit) {
	req := m.Req
	entries := g.commitEntries(m)
	respond := func(code func(e commitEntry) int16) {
		g.reply(m.ID, commitResponse(req, entries, code))
	}
	all := func(c int16) func(commitEntry) int16 {
		return func(e commitEntry) int16 {
			if e.preErr != 0 {
				return e.preErr
			}
			return c
		}
	}
	if code := g.commitGroupError(req); code != 0 {
		respond(all(code))
		return
	}
	if g.state == Stable || g.state == PreparingRebalance {
		if mb := g.members[req.MemberID]; mb != nil {
			g.scheduleHeartbeat(mb, int64(mb.sessionTimeoutMs)) // a commit counts as a heartbeat
		}
	}
	valid := map[TopicPartition]OffsetAndMetadata{}
	var recs []Record
	tooLarge := false
	for _, e := range entries {
		switch {
		case e.preErr != 0:
		case e.tooLarge:
			tooLarge = true
		default:
			if _, dup := valid[e.tp]; dup { // the last commit of a partition wins
				recs = deleteRecordFor(recs, g.id, e.tp)
			}
			valid[e.tp] = e.om
			recs = append(recs, OffsetCommitRecord(g.id, e.tp, e.om))
		}
	}
	final := func(c int16) func(commitEntry) int16 {
		return func(e commitEntry) int16 {
			switch {
			case e.preErr != 0:
				return e.preErr
			case e.tooLarge:
				return kerr.OffsetMetadataTooLarge.Code
			}
			return c
		}
	}
	if len(recs) == 0 {
		if tooLarge {
			g.logf("group %s: offset commit metadata above offset.metadata.max.bytes %d", g.id, g.cfg.OffsetMetadataMaxBytes)
		}
		respond(final(kerr.OffsetMetadataTooLarge.Code))
		return
	}
	g.offsets.prepare(valid)
	g.appendRecords(recs, []uint64{m.ID}, func(code int16, base int64) {
		if g.state != Dead {
			for tp, om := range valid {
				if code == 0 {
					g.offsets.onAppend(tp, om, base)
				} else {
					g.offsets.failWrite(tp, om)
				}
			}
		}
		respond(final(commitAppendError(code)))
	})
}

// deleteRecordFor drops the commit record of tp from recs (a partition
// named twice in one request).
func deleteRecordFor(recs []Record, group string, tp TopicPartition) []Record {
	key := string(OffsetCommitTombstone(group, tp).Key)
	out := recs[:0]
	for _, r := range recs {
		if string(r.Key) != key {
			out = append(out, r)
		}
	}
	return out
}

// commitEntries flattens the request's partitions in request order.
func (g *Group) commitEntries(m *OffsetCommit) []commitEntry {
	var out []commitEntry
	for _, t := range m.Req.Topics {
		for _, p := range t.Partitions {
			tp := TopicPartition{t.Topic, p.Partition}
			om := OffsetAndMetadata{
				Offset: p.Offset, LeaderEpoch: -1, CommitTimestampMs: g.nowMs, ExpireTimestampMs: -1,
			}
			if m.Req.Version >= 6 {
				om.LeaderEpoch = p.LeaderEpoch
			}
			if p.Metadata != nil {
				om.Metadata = *p.Metadata
			}
			out = append(out, commitEntry{
				tp: tp, om: om, preErr: m.PartitionErrors[tp],
				tooLarge: javaLength(om.Metadata) > int(g.cfg.OffsetMetadataMaxBytes),
			})
		}
	}
	return out
}

// commitGroupError is the error every partition of the commit gets, 0 if
// the commit may proceed (Kafka's validateOffsetCommit and the state
// rules of doCommitOffsets). A request that creates the group in Kafka
// (generation -1 to an unknown group) creates it here.
func (g *Group) commitGroupError(req *kmsg.OffsetCommitRequest) int16 {
	if code := ValidateGroupID(kmsg.OffsetCommit.Int16(), req.Group); code != 0 {
		return code
	}
	if g.absent {
		if req.Generation >= 0 {
			return kerr.IllegalGeneration.Code
		}
		g.absent = false
	}
	switch {
	case g.state == Dead:
		return kerr.CoordinatorNotAvailable.Code
	case req.Generation < 0 && g.state == Empty:
		// the admin client or a consumer without group management
	case req.Generation >= 0 || req.MemberID != "" || req.InstanceID != nil:
		if code := g.validateCurrentMember(req.MemberID, req.InstanceID, "offset-commit"); code != 0 {
			return code
		}
		if req.Generation != g.generation {
			return kerr.IllegalGeneration.Code
		}
	case g.state != Empty:
		return kerr.UnknownMemberID.Code
	}
	if g.state == CompletingRebalance {
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

// commitResponse renders the per-partition codes in request order.
func commitResponse(req *kmsg.OffsetCommitRequest, entries []commitEntry, code func(commitEntry) int16) Reply {
	resp := kmsg.NewPtrOffsetCommitResponse()
	resp.Version = req.Version
	i := 0
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = entries[i].tp.Partition
			rp.ErrorCode = code(entries[i])
			rt.Partitions = append(rt.Partitions, rp)
			i++
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return Reply{Response: resp}
}

// FetchOffsets answers this group's part of an OffsetFetch (Kafka's
// getOffsets): the committed offset of each partition of topics, or of
// every committed partition when topics is nil (a null topic array, v2+);
// -1 with empty metadata where nothing is committed; with requireStable
// (v7+), UNSTABLE_OFFSET_COMMIT for partitions with a commit in flight.
// It reads the state and changes nothing.
func (g *Group) FetchOffsets(topics []kmsg.OffsetFetchRequestGroupTopic, requireStable bool) kmsg.OffsetFetchResponseGroup {
	resp := kmsg.NewOffsetFetchResponseGroup()
	resp.Group = g.id
	if code := ValidateGroupID(kmsg.OffsetFetch.Int16(), g.id); code != 0 {
		resp.ErrorCode = code
		return resp
	}
	known := !g.absent && g.state != Dead
	if topics == nil {
		if !known {
			return resp
		}
		var cur *kmsg.OffsetFetchResponseGroupTopic
		for _, tp := range g.offsets.sortedCommitted() {
			if cur == nil || cur.Topic != tp.Topic {
				resp.Topics = append(resp.Topics, kmsg.OffsetFetchResponseGroupTopic{Topic: tp.Topic})
				cur = &resp.Topics[len(resp.Topics)-1]
			}
			cur.Partitions = append(cur.Partitions, g.fetchOne(tp, requireStable))
		}
		return resp
	}
	for _, t := range topics {
		rt := kmsg.NewOffsetFetchResponseGroupTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			tp := TopicPartition{t.Topic, p}
			if known {
				rt.Partitions = append(rt.Partitions, g.fetchOne(tp, requireStable))
			} else {
				rt.Partitions = append(rt.Partitions, noOffset(p, 0))
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// fetchOne is one partition's committed offset.
func (g *Group) fetchOne(tp TopicPartition, requireStable bool) kmsg.OffsetFetchResponseGroupTopicPartition {
	if requireStable && g.offsets.hasPending(tp) {
		return noOffset(tp.Partition, kerr.UnstableOffsetCommit.Code)
	}
	c, ok := g.offsets.committed[tp]
	if !ok {
		return noOffset(tp.Partition, 0)
	}
	p := kmsg.NewOffsetFetchResponseGroupTopicPartition()
	p.Partition = tp.Partition
	p.Offset = c.Offset
	p.LeaderEpoch = c.LeaderEpoch
	md := c.Metadata
	p.Metadata = &md
	return p
}

// noOffset is a partition without a committed offset: offset -1, empty
// (never null) metadata.
func noOffset(partition int32, code int16) kmsg.OffsetFetchResponseGroupTopicPartition {
	p := kmsg.NewOffsetFetchResponseGroupTopicPartition()
	p.Partition = partition
	p.Offset = -1
	empty := ""
	p.Metadata = &empty
	p.ErrorCode = code
	return p
}

// OffsetDelete steps an OffsetDelete request (Kafka's handleDeleteOffsets):
// an Empty group loses the offsets named; a consumer group with members
// loses those of topics no member subscribes to (GROUP_SUBSCRIBED_TO_TOPIC
// for the others); any other group gets NON_EMPTY_GROUP. The answer waits
// for the tombstones' append.
func (g *Group) OffsetDelete(m *OffsetDelete) Output {
	return g.step(m.NowMs, func() { g.onOffsetDelete(m) })
}

// onOffsetDelete implements OffsetDelete.
func (g *Group) onOffsetDelete(m *OffsetDelete) {
	req := m.Req
	codes := map[TopicPartition]int16{}
	var eligible []TopicPartition
	groupErr := int16(0)
	switch {
	case ValidateGroupID(kmsg.OffsetDelete.Int16(), req.Group) != 0:
		groupErr = kerr.InvalidGroupID.Code
	case g.absent || g.state == Dead:
		groupErr = kerr.GroupIDNotFound.Code
	case g.state == Empty || g.isConsumerGroup():
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				tp := TopicPartition{t.Topic, p.Partition}
				switch {
				case m.PartitionErrors[tp] != 0:
					codes[tp] = m.PartitionErrors[tp]
				case g.state != Empty && g.isSubscribedToTopic(tp.Topic):
					codes[tp] = kerr.GroupSubscribedToTopic.Code
				default:
					eligible = append(eligible, tp)
				}
			}
		}
	default:
		groupErr = kerr.NonEmptyGroup.Code
	}
	respond := func(appendErr int16) {
		g.reply(m.ID, offsetDeleteResponse(req, groupErr, codes, appendErr))
	}
	if groupErr != 0 || len(eligible) == 0 {
		respond(0)
		return
	}
	removed := g.offsets.remove(eligible)
	g.logf("group %s: deleted %d offsets", g.id, len(removed))
	if !g.cleanup(removed, []uint64{m.ID}, func(code int16) { respond(commitAppendError(code)) }) {
		respond(0)
	}
}

// offsetDeleteResponse renders an OffsetDelete answer: a group error
// alone, or every partition's code (appendErr for the deleted ones).
func offsetDeleteResponse(req *kmsg.OffsetDeleteRequest, groupErr int16, codes map[TopicPartition]int16, appendErr int16) Reply {
	resp := kmsg.NewPtrOffsetDeleteResponse()
	resp.Version = req.Version
	resp.ErrorCode = groupErr
	if groupErr != 0 {
		return Reply{Response: resp}
	}
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			code, ok := codes[TopicPartition{t.Topic, p.Partition}]
			if !ok {
				code = appendErr
			}
			rp.ErrorCode = code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return Reply{Response: resp}
}

// OffsetFetchGroups splits an OffsetFetch request into its groups: the
// v8+ groups array, or the single group of v0-7. The shell answers each
// with its group's FetchOffsets (or OffsetFetchError) and assembles the
// response with OffsetFetchResponse.
func OffsetFetchGroups(req *kmsg.OffsetFetchRequest) []kmsg.OffsetFetchRequestGroup {
	if req.Version >= 8 {
		return req.Groups
	}
	g := kmsg.NewOffsetFetchRequestGroup()
	g.Group = req.Group
	if req.Topics != nil {
		g.Topics = make([]kmsg.OffsetFetchRequestGroupTopic, 0, len(req.Topics))
		for _, t := range req.Topics {
			g.Topics = append(g.Topics, kmsg.OffsetFetchRequestGroupTopic{Topic: t.Topic, Partitions: t.Partitions})
		}
	}
	return []kmsg.OffsetFetchRequestGroup{g}
}

// RequireStable returns the request's require_stable flag (v7+).
func RequireStable(req *kmsg.OffsetFetchRequest) bool { return req.Version >= 7 && req.RequireStable }

// OffsetFetchResponse assembles the answers of OffsetFetchGroups' groups,
// in order, into the response for the request's version: v8+ per group;
// v2-7 with the group error at the top; v0-1 with it on every requested
// partition, since those versions have no top-level error.
func OffsetFetchResponse(req *kmsg.OffsetFetchRequest, groups []kmsg.OffsetFetchResponseGroup) *kmsg.OffsetFetchResponse {
	resp := kmsg.NewPtrOffsetFetchResponse()
	resp.Version = req.Version
	if req.Version >= 8 {
		resp.Groups = groups
		return resp
	}
	if len(groups) == 0 {
		return resp
	}
	g := groups[0]
	if g.ErrorCode != 0 && req.Version < 2 {
		for _, t := range req.Topics {
			rt := kmsg.NewOffsetFetchResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rt.Partitions = append(rt.Partitions, v7Partition(noOffset(p, g.ErrorCode)))
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	resp.ErrorCode = g.ErrorCode
	for _, t := range g.Topics {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, v7Partition(p))
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// v7Partition converts a v8 partition answer to the v0-7 shape.
func v7Partition(p kmsg.OffsetFetchResponseGroupTopicPartition) kmsg.OffsetFetchResponseTopicPartition {
	return kmsg.OffsetFetchResponseTopicPartition{
		Partition: p.Partition, Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: p.Metadata, ErrorCode: p.ErrorCode,
	}
}
