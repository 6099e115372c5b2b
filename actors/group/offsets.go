package group

import (
	"cmp"
	"slices"
	"unicode/utf16"
)

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// OffsetAndMetadata is a committed offset as __consumer_offsets stores it.
type OffsetAndMetadata struct {
	Offset int64
	// LeaderEpoch is the committed leader epoch, -1 for none.
	LeaderEpoch int32
	Metadata    string
	// CommitTimestampMs is the coordinator's clock when the commit came.
	CommitTimestampMs int64
	// ExpireTimestampMs is -1, or the explicit expiry that records of
	// value version 1 carry (then it overrides the retention rules).
	ExpireTimestampMs int64
}

// committedOffset is an offset with the log offset of the batch that
// wrote it (Kafka's CommitRecordMetadataAndOffset): of two commits the
// later record wins, whatever order the writes completed in.
type committedOffset struct {
	OffsetAndMetadata
	recordOffset int64
}

// offsetStore holds a group's committed offsets and the commits whose
// write is in flight.
type offsetStore struct {
	committed map[TopicPartition]committedOffset
	pending   map[TopicPartition]OffsetAndMetadata
	// pendingTxn holds transactional commits (by producer id) loaded
	// without their transaction's marker.
	pendingTxn map[int64]map[TopicPartition]committedOffset
}

func newOffsetStore() offsetStore {
	return offsetStore{
		committed: map[TopicPartition]committedOffset{}, pending: map[TopicPartition]OffsetAndMetadata{},
		pendingTxn: map[int64]map[TopicPartition]committedOffset{},
	}
}

// hasOffsets reports whether anything is committed or being committed.
func (s *offsetStore) hasOffsets() bool {
	return len(s.committed) > 0 || len(s.pending) > 0 || len(s.pendingTxn) > 0
}

// prepare stages commits whose write is in flight.
func (s *offsetStore) prepare(offsets map[TopicPartition]OffsetAndMetadata) {
	for tp, om := range offsets {
		s.pending[tp] = om
	}
}

// onAppend applies a commit that the write at recordOffset made durable.
func (s *offsetStore) onAppend(tp TopicPartition, om OffsetAndMetadata, recordOffset int64) {
	if _, staged := s.pending[tp]; staged {
		if cur, ok := s.committed[tp]; !ok || cur.recordOffset < recordOffset {
			s.committed[tp] = committedOffset{om, recordOffset}
		}
	}
	if s.pending[tp] == om {
		delete(s.pending, tp)
	}
}

// failWrite forgets a commit whose write failed.
func (s *offsetStore) failWrite(tp TopicPartition, om OffsetAndMetadata) {
	if p, ok := s.pending[tp]; ok && p == om {
		delete(s.pending, tp)
	}
}

// hasPending reports whether a commit of tp is in flight.
func (s *offsetStore) hasPending(tp TopicPartition) bool {
	if _, ok := s.pending[tp]; ok {
		return true
	}
	for _, m := range s.pendingTxn {
		if _, ok := m[tp]; ok {
			return true
		}
	}
	return false
}

// remove drops the offsets of tps and returns those that were committed.
func (s *offsetStore) remove(tps []TopicPartition) []TopicPartition {
	var removed []TopicPartition
	for _, tp := range tps {
		delete(s.pending, tp)
		for _, m := range s.pendingTxn {
			delete(m, tp)
		}
		if _, ok := s.committed[tp]; ok {
			delete(s.committed, tp)
			removed = append(removed, tp)
		}
	}
	return removed
}

// ofTopics returns the partitions of topics with an offset committed or
// being committed, in topic, partition order.
func (s *offsetStore) ofTopics(topics map[string]bool) []TopicPartition {
	set := map[TopicPartition]bool{}
	for tp := range s.committed {
		set[tp] = set[tp] || topics[tp.Topic]
	}
	for tp := range s.pending {
		set[tp] = set[tp] || topics[tp.Topic]
	}
	for _, m := range s.pendingTxn {
		for tp := range m {
			set[tp] = set[tp] || topics[tp.Topic]
		}
	}
	var out []TopicPartition
	for tp, in := range set {
		if in {
			out = append(out, tp)
		}
	}
	slices.SortFunc(out, compareTP)
	return out
}

// sortedCommitted returns the committed partitions in topic, partition
// order.
func (s *offsetStore) sortedCommitted() []TopicPartition {
	tps := make([]TopicPartition, 0, len(s.committed))
	for tp := range s.committed {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, compareTP)
	return tps
}

// compareTP orders partitions by topic, then partition.
func compareTP(a, b TopicPartition) int {
	if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}

