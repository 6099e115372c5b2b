package quorum

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/log"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Node drives one raft.RawNode of the metadata quorum: it persists what
// raft hands it to a Storage, applies committed entries to the metadata
// image and returns the messages to send. It does no networking and reads
// no clock. Node is not safe for concurrent use (one actor owns it), except
// Image, which any goroutine may call.
type Node struct {
	cfg   Config
	st    *Storage
	rn    *raft.RawNode
	image atomic.Pointer[metadata.Image]

	confState *pb.ConfState
	applied   uint64
	// startCommit is the commit index in storage at start (StartCommit).
	startCommit uint64
	snapIndex   uint64
	// snapshotDue asks for a snapshot at the next chance (a learner was
	// added while the log was compacted: learners.go).
	snapshotDue bool
	// installed counts the snapshots received and installed (Status).
	installed int
	announced uint64      // the last term this node announced itself as controller in
	pending   []*proposal // proposals not yet resolved, in proposal order
	failed    error       // set once: a corrupt log or an apply failure; the node is stopped
	// w does the storage writes (writer.go).
	w *writer
	// stalled is the storage error HandleReady last met, nil once the
	// writes that failed succeeded (StorageErr).
	stalled error
	// reads are the ConfirmLeadership calls waiting for raft's ReadIndex,
	// by request number.
	reads    map[uint64]func(bool)
	nextRead uint64
}

// proposal is one Propose call waiting for its outcome.
type proposal struct {
	term  uint64 // the leader term it was proposed in
	index uint64 // its raft index, 0 until raft hands the entry to storage
	done  func(index uint64, err error)
}

// NewNode starts the node on st: it restores the image from the newest
// snapshot; raft then hands the committed entries after it back through
// HandleReady. A node that is the only voter campaigns at once and is
// leader after the first HandleReady. A node that is not a voter is a
// learner (learners.go): it waits for the leader to add it.
func NewNode(cfg Config, st *Storage) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	snap, _ := st.Snapshot()
	img, err := restoreImage(snap)
	if err != nil {
		return nil, err
	}
	hs, cs, _ := st.InitialState()
	idx := snap.GetMetadata().GetIndex()
	if last, _ := st.LastIndex(); hs.GetCommit() > last {
		// raft would panic: the log lost entries the hard state says committed.
		return nil, fmt.Errorf("%w: commit index %d past the last entry %d", ErrCorrupt, hs.GetCommit(), last)
	}
	rn, err := raft.NewRawNode(cfg.raftConfig(st, idx))
	if err != nil {
		return nil, fmt.Errorf("quorum: start raft: %w", err)
	}
	n := &Node{cfg: cfg, st: st, rn: rn, w: newWriter(st), confState: cs, applied: idx, snapIndex: idx, startCommit: hs.GetCommit()}
	n.image.Store(img)
	if len(cfg.Voters) == 1 && cfg.IsVoter() {
		if err := rn.Campaign(); err != nil {
			return nil, fmt.Errorf("quorum: campaign: %w", err)
		}
	}
	return n, nil
}

// restoreImage rebuilds the image a snapshot holds (Empty without one).
func restoreImage(snap *pb.Snapshot) (*metadata.Image, error) {
	idx := snap.GetMetadata().GetIndex()
	if idx == 0 {
		return metadata.Empty(), nil
	}
	recs, err := DecodeSnapshotData(snap.GetData())
	if err != nil {
		return nil, fmt.Errorf("quorum: snapshot %d: %w", idx, err)
	}
	img, err := metadata.Restore(recs, int64(idx))
	if err != nil {
		return nil, fmt.Errorf("%w: restore snapshot %d: %w", ErrApplyFailed, idx, err)
	}
	return img, nil
}

// Image returns the latest published metadata image: every committed entry
// up to Image().Offset() applied. Safe for concurrent use.
func (n *Node) Image() *metadata.Image { return n.image.Load() }

// Tick advances raft's logical clock by one tick.
func (n *Node) Tick() { n.rn.Tick() }

// Step hands a message from another node to raft.
func (n *Node) Step(m *pb.Message) error {
	if n.failed != nil {
		return n.failed
	}
	if n.stalled != nil {
		// A voter that cannot write acknowledges nothing: the message is
		// dropped, as a partitioned node's would be, and the sender retries.
		return fmt.Errorf("%w: %v from %d dropped: %w", ErrStorageUnavailable, m.GetType(), m.GetFrom(), n.stalled)
	}
	if err := n.rn.Step(m); err != nil {
		return fmt.Errorf("quorum: step %v from %d: %w", m.GetType(), m.GetFrom(), err)
	}
	return nil
}

