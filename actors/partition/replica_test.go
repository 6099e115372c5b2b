package partition

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

// shell plays the actor shell over a fake log that assigns offsets as
// log.Append does, so tests drive the two-phase flow end to end.
type shell struct {
	t         *testing.T
	r         *Replica
	leo       int64
	appendErr error
	appends   int
	replies   map[uint64]*AppendBatchesResult
	flushes   []int64
	hwChanged int
	nextID    uint64
	now       int64
	// proposals are the ISR changes proposed; positions the answers to
	// follower requests, by ID.
	proposals []ISRChange
	positions map[uint64]*ReplicaPosition
}

func newShell(t *testing.T, mutate func(*Config), isr ...int32) *shell {
	t.Helper()
	cfg := DefaultConfig()
	if mutate != nil {
		mutate(&cfg)
	}
	r, err := NewReplica(cfg, Start{})
	if err != nil {
		t.Fatal(err)
	}
	s := &shell{t: t, r: r, replies: map[uint64]*AppendBatchesResult{}, positions: map[uint64]*ReplicaPosition{}, now: 1000}
	if len(isr) == 0 {
		isr = []int32{cfg.NodeID}
	}
	s.handle(r.BecomeLeader(&BecomeLeader{LeaderEpoch: 3, ISR: isr}))
	return s
}

// handle performs an Output as doc.go's duty 3 says.
func (s *shell) handle(out Output) {
	for _, rep := range out.Replies {
		if _, dup := s.replies[rep.ID]; dup {
			s.t.Fatalf("request %d answered twice", rep.ID)
		}
		s.replies[rep.ID] = rep
	}
	if out.FlushUpTo > 0 {
		s.flushes = append(s.flushes, out.FlushUpTo)
	}
	if out.HighWatermarkChanged {
		s.hwChanged++
	}
	if c := out.ProposeISR; c != nil {
		s.proposals = append(s.proposals, *c)
	}
	for _, p := range out.Positions {
		if _, dup := s.positions[p.ID]; dup {
			s.t.Fatalf("position %d answered twice", p.ID)
		}
		s.positions[p.ID] = p
	}
	if out.Truncate != nil {
		s.t.Fatalf("unexpected truncation %+v", out.Truncate)
	}
	if a := out.Append; a != nil {
		s.handle(s.r.OnLogAppended(s.logAppend(a)))
	}
}

func (s *shell) logAppend(a *AppendToLog) *LogAppended {
	s.appends++
	if s.appendErr != nil {
		return &LogAppended{Seq: a.Seq, Err: s.appendErr}
	}
	if !a.Options.AssignOffsets {
		// A follower's append: the batches keep their offsets.
		bs, err := batch.Split(a.Records)
		if err != nil || len(bs) == 0 || batch.BaseOffset(bs[0]) != s.leo {
			s.t.Fatalf("follower append at %d: %d batches, %v", s.leo, len(bs), err)
		}
		res := log.AppendResult{FirstOffset: s.leo, LastOffset: batch.LastOffset(bs[len(bs)-1])}
		s.leo = res.LastOffset + 1
		return &LogAppended{Seq: a.Seq, Result: res}
	}
	if a.Options.LeaderEpoch != s.r.Status().LeaderEpoch {
		s.t.Fatalf("append options %+v", a.Options)
	}
	batch.SetBaseOffset(a.Records, s.leo)
	batch.SetPartitionLeaderEpoch(a.Records, a.Options.LeaderEpoch)
	res := log.AppendResult{FirstOffset: s.leo, LastOffset: batch.LastOffset(a.Records)}
	s.leo = res.LastOffset + 1
	return &LogAppended{Seq: a.Seq, Result: res}
}

// produce sends one AppendBatches and returns its ID.
func (s *shell) produce(records []byte, acks int16) uint64 {
	s.nextID++
	s.handle(s.r.OnAppendBatches(&AppendBatches{ID: s.nextID, Records: records, Acks: acks, TimeoutMs: 30000, NowMs: s.now}))
	return s.nextID
}

// reply returns the answer to id, or nil if it is still parked.
func (s *shell) reply(id uint64) *AppendBatchesResult { return s.replies[id] }

