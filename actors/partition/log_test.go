package partition

import (
	"testing"

	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

// logShell is the actor shell's I/O over a real log on MemFS, stepping the
// replica as doc.go's duties say; flush callbacks arrive on a channel, as
// they would through the mailbox.
type logShell struct {
	t       *testing.T
	r       *Replica
	l       *log.Log
	flushed chan *FlushCompleted
	replies map[uint64]*AppendBatchesResult
}

func (s *logShell) handle(out Output) {
	for _, rep := range out.Replies {
		s.replies[rep.ID] = rep
	}
	if out.FlushUpTo > 0 {
		upTo := out.FlushUpTo
		s.l.OnFlushed(upTo, func(err error) { s.flushed <- &FlushCompleted{UpTo: upTo, Err: err} })
	}
	if a := out.Append; a != nil {
		res, err := s.l.Append(a.Records, a.Options)
		s.handle(s.r.OnLogAppended(&LogAppended{Seq: a.Seq, Result: res, Err: err}))
	}
}

// await steps flush completions until id is answered.
func (s *logShell) await(id uint64) *AppendBatchesResult {
	for s.replies[id] == nil {
		s.handle(s.r.OnFlushCompleted(<-s.flushed))
	}
	return s.replies[id]
}

func openReplica(t *testing.T, fsys *log.MemFS) (*log.Manager, *logShell) {
	t.Helper()
	m, err := log.OpenManager(log.ManagerConfig{Dir: "/data", FS: fsys, NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	lcfg := log.DefaultConfig()
	lcfg.FlushMessages = 1
	l, err := m.OpenLog(log.TopicPartition{Topic: "t", Partition: 0}, lcfg, [16]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	ps := NewProducerState() // duty 1: no snapshot here, replay the whole log
	for off := max(ps.EndOffset(), l.LogStartOffset()); off < l.LogEndOffset(); {
		buf, err := l.Read(off, log.ReadOptions{MaxBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		bs, err := batch.Split(buf)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			h, err := batch.ParseHeader(b)
			if err != nil {
				t.Fatal(err)
			}
			ps.ObserveBatch(BatchFromHeader(h))
			off = batch.LastOffset(b) + 1
		}
	}
	cfg := DefaultConfig()
	cfg.GroupCommit = true
	r, err := NewReplica(cfg, Start{
		LogStartOffset: l.LogStartOffset(), LogEndOffset: l.LogEndOffset(),
		FlushedOffset: l.FlushedOffset(), Producers: ps,
	})
	if err != nil {
		t.Fatal(err)
	}
	s := &logShell{t: t, r: r, l: l, flushed: make(chan *FlushCompleted, 16), replies: map[uint64]*AppendBatchesResult{}}
	s.handle(r.BecomeLeader(&BecomeLeader{LeaderEpoch: 1, ISR: []int32{cfg.NodeID}}))
	return m, s
}

func TestWithRealLogAcrossRestart(t *testing.T) {
	fsys := log.NewMemFS()
	m, s := openReplica(t, fsys)
	s.handle(s.r.OnAppendBatches(&AppendBatches{ID: 1, Records: rec(t, 5, 0, 0, 3), Acks: -1, TimeoutMs: 1000}))
	s.handle(s.r.OnAppendBatches(&AppendBatches{ID: 2, Records: rec(t, 5, 0, 3, 2), Acks: 1, TimeoutMs: 1000}))
	if r := s.await(1); r.ErrorCode != 0 || r.BaseOffset != 0 {
		t.Fatalf("first: %+v", r)
	}
	if r := s.await(2); r.ErrorCode != 0 || r.BaseOffset != 3 {
		t.Fatalf("second: %+v", r)
	}
	if st := s.r.Status(); st.HighWatermark != 5 || st.FlushedOffset != 5 {
		t.Fatalf("status %+v", st)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	m, s = openReplica(t, fsys)
	defer m.Close()
	// The producer's retry after the restart is recognised from the log.
	s.handle(s.r.OnAppendBatches(&AppendBatches{ID: 3, Records: rec(t, 5, 0, 0, 3), Acks: -1, TimeoutMs: 1000}))
	if r := s.await(3); r.ErrorCode != 0 || r.BaseOffset != 0 {
		t.Fatalf("retry: %+v", r)
	}
	s.handle(s.r.OnAppendBatches(&AppendBatches{ID: 4, Records: rec(t, 5, 0, 5, 1), Acks: -1, TimeoutMs: 1000}))
	if r := s.await(4); r.ErrorCode != 0 || r.BaseOffset != 5 {
		t.Fatalf("next: %+v", r)
	}
	if s.l.LogEndOffset() != 6 {
		t.Fatalf("log end offset %d", s.l.LogEndOffset())
	}
}