// Leader returns the node id of the leader this node knows of, or -1.
func (n *Node) Leader() int32 {
	if lead := n.rn.BasicStatus().Lead; lead != raft.None {
		return NodeIDOf(lead)
	}
	return -1
}

// IsLeader reports whether this node is the quorum leader (the controller).
func (n *Node) IsLeader() bool { return n.rn.BasicStatus().RaftState == raft.StateLeader }

// Term returns the node's current raft term.
func (n *Node) Term() uint64 { return n.rn.BasicStatus().GetTerm() }

// StartCommit returns the commit index the node's storage held when it
// started. Every entry applied before a restart is at or below it, so an
// image whose Offset reaches it holds all that state (and on a fresh node
// it is 0).
func (n *Node) StartCommit() uint64 { return n.startCommit }

// Applied returns the raft index of the last applied entry.
func (n *Node) Applied() uint64 { return n.applied }

// Err returns the error that stopped the node, or nil.
func (n *Node) Err() error { return n.failed }

// StorageErr returns the storage error that keeps the node from writing
// (HandleReady returned it wrapped in ErrStorageUnavailable), or nil once
// writes succeed again.
func (n *Node) StorageErr() error { return n.stalled }

// Propose proposes records as one raft entry; they commit and apply
// together. Only the leader proposes: elsewhere it returns ErrNotLeader.
// The records are not validated here: the controller checks them against
// its latest image (and its proposals in flight) before proposing, and a
// committed record that fails to apply stops the node (ErrApplyFailed).
// done, if not nil, is called once from HandleReady: with the entry's index
// and nil when the entry was applied, or with ErrProposalDropped when a
// leader change discarded it.
func (n *Node) Propose(records []metadata.Record, done func(index uint64, err error)) error {
	if n.failed != nil {
		return n.failed
	}
	if n.stalled != nil {
		return fmt.Errorf("%w: %w", ErrStorageUnavailable, n.stalled)
	}
	if len(records) == 0 {
		return ErrEmptyProposal
	}
	st := n.rn.BasicStatus()
	if st.RaftState != raft.StateLeader {
		return fmt.Errorf("%w: node %d (leader %d)", ErrNotLeader, n.cfg.NodeID, n.Leader())
	}
	data, err := EncodeEntry(records)
	if err != nil {
		return err
	}
	// The controller bounds its proposals (metadata.CheckOp); this is the
	// backstop that keeps an entry the metadata log cannot hold out of raft.
	if len(records) > metadata.MaxRecordsPerOp || len(data) > metadata.MaxOpBytes {
		return fmt.Errorf("%w: entry of %d records, %d bytes", metadata.ErrOpTooLarge, len(records), len(data))
	}
	if err := n.rn.Propose(data); err != nil {
		if errors.Is(err, raft.ErrProposalDropped) {
			return fmt.Errorf("%w: %w", ErrProposalDropped, err)
		}
		return fmt.Errorf("quorum: propose: %w", err)
	}
	n.pending = append(n.pending, &proposal{term: st.GetTerm(), done: done})
	return nil
}

// Async makes the node's storage writes asynchronous: from now on
// HandleReady hands them to a goroutine of the node's and returns without
// waiting for any fsync, and wake is called from that goroutine whenever a
// write finished (or failed), after which the caller calls HandleReady
// again (in its own goroutine, as always). Without Async every write is
// done, fsynced, inside HandleReady. Call it once; the writes handed
// after it are asynchronous. Close stops the goroutine.
func (n *Node) Async(wake func()) { n.w.start(wake) }

// Close stops the node's writer once the write under way is done. Writes
// still queued are dropped: none of them was acknowledged. The node is
// not used after.
func (n *Node) Close() { n.w.close() }

// HasReady reports whether HandleReady has work: raft has a Ready, a write
// finished, or a failed write is to be retried.
func (n *Node) HasReady() bool {
	return n.failed == nil && (n.stalled != nil || n.w.pending() || n.rn.HasReady())
}

// Retrying reports whether a retry of a failed write is under way (Async):
// HandleReady says ErrStorageUnavailable until its outcome is known.
func (n *Node) Retrying() bool { return n.w.retrying() }

