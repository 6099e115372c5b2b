package group

import (
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/log/batch"
)

// Loader rebuilds every group of one __consumer_offsets partition from its
// records, in log order (Kafka's doLoadGroupsAndOffsets): the last group
// metadata record of a group wins, a group tombstone removes it, the last
// commit of a partition wins, an offset tombstone removes it, and
// transactional commits count once their transaction's commit marker is
// read. Records with unknown key versions are skipped, as Kafka does.
type Loader struct {
	groups  map[string]*kmsg.GroupMetadataValue
	offsets map[string]map[TopicPartition]committedOffset
	// txn holds transactional commits by producer id until their marker.
	txn map[int64]map[string]map[TopicPartition]committedOffset
	// MaxDecompressedBytes bounds a compressed batch's records section
	// (default 64 MiB).
	MaxDecompressedBytes int
}

// NewLoader returns an empty Loader.
func NewLoader() *Loader {
	return &Loader{
		groups: map[string]*kmsg.GroupMetadataValue{}, offsets: map[string]map[TopicPartition]committedOffset{},
		txn: map[int64]map[string]map[TopicPartition]committedOffset{}, MaxDecompressedBytes: 64 << 20,
	}
}

// AddBatch feeds one record batch as stored in the partition (base offset
// set). Undecodable records are skipped and reported in the returned
// error (wrapping ErrBadRecord); the rest of the batch is still applied.
func (l *Loader) AddBatch(b []byte) error {
	h, err := batch.ParseHeader(b)
	if err != nil {
		return fmt.Errorf("group: load batch: %w", err)
	}
	base := h.FirstOffset
	control := h.Attributes&batch.ControlBit != 0
	txn := h.Attributes&batch.TransactionalBit != 0
	var errs []error
	err = batch.ForEachRecord(b, l.MaxDecompressedBytes, func(r *kmsg.Record) error {
		var err error
		switch {
		case control:
			err = l.addControl(h.ProducerID, r.Key)
		case txn:
			err = l.addTxnRecord(h.ProducerID, base, r.Key, r.Value)
		default:
			err = l.AddRecord(base, r.Key, r.Value)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("offset %d: %w", base+int64(r.OffsetDelta), err))
		}
		return nil
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("group: load batch at %d: %w", base, err))
	}
	return errors.Join(errs...)
}

// AddRecord feeds one record of a non-transactional batch whose first
// offset is batchOffset; value nil is a tombstone.
func (l *Loader) AddRecord(batchOffset int64, key, value []byte) error {
	k, err := DecodeKey(key)
	if err != nil {
		return err
	}
	switch k.Kind {
	case KeyOffset:
		if value == nil {
			if m := l.offsets[k.Group]; m != nil {
				delete(m, k.TopicPartition)
			}
			return nil
		}
		om, err := DecodeOffsetValue(value)
		if err != nil {
			return err
		}
		m := l.offsets[k.Group]
		if m == nil {
			m = map[TopicPartition]committedOffset{}
			l.offsets[k.Group] = m
		}
		m[k.TopicPartition] = committedOffset{om, batchOffset}
	case KeyGroup:
		if value == nil {
			delete(l.groups, k.Group)
			return nil
		}
		v, err := DecodeGroupValue(value)
		if err != nil {
			return err
		}
		l.groups[k.Group] = v
	}
	return nil
}

// addTxnRecord stages a transactional commit.
func (l *Loader) addTxnRecord(producerID, batchOffset int64, key, value []byte) error {
	k, err := DecodeKey(key)
	if err != nil || k.Kind != KeyOffset {
		return err
	}
	byGroup := l.txn[producerID]
	if byGroup == nil {
		byGroup = map[string]map[TopicPartition]committedOffset{}
		l.txn[producerID] = byGroup
	}
	m := byGroup[k.Group]
	if m == nil {
		m = map[TopicPartition]committedOffset{}
		byGroup[k.Group] = m
	}
	if value == nil {
		delete(m, k.TopicPartition)
		return nil
	}
	om, err := DecodeOffsetValue(value)
	if err != nil {
		return err
	}
	m[k.TopicPartition] = committedOffset{om, batchOffset}
	return nil
}

