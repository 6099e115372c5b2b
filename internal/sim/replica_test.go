package sim

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/log/batch"
)

// replicaShell is a partition actor's shell (actors/partition/actor.go and
// replication_actor.go) around the real partition.Replica, over the
// node's memLog: it steps one message at a time and performs the Output
// as the package doc's duties say (replies, positions with their last
// fetched epoch, ISR proposals, truncation with the producer-state
// rebuild, appends with their LogAppended at once).
type replicaShell struct {
	n    *node
	part int32
	log  *memLog
	r    *partition.Replica
	// client is the handle the replica fetcher's State holds for it (a
	// token: the shell never sends through it).
	client *partition.Client
	// leader, leaderEpoch, partitionEpoch were last told by the
	// reconciler (leader -2: nothing yet).
	leader, leaderEpoch, partitionEpoch int32
	pending                             map[uint64]pendingReply
	nextID                              uint64
	// The checker's view: the leader epoch it last saw this replica lead
	// at (-1: not leading), and its high watermark then.
	chkEpoch int32
	chkHW    int64
	// handOverTo is the sender of the last HandOver (the node's
	// balancer), which its HandOverReady goes to.
	handOverTo *balancer
}

// pendingReply is where an answer goes: a producer's request, or a
// fetcher's command.
type pendingReply struct {
	producer *producer
	fetcher  *fetcherShell
	callerID uint64
	acks     int16
}

// newReplicaShell recovers a replica from the node's log, as the actor's
// onStarted does: the producer state replayed from the log, the high
// watermark at the log start.
func newReplicaShell(n *node, part int32) *replicaShell {
	w := n.w
	l := n.disk[part]
	cfg := partition.DefaultConfig()
	cfg.NodeID = n.id
	cfg.MinInSyncReplicas = w.cfg.MinISR
	cfg.ReplicaLagTimeMaxMs = w.cfg.LagMaxMs
	r, err := partition.NewReplica(cfg, partition.Start{
		LogStartOffset: l.start, LogEndOffset: l.leo, FlushedOffset: l.leo,
		HighWatermark: l.start, Producers: replayProducers(l), LatestEpoch: l.latestEpoch(),
	})
	if err != nil {
		w.fail("new replica: %v", err)
	}
	return &replicaShell{n: n, part: part, log: l, r: r, client: &partition.Client{}, leader: -2, leaderEpoch: -1,
		partitionEpoch: -1, pending: map[uint64]pendingReply{}, chkEpoch: -1}
}

// replayProducers rebuilds the producer state from the whole log (duty 1,
// with no snapshot).
func replayProducers(l *memLog) *partition.ProducerState {
	ps := partition.NewProducerState()
	for _, b := range l.batches {
		h, err := batch.ParseHeader(b)
		if err != nil {
			continue
		}
		ps.ObserveBatch(partition.BatchFromHeader(h))
	}
	return ps
}

// step steps the replica and performs the Output, and those of the
// LogAppended and LogTruncated it causes (actor.go's step).
func (s *replicaShell) step(fn func(*partition.Replica) partition.Output) {
	w := s.n.w
	out := fn(s.r)
	for {
		for _, rep := range out.Replies {
			s.reply(rep)
		}
		if out.FlushUpTo > 0 {
			// No group commit in the model: every append is "flushed".
			upTo := out.FlushUpTo
			s.n.post(func() {
				s.step(func(r *partition.Replica) partition.Output {
					return r.OnFlushCompleted(&partition.FlushCompleted{UpTo: upTo})
				})
			})
		}
		for _, pos := range out.Positions {
			s.position(pos)
		}
		if c := out.ProposeISR; c != nil {
			ch := *c
			s.n.isr[s.part] = &ch
		}
		if h := out.HandOverReady; h != nil && s.handOverTo != nil {
			b, ready := s.handOverTo, *h
			w.trace("hand-over-ready", s.n.id, int64(s.part), int64(ready.Successor), int64(ready.ErrorCode))
			s.n.post(func() { b.onReady(&ready) })
		}
		if t := out.Truncate; t != nil {
			out = s.r.OnLogTruncated(s.truncate(t))
			continue
		}
		ap := out.Append
		if ap == nil {
			break
		}
		if ap.Options.AssignOffsets {
			w.chk.onLeaderAppend(s)
		}
		res, err := s.log.append(ap.Records, ap.Options)
		if err == nil {
			w.trace("append", s.n.id, int64(s.part), res.FirstOffset, res.LastOffset)
		}
		out = s.r.OnLogAppended(&partition.LogAppended{Seq: ap.Seq, Result: res, Err: err})
	}
	w.chk.observe(s)
}