// HandleReady moves raft on (raft's asynchronous storage writes, in order
// of what it does): it takes the writes that became durable and delivers
// what raft held back for them (its own acknowledgements to itself, votes
// and appends answered to other nodes), then takes each Ready raft has:
// its messages that need nothing durable are returned to send at once,
// its storage writes (entries, hard state, a snapshot received) go to the
// writer, its committed entries are applied in order and the new image
// published, proposals resolved; a snapshot is taken when due. Nothing is
// acknowledged before it is durable (raft's contract): the messages that
// wait for a write are returned by the HandleReady after it finished.
// Call it after Tick, Step and Propose, and (with Async) after each wake.
//
// A write that fails with an I/O error (ENOSPC, EMFILE, EIO) returns an
// error wrapping ErrStorageUnavailable: the failed write and those after
// it wait, nothing of them is acknowledged, and no new Ready is taken.
// Call HandleReady again later (with backoff): it recovers the storage
// (Storage.Recover reopens a log an fsync error failed, cut to its durable
// prefix), then writes the waiting writes again; with Async the retry runs
// on the writer (Retrying) and its outcome comes with the next wake.
// Meanwhile Propose and Step refuse with ErrStorageUnavailable; the
// messages returned with the error (of writes done before the failure)
// are still to be sent. Any other error (a corrupt log, an apply failure)
// is fatal: the node stops.
func (n *Node) HandleReady() ([]*pb.Message, error) {
	if n.failed != nil {
		return nil, n.failed
	}
	if n.stalled != nil {
		n.w.askRetry()
	}
	var out []*pb.Message
	for {
		var err error
		if out, err = n.collect(out); err != nil {
			return out, err
		}
		if n.stalled != nil {
			return out, fmt.Errorf("%w: %w", ErrStorageUnavailable, n.stalled)
		}
		if !n.rn.HasReady() {
			if n.w.pending() {
				continue
			}
			return out, nil
		}
		rd := n.rn.Ready()
		n.confirmReads(rd.ReadStates)
		for _, m := range rd.Messages {
			switch m.GetTo() {
			case raft.LocalAppendThread:
				n.assignIndexes(m.GetEntries())
				n.w.submit(writeJob{append: m})
			case raft.LocalApplyThread:
				if err := n.apply(m.GetEntries()); err != nil {
					n.failed = err
					return nil, err
				}
				n.stepLocal(m.GetResponses())
			case RaftID(n.cfg.NodeID):
				n.stepLocal([]*pb.Message{m})
			default:
				out = append(out, m)
			}
		}
		if err := n.afterAdvance(); err != nil {
			return out, n.storageFailed(err)
		}
	}
}

// collect takes the writes that became durable: a snapshot received is
// applied to the image, then the responses raft attached to each write
// are delivered, to raft itself or (returned) to other nodes. A failed
// write stalls the node (storageFailed).
func (n *Node) collect(out []*pb.Message) ([]*pb.Message, error) {
	done, retrying, werr := n.w.collect()
	for _, j := range done {
		m := j.append
		if m == nil {
			continue // a snapshot of our own
		}
		if snap := m.GetSnapshot(); snap != nil && !raft.IsEmptySnap(snap) && snap.GetMetadata().GetIndex() > n.applied {
			if err := n.applySnapshot(snap); err != nil {
				n.failed = err
				return nil, err
			}
		}
		for _, r := range m.GetResponses() {
			if r.GetTo() == RaftID(n.cfg.NodeID) {
				n.stepLocal([]*pb.Message{r})
			} else {
				out = append(out, r)
			}
		}
	}
	switch {
	case werr != nil:
		return out, n.storageFailed(werr)
	case n.stalled != nil && !retrying:
		n.stalled = nil // the retry wrote everything that had failed
	}
	return out, nil
}

// stepLocal hands raft the messages it addressed to itself or its storage
// threads' answers. raft refuses none that it made itself but stale ones,
// which it ignores.
func (n *Node) stepLocal(ms []*pb.Message) {
	for _, m := range ms {
		_ = n.rn.Step(m)
	}
}

// storageFailed records a failed write: a transient one stalls the node
// (retried by the next HandleReady), one that retrying cannot cure (data
// that is not what this package wrote, an entry the log cannot hold, an
// apply failure) stops it.
func (n *Node) storageFailed(err error) error {
	if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrApplyFailed) || errors.Is(err, log.ErrCorrupt) ||
		errors.Is(err, log.ErrRecordTooLarge) || errors.Is(err, log.ErrClosed) {
		n.failed = err
		return err
	}
	n.stalled = err
	return fmt.Errorf("%w: %w", ErrStorageUnavailable, err)
}