// addControl applies a transaction marker: a commit moves the producer's
// staged commits in (unless a later commit is already there), an abort
// drops them.
func (l *Loader) addControl(producerID int64, key []byte) error {
	var k kmsg.ControlRecordKey
	if err := k.ReadFrom(key); err != nil {
		return fmt.Errorf("%w: control record key: %w", ErrBadRecord, err)
	}
	staged := l.txn[producerID]
	delete(l.txn, producerID)
	if k.Type != kmsg.ControlRecordKeyTypeCommit {
		return nil
	}
	for group, m := range staged {
		dst := l.offsets[group]
		if dst == nil {
			dst = map[TopicPartition]committedOffset{}
			l.offsets[group] = dst
		}
		for tp, c := range m {
			if cur, ok := dst[tp]; !ok || cur.recordOffset < c.recordOffset {
				dst[tp] = c
			}
		}
	}
	return nil
}

// Groups returns the loaded groups, sorted by id, as Kafka's onGroupLoaded
// leaves them at nowMs: a group with members is Stable and every member's
// session timer starts now; a group with commits but no metadata is an
// Empty group of generation 0; a group above group.max.size rebalances.
func (l *Loader) Groups(cfg Config, nowMs int64) ([]*Group, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(l.groups)+len(l.offsets))
	for id := range l.groups {
		ids = append(ids, id)
	}
	// A group known only from offsets whose tombstones all came later is
	// not loaded, as in Kafka (its offsets map is empty).
	for id, m := range l.offsets {
		if _, ok := l.groups[id]; !ok && len(m) > 0 {
			ids = append(ids, id)
		}
	}
	for _, byGroup := range l.txn {
		for id, m := range byGroup {
			if _, ok := l.groups[id]; !ok && len(l.offsets[id]) == 0 && len(m) > 0 && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	out := make([]*Group, 0, len(ids))
	for _, id := range ids {
		g := newGroup(cfg, id, nowMs)
		if v := l.groups[id]; v != nil {
			g.restore(v)
		}
		for tp, c := range l.offsets[id] {
			g.offsets.committed[tp] = c
		}
		for pid, byGroup := range l.txn {
			if m := byGroup[id]; len(m) > 0 {
				g.offsets.pendingTxn[pid] = maps(m)
			}
		}
		g.onLoaded()
		out = append(out, g)
	}
	return out, nil
}

// maps copies a commit map.
func maps(m map[TopicPartition]committedOffset) map[TopicPartition]committedOffset {
	c := make(map[TopicPartition]committedOffset, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// restore sets the group from its metadata record (Kafka's
// readGroupMessageValue and loadGroup).
func (g *Group) restore(v *kmsg.GroupMetadataValue) {
	g.generation = v.Generation
	if v.ProtocolType != "" {
		pt := v.ProtocolType
		g.protocolType = &pt
	}
	g.protocolName = cloneString(v.Protocol)
	g.leader = deref(v.Leader)
	g.stateTimestampMs = v.CurrentStateTimestamp
	if v.Version < 2 {
		g.stateTimestampMs = -1
	}
	for _, vm := range v.Members {
		rebalance := vm.RebalanceTimeoutMillis
		if v.Version == 0 {
			rebalance = vm.SessionTimeoutMillis
		}
		// The record's bytes alias the read that loaded it: copy what the
		// member keeps (one allocation), so a group holds its own
		// metadata and not the whole chunk of the log.
		kept := make([]byte, 0, len(vm.Subscription)+len(vm.Assignment))
		kept = append(append(kept, vm.Subscription...), vm.Assignment...)
		n := len(vm.Subscription)
		m := &member{
			id: vm.MemberID, instanceID: cloneString(vm.InstanceID), clientID: vm.ClientID, clientHost: vm.ClientHost,
			rebalanceTimeoutMs: rebalance, sessionTimeoutMs: vm.SessionTimeoutMillis, protocolType: v.ProtocolType,
			protocols: []protocol{{name: deref(v.Protocol), metadata: kept[:n:n]}}, assignment: kept[n:],
		}
		g.add(m)
	}
	if len(g.members) > 0 {
		g.state = Stable
	}
}

// onLoaded is Kafka's onGroupLoaded: session timers start, and a group
// over group.max.size rebalances so its members can commit and leave.
func (g *Group) onLoaded() {
	var out Output
	g.out = &out
	g.subscribed = g.computeSubscribedTopics()
	if len(g.members) > int(g.cfg.GroupMaxSize) {
		g.prepareRebalance(fmt.Sprintf("freshly-loaded group is over capacity (%d)", g.cfg.GroupMaxSize))
	}
	for _, m := range g.members {
		g.scheduleHeartbeat(m, int64(m.sessionTimeoutMs))
	}
	g.out = nil
}