func (s *shell) wantReply(id uint64, code int16, base int64) {
	s.t.Helper()
	rep := s.reply(id)
	if rep == nil {
		s.t.Fatalf("request %d not answered", id)
	}
	if rep.ErrorCode != code || rep.BaseOffset != base {
		s.t.Fatalf("request %d: code %d base %d (%s), want code %d base %d", id, rep.ErrorCode, rep.BaseOffset, rep.ErrorMessage, code, base)
	}
}

// rec builds a producer batch of n records.
func rec(t *testing.T, pid int64, epoch int16, seq int32, n int) []byte {
	t.Helper()
	return buildBatch(t, ProducerBatch{ProducerID: pid, ProducerEpoch: epoch, FirstSeq: seq, LastOffset: int64(n - 1), MaxTimestamp: 5})
}

func plain(t *testing.T, n int) []byte { return rec(t, -1, -1, -1, n) }

func TestAppendAcks(t *testing.T) {
	for _, acks := range []int16{0, 1, -1} {
		s := newShell(t, nil)
		a := s.produce(plain(t, 3), acks)
		b := s.produce(plain(t, 1), acks)
		s.wantReply(a, 0, 0)
		s.wantReply(b, 0, 3)
		st := s.r.Status()
		if st.LogEndOffset != 4 || st.HighWatermark != 4 || s.reply(a).Acks != acks {
			t.Fatalf("acks %d: status %+v", acks, st)
		}
	}
}

func TestAppendErrors(t *testing.T) {
	corrupt := plain(t, 1)
	corrupt[len(corrupt)-1] ^= 0xff
	legacy := plain(t, 1)
	legacy[16] = 1
	ctrl := buildBatch(t, ProducerBatch{ProducerID: 4, Control: true, Transactional: true, MaxTimestamp: 1})
	noSeq := rec(t, 4, 0, -1, 1)
	tests := []struct {
		name    string
		records []byte
		acks    int16
		code    int16
	}{
		{"acks 5", plain(t, 1), 5, kerr.InvalidRequiredAcks.Code},
		{"acks -2", plain(t, 1), -2, kerr.InvalidRequiredAcks.Code},
		{"bad crc", corrupt, 1, kerr.CorruptMessage.Code},
		{"truncated", plain(t, 1)[:65], 1, kerr.CorruptMessage.Code},
		{"magic 1", legacy, 1, kerr.InvalidRecord.Code},
		{"control batch", ctrl, 1, kerr.InvalidRecord.Code},
		{"two batches", append(plain(t, 1), plain(t, 1)...), 1, kerr.InvalidRecord.Code},
		{"no batch", nil, 1, kerr.InvalidRecord.Code},
		{"producer id without sequence", noSeq, 1, kerr.InvalidRecord.Code},
		{"too large", plain(t, 40), 1, kerr.MessageTooLarge.Code},
		{"too large, acks 0", plain(t, 40), 0, kerr.MessageTooLarge.Code},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newShell(t, func(c *Config) { c.MaxMessageBytes = 300 })
			id := s.produce(tt.records, tt.acks)
			s.wantReply(id, tt.code, -1)
			if s.appends != 0 || s.r.Status().LogEndOffset != 0 {
				t.Fatal("a refused batch reached the log")
			}
		})
	}
}

func TestNotLeader(t *testing.T) {
	s := newShell(t, nil)
	s.handle(s.r.BecomeFollower(&BecomeFollower{Leader: 2, LeaderEpoch: 4}))
	id := s.produce(plain(t, 1), 1)
	s.wantReply(id, kerr.NotLeaderForPartition.Code, -1)
	if h := s.reply(id).CurrentLeader; h != (LeaderHint{LeaderID: 2, LeaderEpoch: 4}) {
		t.Fatalf("leader hint %+v", h)
	}
	r, _ := NewReplica(DefaultConfig(), Start{})
	if rep := r.OnAppendBatches(&AppendBatches{ID: 1, Records: plain(t, 1), Acks: 1}).Replies; len(rep) != 1 || rep[0].ErrorCode != 6 {
		t.Fatalf("new replica: %+v", rep)
	}
	// A stale epoch does not bring leadership back.
	s.handle(s.r.BecomeLeader(&BecomeLeader{LeaderEpoch: 3, ISR: []int32{1}}))
	if s.r.Status().Role != Follower {
		t.Fatal("stale BecomeLeader applied")
	}
}