// assignIndexes gives this node's pending proposals the indexes of the
// entries raft made of them: a leader's own non-empty normal entries of a
// term appear in the order they were proposed.
func (n *Node) assignIndexes(ents []*pb.Entry) {
	for _, e := range ents {
		if e.GetType() != pb.EntryNormal || len(e.GetData()) == 0 {
			continue
		}
		for _, p := range n.pending {
			if p.index == 0 && p.term == e.GetTerm() {
				p.index = e.GetIndex()
				break
			}
		}
	}
}

// applySnapshot restores the image from a snapshot received from the
// leader (durable by now) and publishes it.
func (n *Node) applySnapshot(snap *pb.Snapshot) error {
	img, err := restoreImage(snap)
	if err != nil {
		return err
	}
	meta := snap.GetMetadata()
	n.image.Store(img)
	n.installed++
	n.confState = proto.Clone(meta.GetConfState()).(*pb.ConfState)
	n.applied, n.snapIndex = meta.GetIndex(), meta.GetIndex()
	n.resolveThrough(meta.GetIndex(), meta.GetTerm(), true)
	return nil
}

// apply applies committed entries (durable on this node) to a new image
// and publishes it once.
func (n *Node) apply(ents []*pb.Entry) error {
	if len(ents) == 0 {
		return nil
	}
	b := metadata.NewBuilder(n.image.Load())
	for _, e := range ents {
		if e.GetIndex() <= n.applied {
			continue
		}
		if err := n.applyEntry(b, e); err != nil {
			return err
		}
		n.applied = e.GetIndex()
		n.resolveThrough(e.GetIndex(), e.GetTerm(), false)
	}
	n.image.Store(b.Image())
	return nil
}

// applyEntry applies one committed entry: its records, or a configuration
// change, or nothing (an empty entry still moves the image's offset).
func (n *Node) applyEntry(b *metadata.Builder, e *pb.Entry) error {
	idx := e.GetIndex()
	switch e.GetType() {
	case pb.EntryNormal:
		recs, err := DecodeEntry(e.GetData())
		if err != nil {
			return fmt.Errorf("%w: entry %d: %w", ErrApplyFailed, idx, err)
		}
		for _, r := range recs {
			if err := b.Apply(r, int64(idx)); err != nil {
				return fmt.Errorf("%w: entry %d: %w", ErrApplyFailed, idx, err)
			}
		}
		if len(recs) > 0 {
			return nil
		}
	case pb.EntryConfChange, pb.EntryConfChangeV2:
		cc, err := decodeConfChange(e)
		if err != nil {
			return fmt.Errorf("%w: entry %d: %w", ErrApplyFailed, idx, err)
		}
		n.applyConfChange(cc)
	}
	if err := b.AdvanceTo(int64(idx)); err != nil {
		return fmt.Errorf("%w: entry %d: %w", ErrApplyFailed, idx, err)
	}
	return nil
}

// decodeConfChange unmarshals a configuration change entry.
func decodeConfChange(e *pb.Entry) (pb.ConfChangeI, error) {
	if e.GetType() == pb.EntryConfChange {
		cc := &pb.ConfChange{}
		return cc, proto.Unmarshal(e.GetData(), cc)
	}
	cc := &pb.ConfChangeV2{}
	return cc, proto.Unmarshal(e.GetData(), cc)
}

// resolveThrough settles proposals once the entry at index (of term) is
// applied: the proposal at index succeeded if its term matches; one of an
// older term that is not applied by now never will be (a log's terms only
// grow). After a snapshot the outcome at index is unknown to this node;
// those proposals are reported dropped.
func (n *Node) resolveThrough(index, term uint64, snapshot bool) {
	keep := n.pending[:0]
	for _, p := range n.pending {
		switch {
		case p.index == index && p.term == term && !snapshot:
			p.finish(index, nil)
		case (p.index != 0 && p.index <= index) || p.term < term:
			p.finish(p.index, fmt.Errorf("%w: entry %d of term %d replaced", ErrProposalDropped, p.index, p.term))
		default:
			keep = append(keep, p)
		}
	}
	clear(n.pending[len(keep):])
	n.pending = keep
}

