package partition

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/log/batch"
)

// followerShell is a shell whose replica follows node 1 at leader epoch 3.
func followerShell(t *testing.T, mutate func(*Config)) *shell {
	t.Helper()
	cfg := DefaultConfig()
	cfg.NodeID = 2
	if mutate != nil {
		mutate(&cfg)
	}
	r, err := NewReplica(cfg, Start{LatestEpoch: -1})
	if err != nil {
		t.Fatal(err)
	}
	s := &shell{t: t, r: r, replies: map[uint64]*AppendBatchesResult{}, positions: map[uint64]*ReplicaPosition{}, now: 1000}
	s.handle(r.BecomeFollower(&BecomeFollower{Leader: 1, LeaderEpoch: 3, PartitionEpoch: 7}))
	return s
}

// leaderBatch is a batch as the leader stored it: n records from offset,
// written at leader epoch, by producer pid (-1: none) from sequence seq.
func leaderBatch(t *testing.T, offset int64, n int, epoch int32, pid int64, seq int32) []byte {
	t.Helper()
	pe := int16(-1)
	if pid >= 0 {
		pe = 0
	}
	b := buildBatch(t, ProducerBatch{ProducerID: pid, ProducerEpoch: pe, FirstSeq: seq, FirstOffset: offset, LastOffset: offset + int64(n) - 1, MaxTimestamp: 5})
	batch.SetPartitionLeaderEpoch(b, epoch)
	return b
}

// replicate steps an AppendReplicated and returns its ID.
func (s *shell) replicate(epoch int32, fetchOffset int64, records []byte, leaderHW, leaderStart int64) (uint64, Output) {
	s.nextID++
	out := s.r.OnAppendReplicated(&AppendReplicated{ID: s.nextID, LeaderEpoch: epoch, FetchOffset: fetchOffset, Records: records,
		LeaderHighWatermark: leaderHW, LeaderLogStartOffset: leaderStart, NowMs: s.now})
	s.handle(out)
	return s.nextID, out
}

func (s *shell) wantPosition(id uint64, code int16, offset int64) {
	s.t.Helper()
	p := s.positions[id]
	if p == nil {
		s.t.Fatalf("position %d not answered", id)
	}
	if p.ErrorCode != code || p.FetchOffset != offset || p.LeaderEpoch != s.r.Status().LeaderEpoch {
		s.t.Fatalf("position %d: %+v, want code %d offset %d", id, p, code, offset)
	}
}

func TestFollowerAppendsReplicated(t *testing.T) {
	s := followerShell(t, nil)
	recs := append(leaderBatch(t, 0, 2, 1, 7, 0), leaderBatch(t, 2, 3, 3, 7, 2)...)
	id, _ := s.replicate(3, 0, recs, 1, 0)
	s.wantPosition(id, 0, 5)
	st := s.r.Status()
	if st.LogEndOffset != 5 || st.HighWatermark != 1 || st.LatestEpoch != 3 || st.Producers != 1 || st.Role != Follower || st.ISR != nil {
		t.Fatalf("status %+v", st)
	}
	e, _ := s.r.Producers().Entry(7)
	if len(e.Batches) != 2 || e.Batches[1].FirstOffset != 2 || e.Batches[1].LastSeq != 4 {
		t.Fatalf("producer 7: %+v", e)
	}
	// The high watermark follows the leader's, never past the log end,
	// never back.
	id, _ = s.replicate(3, 5, nil, 9, 0)
	s.wantPosition(id, 0, 5)
	if hw := s.r.Status().HighWatermark; hw != 5 {
		t.Fatalf("high watermark %d, want 5", hw)
	}
	s.replicate(3, 5, nil, 2, 0)
	if hw := s.r.Status().HighWatermark; hw != 5 {
		t.Fatalf("high watermark moved back to %d", hw)
	}
	// The log start follows the leader's, up to the high watermark.
	if _, out := s.replicate(3, 5, nil, 5, 4); out.AdvanceLogStart != 4 {
		t.Fatalf("advance log start %d, want 4", out.AdvanceLogStart)
	}
	if _, out := s.replicate(3, 5, nil, 5, 0); out.AdvanceLogStart != 0 {
		t.Fatalf("advance log start %d, want none", out.AdvanceLogStart)
	}
}