func TestIdempotentAppend(t *testing.T) {
	s := newShell(t, nil)
	first := s.produce(rec(t, 9, 0, 0, 2), -1)
	s.wantReply(first, 0, 0)
	s.wantReply(s.produce(plain(t, 1), 1), 0, 2)
	s.wantReply(s.produce(rec(t, 9, 0, 2, 3), 1), 0, 3)
	appends := s.appends
	// A retry of the first batch: success with its original offset, no append.
	s.wantReply(s.produce(rec(t, 9, 0, 0, 2), -1), 0, 0)
	s.wantReply(s.produce(rec(t, 9, 0, 2, 3), 0), 0, 3)
	if s.appends != appends {
		t.Fatal("a duplicate was appended")
	}
	s.wantReply(s.produce(rec(t, 9, 0, 9, 1), 1), kerr.OutOfOrderSequenceNumber.Code, -1)
	s.wantReply(s.produce(rec(t, 9, 1, 3, 1), 1), kerr.OutOfOrderSequenceNumber.Code, -1)
	s.wantReply(s.produce(rec(t, 9, 1, 0, 1), 1), 0, 6)
	s.wantReply(s.produce(rec(t, 9, 0, 5, 1), 1), kerr.InvalidProducerEpoch.Code, -1)
	s.wantReply(s.produce(rec(t, 10, 0, 77, 1), 1), 0, 7) // KIP-360
	if st := s.r.Status(); st.LogEndOffset != 8 || st.Producers != 2 {
		t.Fatalf("status %+v", st)
	}
}

func TestFailedAppendLeavesStateAlone(t *testing.T) {
	s := newShell(t, nil)
	s.appendErr = errors.New("disk gone")
	s.wantReply(s.produce(rec(t, 9, 0, 0, 1), 1), kerr.KafkaStorageError.Code, -1)
	s.appendErr = log.ErrRecordTooLarge
	s.wantReply(s.produce(rec(t, 9, 0, 0, 1), 1), kerr.RecordListTooLarge.Code, -1)
	s.appendErr = nil
	// The retry is not a duplicate: nothing was written.
	s.wantReply(s.produce(rec(t, 9, 0, 0, 1), 1), 0, 0)
	if s.appends != 3 {
		t.Fatalf("%d appends", s.appends)
	}
}

func TestGroupCommit(t *testing.T) {
	s := newShell(t, func(c *Config) { c.GroupCommit = true })
	zero := s.produce(plain(t, 1), 0)
	one := s.produce(plain(t, 2), 1)
	all := s.produce(plain(t, 1), -1)
	s.wantReply(zero, 0, 0)
	if s.reply(one) != nil || s.reply(all) != nil || s.r.Status().HighWatermark != 0 {
		t.Fatal("answered before the flush")
	}
	if len(s.flushes) != 3 || s.flushes[2] != 4 {
		t.Fatalf("flush requests %v", s.flushes)
	}
	s.handle(s.r.OnFlushCompleted(&FlushCompleted{UpTo: 3}))
	s.wantReply(one, 0, 1)
	if s.reply(all) != nil || s.r.Status().HighWatermark != 3 {
		t.Fatalf("after partial flush: %+v", s.r.Status())
	}
	s.handle(s.r.OnFlushCompleted(&FlushCompleted{UpTo: 4}))
	s.wantReply(all, 0, 3)
	failed := s.produce(plain(t, 1), -1)
	s.handle(s.r.OnFlushCompleted(&FlushCompleted{UpTo: 5, Err: errors.New("fsync")}))
	s.wantReply(failed, kerr.KafkaStorageError.Code, -1)
}

func TestAcksAllWaitsForISR(t *testing.T) {
	s := newShell(t, nil, 1, 2)
	id := s.produce(plain(t, 1), -1)
	if s.reply(id) != nil || s.r.Status().HighWatermark != 0 {
		t.Fatal("acks=all answered before the follower has the batch")
	}
	s.handle(s.r.OnTick(&Tick{NowMs: s.now + 29999}))
	if s.reply(id) != nil {
		t.Fatal("timed out early")
	}
	s.handle(s.r.OnTick(&Tick{NowMs: s.now + 30000}))
	s.wantReply(id, kerr.RequestTimedOut.Code, -1)
	parked := s.produce(plain(t, 1), -1)
	s.handle(s.r.BecomeFollower(&BecomeFollower{Leader: 2, LeaderEpoch: 4}))
	s.wantReply(parked, kerr.NotLeaderForPartition.Code, -1)
}