func (p *proposal) finish(index uint64, err error) {
	if p.done != nil {
		p.done(index, err)
	}
}

// ConfirmLeadership asks raft to confirm that this node still leads the
// quorum: a round of heartbeats that a quorum of voters answers (raft's
// ReadIndex, ReadOnlySafe). done runs from HandleReady, once, with true
// once confirmed, or with false when the node stops leading first (or
// does not lead now). A controller answers a request that writes nothing
// (a broker's heartbeat, which renews its lease) only once confirmed, so a
// deposed controller that does not know it yet renews no lease.
func (n *Node) ConfirmLeadership(done func(ok bool)) {
	if n.failed != nil || !n.IsLeader() {
		done(false)
		return
	}
	if n.reads == nil {
		n.reads = map[uint64]func(bool){}
	}
	n.nextRead++
	var ctx [8]byte
	binary.BigEndian.PutUint64(ctx[:], n.nextRead)
	n.reads[n.nextRead] = done
	n.rn.ReadIndex(ctx[:])
}

// confirmReads completes the ConfirmLeadership calls raft confirmed.
func (n *Node) confirmReads(states []raft.ReadState) {
	for _, rs := range states {
		if len(rs.RequestCtx) != 8 {
			continue
		}
		seq := binary.BigEndian.Uint64(rs.RequestCtx)
		if done, ok := n.reads[seq]; ok {
			delete(n.reads, seq)
			done(true)
		}
	}
}

// failReads answers every waiting ConfirmLeadership with false: this node
// no longer leads.
func (n *Node) failReads() {
	reads := n.reads
	n.reads = nil
	for _, done := range reads {
		done(false)
	}
}

// afterAdvance announces a new leadership with a ControllerChangedRecord
// (KRaft's LeaderChangeMessage) and takes a snapshot when due.
func (n *Node) afterAdvance() error {
	st := n.rn.BasicStatus()
	if st.RaftState != raft.StateLeader && len(n.reads) > 0 {
		n.failReads()
	}
	if st.RaftState == raft.StateLeader && st.GetTerm() > n.announced {
		n.announced = st.GetTerm()
		rec := metadata.ControllerChangedRecord{ControllerID: n.cfg.NodeID, Term: st.GetTerm()}
		err := n.Propose([]metadata.Record{rec}, nil)
		if errors.Is(err, ErrNotLeader) || errors.Is(err, ErrProposalDropped) {
			n.announced = 0 // retried after the next Ready if still leader
		} else if err != nil {
			return err
		}
	}
	return n.maybeSnapshot()
}

// maybeSnapshot takes a snapshot when one is due.
func (n *Node) maybeSnapshot() error {
	due := n.snapshotDue || (n.cfg.SnapshotEntries > 0 && n.applied-n.snapIndex >= n.cfg.SnapshotEntries)
	if due && n.applied > n.snapIndex {
		n.snapshotDue = false
		return n.Snapshot()
	}
	return nil
}

// Snapshot takes a snapshot of the applied image: a checkpoint file, then
// the log compacted up to it. The write goes to the node's writer like any
// other (without Async it is done before Snapshot returns); a failure
// stalls the node as a failed append does. It does nothing when nothing
// was applied since the last one.
func (n *Node) Snapshot() error {
	if n.failed != nil {
		return n.failed
	}
	if n.applied <= n.snapIndex {
		return nil
	}
	img := n.image.Load()
	term, err := n.st.Term(n.applied)
	if err != nil {
		return fmt.Errorf("quorum: snapshot at %d: %w", n.applied, err)
	}
	data, err := EncodeSnapshotData(img.Records(), term)
	if err != nil {
		return err
	}
	cs := proto.Clone(n.confState).(*pb.ConfState)
	n.w.submit(writeJob{snap: &snapshotJob{index: n.applied, cs: cs, data: data}})
	n.snapIndex = n.applied
	return nil
}

// ReportUnreachable tells raft that a message to node could not be sent.
func (n *Node) ReportUnreachable(node int32) { n.rn.ReportUnreachable(RaftID(node)) }

// ReportSnapshot tells raft whether a snapshot sent to node was delivered.
func (n *Node) ReportSnapshot(node int32, ok bool) {
	status := raft.SnapshotFinish
	if !ok {
		status = raft.SnapshotFailure
	}
	n.rn.ReportSnapshot(RaftID(node), status)
}
