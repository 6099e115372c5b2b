package quorum

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"

	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// MetadataPartition is the log partition that stores the raft log.
var MetadataPartition = log.TopicPartition{Topic: "__cluster_metadata", Partition: 0}

// LogConfig returns the settings of the metadata log: every append fsynced
// before it is reported (flush.messages=1, whatever the topics' policy),
// nothing deleted by time or size (only snapshots compact it), and small
// segments so that compaction frees space.
func LogConfig() log.Config {
	cfg := log.DefaultConfig()
	cfg.FlushMessages = 1
	cfg.RetentionMs = -1
	cfg.RetentionBytes = -1
	cfg.SegmentBytes = 8 << 20
	cfg.SegmentMs = math.MaxInt64 / 2
	return cfg
}

// entryLoc is where one raft entry lives in the log.
type entryLoc struct {
	offset int64
	term   uint64
}

// Storage is raft's Storage backed by the metadata partition's log.Log,
// with the hard state and snapshots as files in the partition directory.
//
// Mapping: raft entry i is one record batch. Its records take consecutive
// offsets (one per metadata record, as Kafka's do), so the offset of entry
// i is node-local and kept in memory; the batch itself says which entry it
// is (its first record's "raft.index" and "raft.type" headers) and its
// partition leader epoch is the entry's term. See entryBatch.
//
// Every method that changes state (Append, SetHardState, ApplySnapshot,
// CreateSnapshot) returns only once the change is durable. Raft's reads
// are safe for concurrent use with the writes; the writes themselves come
// from one goroutine at a time (the node's writer), and their fsyncs run
// without holding up the reads.
type Storage struct {
	fs  log.FS
	m   *log.Manager
	log *log.Log // replaced by Recover after a failure
	dir string

	mu    sync.Mutex
	hs    *pb.HardState
	snap  *pb.Snapshot // latest snapshot; index 0 when none
	boot  *pb.ConfState
	first uint64     // index of ents[0]
	ents  []entryLoc // entries first..first+len-1
}

var _ raft.Storage = (*Storage)(nil)

// OpenStorage opens (creating if needed) the raft log in m as the partition
// MetadataPartition. fsys must be the file system m uses. voters is the
// static voter list used as the configuration until a snapshot records one.
// It reads the hard state and the newest checkpoint, and rebuilds the entry
// table by scanning the log.
func OpenStorage(m *log.Manager, fsys log.FS, voters []int32) (*Storage, error) {
	l, err := m.OpenLog(MetadataPartition, LogConfig(), [16]byte(metadata.MetadataTopicID))
	if err != nil {
		return nil, fmt.Errorf("quorum: open metadata log: %w", err)
	}
	s := &Storage{fs: fsys, m: m, log: l, dir: l.Dir(), hs: &pb.HardState{}, boot: &pb.ConfState{}}
	for _, v := range voters {
		s.boot.Voters = append(s.boot.Voters, RaftID(v))
	}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// load reads the hard state, the newest snapshot and the entry table.
func (s *Storage) load() error {
	path := filepath.Join(s.dir, quorumStateFile)
	b, err := log.ReadFile(s.fs, path)
	switch {
	case err == nil:
		if s.hs, err = decodeHardState(path, b); err != nil {
			return err
		}
	case !isNotExist(err):
		return fmt.Errorf("quorum: read %s: %w", path, err)
	}
	if err := s.loadSnapshot(); err != nil {
		return err
	}
	return s.scan()
}

// loadSnapshot loads the newest checkpoint and removes older ones and
// leftover temporary files.
func (s *Storage) loadSnapshot() error {
	s.snap = &pb.Snapshot{Metadata: &pb.SnapshotMetadata{ConfState: s.boot, Index: new(uint64(0)), Term: new(uint64(0))}}
	names, err := s.fs.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("quorum: list %s: %w", s.dir, err)
	}
	var newest string
	var newestIdx uint64
	for _, n := range names {
		if idx, ok := parseCheckpointName(n); ok && (newest == "" || idx > newestIdx) {
			newest, newestIdx = n, idx
		}
	}
	if newest == "" {
		return nil
	}
	path := filepath.Join(s.dir, newest)
	b, err := log.ReadFile(s.fs, path)
	if err != nil {
		return fmt.Errorf("quorum: read %s: %w", path, err)
	}
	if s.snap, err = decodeCheckpoint(path, b); err != nil {
		return err
	}
	return s.removeOldCheckpoints(newest)
}