func TestMinInsyncReplicas(t *testing.T) {
	s := newShell(t, func(c *Config) { c.MinInSyncReplicas = 2 })
	s.wantReply(s.produce(plain(t, 1), -1), kerr.NotEnoughReplicas.Code, -1)
	s.wantReply(s.produce(plain(t, 1), 1), 0, 0)
	if s.r.Status().HighWatermark != 0 {
		t.Fatal("high watermark advanced below min.insync.replicas")
	}
}

func TestQueuedWhileInFlight(t *testing.T) {
	s := newShell(t, nil)
	out1 := s.r.OnAppendBatches(&AppendBatches{ID: 1, Records: rec(t, 9, 0, 0, 1), Acks: 1})
	out2 := s.r.OnAppendBatches(&AppendBatches{ID: 2, Records: rec(t, 9, 0, 1, 1), Acks: 1})
	out3 := s.r.OnAppendBatches(&AppendBatches{ID: 3, Records: rec(t, 9, 0, 0, 1), Acks: 1})
	if out1.Append == nil || out2.Append != nil || out3.Append != nil || len(out2.Replies)+len(out3.Replies) != 0 {
		t.Fatal("second append not queued")
	}
	if stale := s.r.OnLogAppended(&LogAppended{Seq: 99}); stale.Append != nil || len(stale.Replies) != 0 {
		t.Fatal("stale LogAppended acted on")
	}
	s.handle(out1)
	s.wantReply(1, 0, 0)
	s.wantReply(2, 0, 1)
	s.wantReply(3, 0, 0) // decided after 1 was recorded: a duplicate
}

func TestTickExpiresProducers(t *testing.T) {
	s := newShell(t, func(c *Config) { c.ProducerIDExpirationMs = 100; c.ProducerIDExpirationCheckIntervalMs = 50 })
	s.now = 0
	s.produce(rec(t, 9, 0, 0, 1), 1) // max timestamp 5
	if out := s.r.OnTick(&Tick{NowMs: 60}); len(out.ExpiredProducers) != 0 {
		t.Fatalf("expired early: %v", out.ExpiredProducers)
	}
	if out := s.r.OnTick(&Tick{NowMs: 105}); len(out.ExpiredProducers) != 0 {
		t.Fatal("checked before the interval passed")
	}
	if out := s.r.OnTick(&Tick{NowMs: 110}); len(out.ExpiredProducers) != 1 || out.ExpiredProducers[0] != 9 {
		t.Fatalf("expired %v", out.ExpiredProducers)
	}
	s.wantReply(s.produce(rec(t, 9, 0, 42, 1), 1), 0, 1)
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := DefaultConfig()
	bad.MinInSyncReplicas = 0
	if _, err := NewReplica(bad, Start{}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("err %v", err)
	}
}

// An append conditional on a leader epoch is taken only at that epoch.
func TestConditionalAppend(t *testing.T) {
	s := newShell(t, nil) // leads at epoch 3
	send := func(epoch int32) uint64 {
		s.nextID++
		s.handle(s.r.OnAppendBatches(&AppendBatches{ID: s.nextID, Records: plain(t, 1), Acks: -1, TimeoutMs: 30000,
			NowMs: s.now, CheckLeaderEpoch: true, LeaderEpoch: epoch}))
		return s.nextID
	}
	s.wantReply(send(3), 0, 0)
	s.wantReply(send(2), kerr.NotLeaderForPartition.Code, -1)
	s.handle(s.r.BecomeLeader(&BecomeLeader{LeaderEpoch: 4, ISR: []int32{1}}))
	s.wantReply(send(3), kerr.NotLeaderForPartition.Code, -1)
	s.wantReply(send(4), 0, 1)
	if s.appends != 2 {
		t.Fatalf("%d appends reached the log, want 2", s.appends)
	}
}