// checkHeldLease is the actor's (actor.go's checkHeldLease): before a
// step that may run the appends a rebalance's hand-over holds, a leader
// whose node's lease lapsed refuses them (partition.LeaseLapsed).
func (s *replicaShell) checkHeldLease() {
	if s.n.w.cfg.HeldUnleased || s.n.leaseValid() || s.r.Status().Role != partition.Leader {
		return
	}
	s.step(func(r *partition.Replica) partition.Output { return r.OnLeaseLapsed(&partition.LeaseLapsed{}) })
}

// truncate cuts the log and rebuilds the producer state.
func (s *replicaShell) truncate(t *partition.TruncateLog) *partition.LogTruncated {
	w := s.n.w
	var err error
	if t.StartAt {
		s.log.truncateFullyAndStartAt(t.Offset)
	} else {
		_, err = s.log.truncateTo(t.Offset)
	}
	w.trace("truncate", s.n.id, int64(s.part), t.Offset, s.log.leo)
	return &partition.LogTruncated{
		Seq: t.Seq, LogStartOffset: s.log.start, LogEndOffset: s.log.leo, FlushedOffset: s.log.leo,
		LatestEpoch: s.log.latestEpoch(), Producers: replayProducers(s.log), Err: err,
	}
}

// reply sends a producer its answer.
func (s *replicaShell) reply(rep *partition.AppendBatchesResult) {
	p, ok := s.pending[rep.ID]
	if !ok || p.producer == nil {
		return
	}
	delete(s.pending, rep.ID)
	w := s.n.w
	if rep.ErrorCode == 0 {
		w.chk.onProduceAck(s, p.acks, rep.BaseOffset)
	}
	res := *rep
	res.ID = p.callerID
	pr := p.producer
	w.net.send(s.n.id, pr.id, 0, func() { pr.onResponse(&res) })
}

// position answers a fetcher's command, with the log's epoch at the
// offset before the fetch offset.
func (s *replicaShell) position(pos *partition.ReplicaPosition) {
	p, ok := s.pending[pos.ID]
	if !ok || p.fetcher == nil {
		return
	}
	delete(s.pending, pos.ID)
	out := *pos
	out.ID = p.callerID
	if out.FetchOffset > 0 {
		out.LastFetchedEpoch = s.log.epochAt(out.FetchOffset - 1)
	}
	f := p.fetcher
	s.n.w.trace("position", s.n.id, int64(s.part), out.FetchOffset, int64(out.ErrorCode))
	s.n.post(func() { f.onPosition(&out) })
}

// newPending remembers where an answer goes and returns the shell's id.
func (s *replicaShell) newPending(p pendingReply) uint64 {
	s.nextID++
	s.pending[s.nextID] = p
	return s.nextID
}

// onCommand steps a replica fetcher's command.
func (s *replicaShell) onCommand(c *fetchCommand) {
	now := s.n.w.now
	id := s.newPending(pendingReply{fetcher: c.from, callerID: c.id()})
	switch {
	case c.Append != nil:
		m := *c.Append
		m.ID = id
		if m.NowMs == 0 {
			m.NowMs = now
		}
		s.step(func(r *partition.Replica) partition.Output { return r.OnAppendReplicated(&m) })
	case c.Truncate != nil:
		m := *c.Truncate
		m.ID = id
		epoch, end := s.log.endOffsetForEpoch(m.Epoch)
		if epoch < 0 {
			end = -1
		}
		s.step(func(r *partition.Replica) partition.Output { return r.OnTruncateDiverging(&m, end) })
	case c.Reset != nil:
		m := *c.Reset
		m.ID = id
		s.step(func(r *partition.Replica) partition.Output { return r.OnResetToLeaderStart(&m) })
	}
}

// onFollowerFetched steps a follower's fetch, unless it diverges from this
// log or is out of its range (replication_actor.go's onFollowerFetched).
func (s *replicaShell) onFollowerFetched(m *partition.FollowerFetched) {
	l := s.log
	if m.FetchOffset > l.leo || m.FetchOffset < l.start {
		return
	}
	if _, _, diverged := l.divergingEpoch(s.r.Status().LeaderEpoch, m.LastFetchedEpoch, m.FetchOffset); diverged {
		return
	}
	f := *m
	s.step(func(r *partition.Replica) partition.Output { return r.OnFollowerFetched(&f) })
}