// scan reads every batch of the log to rebuild the entry table, and drops
// entries a snapshot covers.
func (s *Storage) scan() error {
	snapIdx := s.snap.GetMetadata().GetIndex()
	s.first, s.ents = snapIdx+1, nil
	off, end := s.log.LogStartOffset(), s.log.LogEndOffset()
	dropTo := off // entries below are covered by the snapshot
	next := uint64(0)
	for off < end {
		data, err := s.log.Read(off, log.ReadOptions{MaxBytes: 1 << 20})
		if err != nil {
			return fmt.Errorf("quorum: scan metadata log at %d: %w", off, err)
		}
		batches, err := batch.Split(data)
		if err != nil || len(batches) == 0 {
			return fmt.Errorf("%w: metadata log at %d: %w", ErrCorrupt, off, errors.Join(err, errors.New("no batch")))
		}
		for _, b := range batches {
			e, err := batchEntry(b)
			if err != nil {
				return fmt.Errorf("quorum: metadata log at %d: %w", batch.BaseOffset(b), err)
			}
			idx := e.GetIndex()
			if next != 0 && idx != next {
				return fmt.Errorf("%w: metadata log at %d holds entry %d, expected %d", ErrCorrupt, batch.BaseOffset(b), idx, next)
			}
			next = idx + 1
			off = batch.LastOffset(b) + 1
			switch {
			case idx <= snapIdx:
				dropTo = off
			case len(s.ents) == 0 && idx != s.first:
				return fmt.Errorf("%w: metadata log starts at entry %d, snapshot ends at %d", ErrCorrupt, idx, snapIdx)
			default:
				s.ents = append(s.ents, entryLoc{offset: batch.BaseOffset(b), term: e.GetTerm()})
			}
		}
	}
	if dropTo > s.log.LogStartOffset() {
		// A crash came between writing a snapshot and compacting the log.
		if _, err := s.log.DeleteRecordsBefore(dropTo); err != nil {
			return fmt.Errorf("quorum: compact metadata log: %w", err)
		}
	}
	return nil
}

// InitialState implements raft.Storage.
func (s *Storage) InitialState() (*pb.HardState, *pb.ConfState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return proto.Clone(s.hs).(*pb.HardState), proto.Clone(s.snap.GetMetadata().GetConfState()).(*pb.ConfState), nil
}

// Entries implements raft.Storage: it reads the batches of entries
// [lo, hi) from the log, at least one, up to maxSize bytes of entries.
func (s *Storage) Entries(lo, hi, maxSize uint64) ([]*pb.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if lo < s.first {
		return nil, raft.ErrCompacted
	}
	if hi > s.lastLocked()+1 || lo > hi {
		return nil, raft.ErrUnavailable // raft compares its sentinels with ==
	}
	var out []*pb.Entry
	var size uint64
	off := int64(0)
	if lo < hi {
		off = s.ents[lo-s.first].offset
	}
	for idx := lo; idx < hi; {
		data, err := s.log.Read(off, log.ReadOptions{MaxBytes: 1 << 20})
		if err != nil {
			return nil, fmt.Errorf("quorum: read entry %d at offset %d: %w", idx, off, err)
		}
		batches, err := batch.Split(data)
		if err != nil || len(batches) == 0 {
			return nil, fmt.Errorf("%w: entry %d at offset %d", ErrCorrupt, idx, off)
		}
		for _, b := range batches {
			e, err := batchEntry(b)
			if err != nil {
				return nil, fmt.Errorf("quorum: entry %d: %w", idx, err)
			}
			if e.GetIndex() != idx {
				return nil, fmt.Errorf("%w: offset %d holds entry %d, expected %d", ErrCorrupt, batch.BaseOffset(b), e.GetIndex(), idx)
			}
			size += uint64(proto.Size(e))
			if len(out) > 0 && size > maxSize {
				return out, nil
			}
			out = append(out, e)
			idx++
			off = batch.LastOffset(b) + 1
			if idx == hi {
				break
			}
		}
	}
	return out, nil
}

// Term implements raft.Storage.
func (s *Storage) Term(i uint64) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.snap.GetMetadata()
	switch {
	case i == snap.GetIndex():
		return snap.GetTerm(), nil
	case i < s.first:
		return 0, raft.ErrCompacted
	case i > s.lastLocked():
		return 0, raft.ErrUnavailable
	}
	return s.ents[i-s.first].term, nil
}

// LastIndex implements raft.Storage.
func (s *Storage) LastIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastLocked(), nil
}

func (s *Storage) lastLocked() uint64 { return s.first + uint64(len(s.ents)) - 1 }

// FirstIndex implements raft.Storage.
func (s *Storage) FirstIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first, nil
}

// Snapshot implements raft.Storage: the newest checkpoint (index 0 when
// none was taken).
func (s *Storage) Snapshot() (*pb.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap, nil
}