func TestFollowerRefusesReplicated(t *testing.T) {
	s := followerShell(t, nil)
	s.replicate(3, 0, leaderBatch(t, 0, 2, 3, -1, -1), 0, 0)
	corrupt := leaderBatch(t, 2, 1, 3, -1, -1)
	corrupt[len(corrupt)-1] ^= 1
	tests := []struct {
		name        string
		epoch       int32
		fetchOffset int64
		records     []byte
		code        int16
	}{
		{"older leader epoch", 2, 2, leaderBatch(t, 2, 1, 2, -1, -1), kerr.FencedLeaderEpoch.Code},
		{"newer leader epoch", 4, 2, leaderBatch(t, 2, 1, 4, -1, -1), kerr.UnknownLeaderEpoch.Code},
		{"fetch offset not the log end", 3, 1, leaderBatch(t, 1, 1, 3, -1, -1), 0},
		{"bad crc", 3, 2, corrupt, kerr.CorruptMessage.Code},
		{"garbage length", 3, 2, make([]byte, 70), kerr.CorruptMessage.Code},
		{"only a partial batch", 3, 2, leaderBatch(t, 2, 1, 3, -1, -1)[:40], 0},
		{"only batches already held", 3, 2, leaderBatch(t, 0, 2, 3, -1, -1), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.t = t
			appends := s.appends
			id, _ := s.replicate(tt.epoch, tt.fetchOffset, tt.records, 0, 0)
			s.wantPosition(id, tt.code, 2)
			if s.appends != appends || s.r.Status().LogEndOffset != 2 {
				t.Fatal("refused records reached the log")
			}
		})
	}
}

func TestFollowerDropsPartialTail(t *testing.T) {
	s := followerShell(t, nil)
	whole := leaderBatch(t, 0, 2, 3, -1, -1)
	next := leaderBatch(t, 2, 4, 3, -1, -1)
	id, _ := s.replicate(3, 0, append(whole, next[:len(next)-3]...), 0, 0)
	s.wantPosition(id, 0, 2)
	// The next fetch brings it whole; a batch below the log end is skipped.
	id, _ = s.replicate(3, 2, append(whole, next...), 0, 0)
	s.wantPosition(id, 0, 6)
}

func TestFollowerLeaderRefusesReplicated(t *testing.T) {
	s := newShell(t, nil) // leads at epoch 3
	id, _ := s.replicate(3, 0, leaderBatch(t, 0, 1, 3, -1, -1), 0, 0)
	s.wantPosition(id, kerr.NotLeaderForPartition.Code, 0)
	s.nextID++
	s.handle(s.r.OnTruncateDiverging(&TruncateDiverging{ID: s.nextID, LeaderEpoch: 3, Epoch: 1, EndOffset: 0}, -1))
	s.wantPosition(s.nextID, kerr.NotLeaderForPartition.Code, 0)
	s.nextID++
	s.handle(s.r.OnResetToLeaderStart(&ResetToLeaderStart{ID: s.nextID, LeaderEpoch: 3, LogStartOffset: 5, LeaderLogEndOffset: -1}))
	s.wantPosition(s.nextID, kerr.NotLeaderForPartition.Code, 0)
}

// Under group commit the position waits for the flush of what was
// appended, and is the flushed offset.
func TestFollowerGroupCommitPosition(t *testing.T) {
	s := followerShell(t, func(c *Config) { c.GroupCommit = true })
	id, _ := s.replicate(3, 0, leaderBatch(t, 0, 3, 3, -1, -1), 3, 0)
	if s.positions[id] != nil {
		t.Fatal("position answered before the flush")
	}
	if len(s.flushes) == 0 || s.flushes[len(s.flushes)-1] != 3 {
		t.Fatalf("flush requests %v", s.flushes)
	}
	s.handle(s.r.OnFlushCompleted(&FlushCompleted{UpTo: 2}))
	if s.positions[id] != nil {
		t.Fatal("position answered after a partial flush")
	}
	s.handle(s.r.OnFlushCompleted(&FlushCompleted{UpTo: 3}))
	s.wantPosition(id, 0, 3)
	// A failed flush fails the position.
	id, _ = s.replicate(3, 3, leaderBatch(t, 3, 1, 3, -1, -1), 3, 0)
	s.handle(s.r.OnFlushCompleted(&FlushCompleted{UpTo: 4, Err: errors.New("fsync")}))
	s.wantPosition(id, kerr.KafkaStorageError.Code, 3)
}