// expired returns the committed partitions expired at nowMs: with an
// explicit expiry, once it passed; otherwise retentionMs after base(),
// skipping the topics in keep and partitions with a commit in flight.
func (s *offsetStore) expired(nowMs, retentionMs int64, base func(committedOffset) int64, keep map[string]bool) []TopicPartition {
	var out []TopicPartition
	for _, tp := range s.sortedCommitted() {
		c := s.committed[tp]
		if keep[tp.Topic] || s.hasPendingCommit(tp) {
			continue
		}
		if c.ExpireTimestampMs != -1 {
			if nowMs >= c.ExpireTimestampMs {
				out = append(out, tp)
			}
		} else if nowMs-base(c) >= retentionMs {
			out = append(out, tp)
		}
	}
	return out
}

// hasPendingCommit reports a non-transactional commit of tp in flight.
func (s *offsetStore) hasPendingCommit(tp TopicPartition) bool {
	_, ok := s.pending[tp]
	return ok
}

// javaLength is a string's length as Java counts it: UTF-16 code units.
func javaLength(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// expireOffsets is Kafka's periodic cleanup for one group: expired
// offsets are removed (KIP-211: an Empty group's offsets expire
// offsets.retention.minutes after it became empty; a Stable consumer
// group's offsets of topics it no longer subscribes to expire after their
// commit; a group only used for commits expires each offset after its
// commit), an Empty group left without offsets becomes Dead, and
// tombstones are appended for both.
func (g *Group) expireOffsets() {
	var removed []TopicPartition
	byCommit := func(c committedOffset) int64 { return c.CommitTimestampMs }
	switch {
	case g.protocolType != nil && g.state == Empty:
		removed = g.offsets.expired(g.nowMs, g.cfg.OffsetsRetentionMs, func(c committedOffset) int64 {
			if g.stateTimestampMs != -1 {
				return g.stateTimestampMs
			}
			return c.CommitTimestampMs
		}, nil)
	case g.protocolType != nil && *g.protocolType == consumerProtocolType && g.subscribed != nil && g.state == Stable:
		removed = g.offsets.expired(g.nowMs, g.cfg.OffsetsRetentionMs, byCommit, g.subscribed)
	case g.protocolType == nil:
		removed = g.offsets.expired(g.nowMs, g.cfg.OffsetsRetentionMs, byCommit, nil)
	}
	g.offsets.remove(removed)
	if len(removed) > 0 {
		g.logf("group %s: expired %d offsets", g.id, len(removed))
	}
	g.cleanup(removed, nil)
}

// TopicsDeleted removes the offsets of topics that were deleted and
// appends their tombstones; an Empty group left without offsets turns
// Dead (Kafka's cleanupGroupMetadata on partition deletion). Nothing
// answers it.
func (g *Group) TopicsDeleted(m *TopicsDeleted) Output {
	return g.step(m.NowMs, func() {
		if g.absent || g.state == Dead || len(m.Topics) == 0 {
			return
		}
		topics := make(map[string]bool, len(m.Topics))
		for _, t := range m.Topics {
			topics[t] = true
		}
		tps := g.offsets.ofTopics(topics)
		if len(tps) == 0 {
			return
		}
		removed := g.offsets.remove(tps)
		g.logf("group %s: removed %d offsets of deleted topics", g.id, len(removed))
		// Tombstones for the commits still in flight too: their records
		// reach the log before these, and must not come back at a reload.
		g.cleanup(tps, nil)
	})
}

// cleanup is Kafka's cleanupGroupMetadata after offsets were removed: an
// Empty group without offsets becomes Dead; tombstones for the removed
// offsets (and the group, if Dead after a generation) are appended, with
// the requests in waiting answered by done when the append completes.
// It returns whether an append was queued.
func (g *Group) cleanup(removed []TopicPartition, waiting []uint64, done ...func(code int16)) bool {
	if g.state == Empty && !g.offsets.hasOffsets() {
		g.logf("group %s transitioned to Dead in generation %d", g.id, g.generation)
		g.toDead()
	}
	recs := make([]Record, 0, len(removed)+1)
	for _, tp := range removed {
		recs = append(recs, OffsetCommitTombstone(g.id, tp))
	}
	if g.state == Dead && g.generation > 0 {
		recs = append(recs, GroupMetadataTombstone(g.id))
	}
	if len(recs) == 0 {
		return false
	}
	g.appendRecords(recs, waiting, func(code int16, _ int64) {
		if code != 0 {
			g.logf("group %s: failed to append %d tombstones: error %d", g.id, len(recs), code)
		}
		for _, d := range done {
			d(code)
		}
	})
	return true
}