// HardState returns the persisted hard state.
func (s *Storage) HardState() *pb.HardState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return proto.Clone(s.hs).(*pb.HardState)
}

// Log returns the metadata partition's log (a new one after Recover
// reopened it).
func (s *Storage) Log() *log.Log {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log
}

// Recover makes the storage usable again after a write failed: a metadata
// log that an fsync error failed for good (log.ErrLogFailed) is reopened
// from disk, cut to what was durable (log.Manager.ReopenLog), and the entry
// table is rebuilt from it. Entries a failed Append left past the durable
// offset are gone then; raft never saw them stored (the Ready that held
// them was not advanced) and hands them again. A log that did not fail is
// left as is (a failed write, such as ENOSPC or EMFILE, took itself back).
// Recover fails while the cause persists; call it again later.
func (s *Storage) Recover() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log.Err() == nil {
		return nil
	}
	l, err := s.m.ReopenLog(s.log)
	if err != nil {
		return fmt.Errorf("quorum: reopen metadata log: %w", err)
	}
	s.log = l
	return s.scan()
}

// Append stores entries (a Ready's Entries): an entry that conflicts with a
// stored one replaces it and everything after it (log.TruncateTo), entries
// a snapshot covers are skipped. It returns once the entries are fsynced.
func (s *Storage) Append(entries []*pb.Entry) error {
	end, err := s.write(entries)
	if err != nil || end < 0 {
		return err
	}
	return s.waitFlushed(end)
}

// write is Append without waiting for the fsync: it returns the log offset
// to wait for with waitFlushed (-1 when nothing was written). Raft's reads
// (Entries, Term) are not held up by the fsync: the lock is not held
// while it runs.
func (s *Storage) write(entries []*pb.Entry) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(entries) > 0 && entries[0].GetIndex() < s.first {
		entries = entries[1:]
	}
	if len(entries) == 0 {
		return -1, nil
	}
	first := entries[0].GetIndex()
	if last := s.lastLocked(); first > last+1 {
		return -1, fmt.Errorf("quorum: append entry %d after last entry %d: gap", first, last)
	} else if first <= last {
		if err := s.truncateLocked(first); err != nil {
			return -1, err
		}
	}
	off := s.log.LogEndOffset()
	var buf []byte
	locs := make([]entryLoc, 0, len(entries))
	for _, e := range entries {
		b, err := entryBatch(e, off)
		if err != nil {
			return -1, err
		}
		locs = append(locs, entryLoc{offset: off, term: e.GetTerm()})
		off = batch.LastOffset(b) + 1
		buf = append(buf, b...)
	}
	if _, err := s.log.Append(buf, log.AppendOptions{}); err != nil {
		return -1, fmt.Errorf("quorum: append entries %d-%d: %w", first, first+uint64(len(entries))-1, err)
	}
	s.ents = append(s.ents, locs...)
	return off, nil
}

// waitFlushed waits until the metadata log is durable up to end (an
// offset write returned).
func (s *Storage) waitFlushed(end int64) error {
	l := s.Log()
	if err := l.WaitFlushed(end); err != nil {
		return fmt.Errorf("quorum: fsync metadata log up to offset %d: %w", end, err)
	}
	return nil
}

// truncateLocked removes entries from index on, durably.
func (s *Storage) truncateLocked(index uint64) error {
	off := s.ents[index-s.first].offset
	if _, err := s.log.TruncateTo(off); err != nil {
		return fmt.Errorf("quorum: truncate entries from %d: %w", index, err)
	}
	s.ents = s.ents[:index-s.first]
	return nil
}

// SetHardState persists hs (term, vote, commit) in the quorum-state file,
// atomically and fsynced. One goroutine at a time calls it.
func (s *Storage) SetHardState(hs *pb.HardState) error {
	// One goroutine writes (the node's writer): the file is written
	// without the lock, so raft's reads are not held up by its fsync.
	if err := log.WriteFileAtomic(s.fs, filepath.Join(s.dir, quorumStateFile), encodeHardState(hs)); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hs = proto.Clone(hs).(*pb.HardState)
	return nil
}

// ApplySnapshot installs a snapshot received from the leader: it writes the
// checkpoint file, then empties the log, whose entries the snapshot
// replaces.
func (s *Storage) ApplySnapshot(snap *pb.Snapshot) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx := snap.GetMetadata().GetIndex()
	cur := s.snap.GetMetadata()
	switch {
	case idx < cur.GetIndex() || (idx == cur.GetIndex() && snap.GetMetadata().GetTerm() != cur.GetTerm()):
		return raft.ErrSnapOutOfDate
	case idx > cur.GetIndex():
		if err := s.writeSnapshotLocked(snap); err != nil {
			return err
		}
	}
	// (idx equal to the current snapshot: a retry after the log was not
	// emptied; the checkpoint is durable already.)
	if _, err := s.log.TruncateTo(s.log.LogStartOffset()); err != nil {
		return fmt.Errorf("quorum: empty metadata log for snapshot %d: %w", idx, err)
	}
	s.first, s.ents = idx+1, nil
	return nil
}

