package partition

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

func TestLogAppendTimeStampsBatch(t *testing.T) {
	s := newShell(t, func(c *Config) { c.LogAppendTime = true })
	s.now = 77_000
	records := rec(t, 9, 0, 0, 3) // CreateTime, max timestamp 5
	id := s.produce(records, 1)
	s.wantReply(id, 0, 0)
	if got := s.reply(id).LogAppendTimeMs; got != 77_000 {
		t.Fatalf("LogAppendTimeMs %d, want 77000", got)
	}
	// The appended bytes (the request's buffer) carry the append time, the
	// attribute bit and a valid CRC; the records are untouched.
	h, err := batch.Validate(records)
	if err != nil {
		t.Fatalf("stamped batch fails validation: %v", err)
	}
	if h.MaxTimestamp != 77_000 || h.Attributes&batch.LogAppendTimeBit == 0 || h.FirstTimestamp != 5 || h.NumRecords != 3 {
		t.Fatalf("header %+v", h)
	}
	e, _ := s.r.Producers().Entry(9)
	if e.LastTimestamp != 77_000 {
		t.Fatalf("producer last timestamp %d, want the append time", e.LastTimestamp)
	}

	// A retry is a duplicate answered with the original append time.
	s.now = 99_000
	dup := s.produce(rec(t, 9, 0, 0, 3), 1)
	s.wantReply(dup, 0, 0)
	if got := s.reply(dup).LogAppendTimeMs; got != 77_000 {
		t.Fatalf("duplicate LogAppendTimeMs %d, want 77000", got)
	}
}

func TestCreateTimeLeavesBatchAlone(t *testing.T) {
	s := newShell(t, nil)
	records := rec(t, -1, -1, -1, 2)
	orig := append([]byte(nil), records...)
	id := s.produce(records, 1)
	s.wantReply(id, 0, 0)
	if got := s.reply(id).LogAppendTimeMs; got != -1 {
		t.Fatalf("LogAppendTimeMs %d, want -1", got)
	}
	if string(records[16:]) != string(orig[16:]) { // from the magic byte on
		t.Fatal("CreateTime batch changed past the leader epoch")
	}
}

func TestReconfigure(t *testing.T) {
	s := newShell(t, func(c *Config) { c.MinInSyncReplicas = 2 })
	s.wantReply(s.produce(plain(t, 1), -1), kerr.NotEnoughReplicas.Code, -1)
	s.wantReply(s.produce(plain(t, 1), 1), 0, 0)

	// Lowering min.insync.replicas lets the high watermark advance at once.
	cfg := DefaultConfig()
	cfg.NodeID = 99 // ignored: the node id is kept
	cfg.MaxMessageBytes = 100
	cfg.LogAppendTime = true
	out, err := s.r.Reconfigure(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.handle(out)
	if st := s.r.Status(); st.HighWatermark != 1 || st.Leader != 1 {
		t.Fatalf("after reconfigure: %+v", st)
	}
	s.wantReply(s.produce(plain(t, 1), -1), 0, 1)
	s.wantReply(s.produce(plain(t, 40), 1), kerr.MessageTooLarge.Code, -1)
	s.now = 5000
	id := s.produce(plain(t, 1), 1)
	if s.reply(id).LogAppendTimeMs != 5000 {
		t.Fatalf("LogAppendTime not applied: %+v", s.reply(id))
	}

	bad := cfg
	bad.MinInSyncReplicas = 0
	if _, err := s.r.Reconfigure(bad); err == nil {
		t.Fatal("invalid config accepted")
	}
	s.wantReply(s.produce(plain(t, 40), 1), kerr.MessageTooLarge.Code, -1)
}

func TestReconfigureLeavesGroupCommit(t *testing.T) {
	s := newShell(t, func(c *Config) { c.GroupCommit = true })
	id := s.produce(plain(t, 2), -1)
	if s.reply(id) != nil || s.r.Status().HighWatermark != 0 {
		t.Fatal("acks=all answered before the flush")
	}
	out, err := s.r.Reconfigure(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	s.handle(out)
	s.wantReply(id, 0, 0)
	if hw := s.r.Status().HighWatermark; hw != 2 {
		t.Fatalf("high watermark %d, want 2", hw)
	}
}

func TestActorReconfigure(t *testing.T) {
	e := startActor(t, log.NewMemFS(), false)
	defer e.stop()
	if res := e.append(plain(t, 1), 1, 0, 0); res.LogAppendTimeMs != -1 {
		t.Fatalf("CreateTime answer %+v", res)
	}
	cfg := DefaultConfig()
	cfg.LogAppendTime = true
	cfg.MaxMessageBytes = 100
	e.c.Reconfigure(cfg)
	if res := e.append(plain(t, 1), 1, 0, 1); res.LogAppendTimeMs != fixedNow.UnixMilli() {
		t.Fatalf("LogAppendTime answer %+v", res)
	}
	e.append(plain(t, 40), 1, kerr.MessageTooLarge.Code, -1)
	r := e.c.ReadNow(&ReadRecords{Offset: 1, MaxBytes: 1 << 20})
	h, err := batch.Validate(r.Records)
	if err != nil || h.Attributes&batch.LogAppendTimeBit == 0 || h.MaxTimestamp != fixedNow.UnixMilli() {
		t.Fatalf("stored batch %+v, %v", h, err)
	}
}