func TestFollowerTruncationTargets(t *testing.T) {
	tests := []struct {
		name       string
		end        int64 // the leader's end of the diverging epoch
		localEnd   int64 // this log's end of it
		wantTarget int64 // -1: no truncation
	}{
		{"leader's end lower", 3, 5, 3},
		{"own end lower", 5, 2, 2},
		{"own log lacks the epoch", 4, -1, 4},
		{"nothing past the end", 8, -1, -1},
		{"leader without the epoch: to the high watermark", -1, -1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := followerShell(t, nil)
			s.replicate(3, 0, leaderBatch(t, 0, 6, 3, -1, -1), 1, 0)
			out := s.r.OnTruncateDiverging(&TruncateDiverging{ID: 50, LeaderEpoch: 3, Epoch: 2, EndOffset: tt.end}, tt.localEnd)
			switch {
			case tt.wantTarget < 0 && out.Truncate != nil:
				t.Fatalf("truncation %+v", out.Truncate)
			case tt.wantTarget < 0:
				if len(out.Positions) != 1 || out.Positions[0].FetchOffset != 6 {
					t.Fatalf("positions %+v", out.Positions)
				}
			case out.Truncate == nil || out.Truncate.Offset != tt.wantTarget || out.Truncate.StartAt:
				t.Fatalf("truncation %+v, want to %d", out.Truncate, tt.wantTarget)
			default:
				out = s.r.OnLogTruncated(&LogTruncated{Seq: out.Truncate.Seq, LogEndOffset: tt.wantTarget, FlushedOffset: 0,
					LatestEpoch: 3, Producers: NewProducerState()})
				if len(out.Positions) != 1 || out.Positions[0].ID != 50 || out.Positions[0].FetchOffset != tt.wantTarget {
					t.Fatalf("positions %+v", out.Positions)
				}
				if st := s.r.Status(); st.HighWatermark != min(1, tt.wantTarget) || st.LogEndOffset != tt.wantTarget {
					t.Fatalf("status %+v", st)
				}
			}
		})
	}
}

func TestFollowerResetToLeaderStart(t *testing.T) {
	s := followerShell(t, nil)
	s.replicate(3, 0, leaderBatch(t, 0, 4, 3, -1, -1), 2, 0)
	// Behind the leader's log start: emptied and restarted there.
	out := s.r.OnResetToLeaderStart(&ResetToLeaderStart{ID: 60, LeaderEpoch: 3, LogStartOffset: 10, LeaderLogEndOffset: -1})
	if tr := out.Truncate; tr == nil || !tr.StartAt || tr.Offset != 10 {
		t.Fatalf("truncation %+v", out.Truncate)
	}
	out = s.r.OnLogTruncated(&LogTruncated{Seq: out.Truncate.Seq, LogStartOffset: 10, LogEndOffset: 10, FlushedOffset: 10, LatestEpoch: -1, Producers: NewProducerState()})
	if len(out.Positions) != 1 || out.Positions[0].FetchOffset != 10 {
		t.Fatalf("positions %+v", out.Positions)
	}
	if st := s.r.Status(); st.LogStartOffset != 10 || st.HighWatermark != 10 || st.LatestEpoch != -1 {
		t.Fatalf("status %+v", st)
	}
	// Ahead of the leader's log end: truncated to it.
	s.leo = 10
	s.replicate(3, 10, leaderBatch(t, 10, 5, 3, -1, -1), 10, 10)
	out = s.r.OnResetToLeaderStart(&ResetToLeaderStart{ID: 61, LeaderEpoch: 3, LogStartOffset: 10, LeaderLogEndOffset: 12})
	if tr := out.Truncate; tr == nil || tr.StartAt || tr.Offset != 12 {
		t.Fatalf("truncation %+v", out.Truncate)
	}
	out = s.r.OnLogTruncated(&LogTruncated{Seq: out.Truncate.Seq, LogStartOffset: 10, LogEndOffset: 12, FlushedOffset: 10, LatestEpoch: 3, Producers: NewProducerState()})
	if len(out.Positions) != 1 || out.Positions[0].ID != 61 || out.Positions[0].FetchOffset != 12 {
		t.Fatalf("positions %+v", out.Positions)
	}
	// Neither: nothing to do.
	out = s.r.OnResetToLeaderStart(&ResetToLeaderStart{ID: 62, LeaderEpoch: 3, LogStartOffset: 10, LeaderLogEndOffset: 20})
	if out.Truncate != nil {
		t.Fatalf("truncation %+v", out.Truncate)
	}
}