// CreateSnapshot records a snapshot of the state machine at index (an
// applied entry): data is EncodeSnapshotData of the image at index and cs
// the configuration there. It writes the checkpoint file, then compacts the
// log up to index. It returns raft.ErrSnapOutOfDate when a snapshot at or
// past index exists.
func (s *Storage) CreateSnapshot(index uint64, cs *pb.ConfState, data []byte) (*pb.Snapshot, error) {
	s.mu.Lock()
	if index <= s.snap.GetMetadata().GetIndex() {
		s.mu.Unlock()
		return nil, raft.ErrSnapOutOfDate
	}
	if index > s.lastLocked() {
		last := s.lastLocked()
		s.mu.Unlock()
		return nil, fmt.Errorf("quorum: snapshot at %d past the last entry %d: %w", index, last, raft.ErrUnavailable)
	}
	term := s.ents[index-s.first].term
	s.mu.Unlock()
	snap := &pb.Snapshot{
		Data:     data,
		Metadata: &pb.SnapshotMetadata{ConfState: proto.Clone(cs).(*pb.ConfState), Index: new(index), Term: new(term)},
	}
	// The checkpoint file is written without the lock (one goroutine
	// writes), so raft's reads are not held up by its fsync; the entries
	// up to index are committed and stay as they are meanwhile.
	name, err := s.writeCheckpoint(snap)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.snap = snap
	err = s.compactLocked(index)
	s.mu.Unlock()
	if err != nil {
		return snap, err
	}
	return snap, s.removeOldCheckpoints(name)
}

// compactLocked discards entries up to and including index (covered by the
// snapshot) with log.DeleteRecordsBefore.
func (s *Storage) compactLocked(index uint64) error {
	if index < s.first {
		return nil
	}
	n := index - s.first + 1
	end := s.log.LogEndOffset()
	if n < uint64(len(s.ents)) {
		end = s.ents[n].offset
	}
	if _, err := s.log.DeleteRecordsBefore(end); err != nil {
		return fmt.Errorf("quorum: compact entries up to %d: %w", index, err)
	}
	s.ents = append([]entryLoc(nil), s.ents[n:]...)
	s.first = index + 1
	return nil
}

// writeSnapshotLocked writes snap's checkpoint file durably, makes it the
// current snapshot and removes older checkpoint files.
func (s *Storage) writeSnapshotLocked(snap *pb.Snapshot) error {
	name, err := s.writeCheckpoint(snap)
	if err != nil {
		return err
	}
	s.snap = snap
	return s.removeOldCheckpoints(name)
}

// writeCheckpoint writes snap's checkpoint file durably and returns its
// name.
func (s *Storage) writeCheckpoint(snap *pb.Snapshot) (string, error) {
	content, err := encodeCheckpoint(snap)
	if err != nil {
		return "", err
	}
	name := checkpointName(snap.GetMetadata().GetIndex(), snap.GetMetadata().GetTerm())
	if err := log.WriteFileAtomic(s.fs, filepath.Join(s.dir, name), content); err != nil {
		return "", err
	}
	return name, nil
}

// removeOldCheckpoints deletes every checkpoint file but keep, and leftover
// temporary files.
func (s *Storage) removeOldCheckpoints(keep string) error {
	names, err := s.fs.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("quorum: list %s: %w", s.dir, err)
	}
	removed := false
	for _, n := range names {
		_, isCkpt := parseCheckpointName(n)
		tmp := n == quorumStateFile+".tmp" || isCheckpointTmp(n)
		if (isCkpt && n != keep) || tmp {
			if err := s.fs.Remove(filepath.Join(s.dir, n)); err != nil && !isNotExist(err) {
				return fmt.Errorf("quorum: remove %s: %w", n, err)
			}
			removed = true
		}
	}
	if removed {
		if err := s.fs.SyncDir(s.dir); err != nil {
			return fmt.Errorf("quorum: sync %s: %w", s.dir, err)
		}
	}
	return nil
}

// isCheckpointTmp reports a temporary checkpoint file left by a crash.
func isCheckpointTmp(name string) bool {
	base, ok := strings.CutSuffix(name, ".tmp")
	if !ok {
		return false
	}
	_, ok = parseCheckpointName(base)
	return ok
}