// lead tells the replica its leadership from the image when it changed,
// and has the partition fetched from its leader (cluster/replicas.go's
// lead).
func (s *replicaShell) lead(p metadata.Partition) {
	if s.leader == p.Leader && s.leaderEpoch == p.LeaderEpoch && s.partitionEpoch == p.PartitionEpoch {
		return
	}
	n := s.n
	s.leader, s.leaderEpoch, s.partitionEpoch = p.Leader, p.LeaderEpoch, p.PartitionEpoch
	if p.Leader == n.id {
		n.unfollow(s.part)
		m := &partition.BecomeLeader{LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: p.ISR, Replicas: p.Replicas}
		n.post(func() {
			s.checkHeldLease()
			s.step(func(r *partition.Replica) partition.Output { return r.BecomeLeader(m) })
		})
		return
	}
	m := &partition.BecomeFollower{Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch}
	n.post(func() { s.step(func(r *partition.Replica) partition.Output { return r.BecomeFollower(m) }) })
	if p.HasLeader() {
		n.follow(s, p.Leader, p.LeaderEpoch)
	} else {
		n.unfollow(s.part)
	}
}

// reconcile makes the node's replicas match its image: the topic's
// replicas are created when it first appears (recovered from the disk),
// and each is told its leadership. Nothing is led or followed before the
// image holds this process's registration (cluster/metadata_actor.go):
// a restarted process would otherwise lead at its stale image's epoch
// without the ISR additions its predecessor proposed.
func (n *node) reconcile() {
	t, ok := n.img.Topic(topicName)
	if !ok || !n.registeredIn(n.img) {
		return
	}
	if n.replicas == nil {
		n.topicID = t.ID()
		n.replicas = make([]*replicaShell, t.NumPartitions())
		for i := range n.replicas {
			s := newReplicaShell(n, int32(i))
			n.replicas[i] = s
			n.byClient[s.client] = s
		}
	}
	for i := range t.NumPartitions() {
		if p, _ := t.Partition(i); p.IsReplica(n.id) {
			n.replicas[i].lead(p)
		}
	}
}

// onProduce is the Produce handler for one partition (wire/00_produce.go):
// without a local replica UNKNOWN_TOPIC_OR_PARTITION; without the lease
// NOT_LEADER_OR_FOLLOWER with the image's leader; otherwise the append
// goes to the partition actor, which answers (NOT_LEADER_OR_FOLLOWER too
// when it does not lead).
func (n *node) onProduce(pr *producer, callerID uint64, part int32, records []byte, acks int16) {
	w := n.w
	answer := func(code int16, leader, epoch int32) {
		res := &partition.AppendBatchesResult{ID: callerID, Acks: acks, ErrorCode: code, BaseOffset: -1,
			CurrentLeader: partition.LeaderHint{LeaderID: leader, LeaderEpoch: epoch}}
		w.net.send(n.id, pr.id, 0, func() { pr.onResponse(res) })
	}
	if n.replicas == nil || int(part) >= len(n.replicas) {
		answer(kerr.UnknownTopicOrPartition.Code, -1, -1)
		return
	}
	if !n.leaseValid() {
		p, _ := n.img.Partition(n.topicID, part)
		answer(kerr.NotLeaderForPartition.Code, p.Leader, p.LeaderEpoch)
		return
	}
	s := n.replicas[part]
	send := func() {
		id := s.newPending(pendingReply{producer: pr, callerID: callerID, acks: acks})
		m := &partition.AppendBatches{ID: id, Records: records, Acks: acks, TimeoutMs: int32(w.cfg.ProduceTimeoutMs), NowMs: w.now}
		s.step(func(r *partition.Replica) partition.Output { return r.OnAppendBatches(m) })
	}
	if w.cfg.WireGapMs > 0 {
		// The handler hands the append to the actor's mailbox: a pause
		// may fall between the lease check and the append.
		w.after(w.rng.Int64N(w.cfg.WireGapMs+1), n.id, send)
		return
	}
	n.post(send)
}

// registeredIn reports whether img holds this process's registration
// (its incarnation id).
func (n *node) registeredIn(img *metadata.Image) bool {
	b, ok := img.Broker(n.id)
	return ok && b.IncarnationID == n.incarnationID
}
