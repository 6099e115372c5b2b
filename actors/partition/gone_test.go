package partition

import (
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/log"
)

// TestStopDeletedAnswersUnknownTopic parks an acks=all append (the ISR
// holds a follower that never fetches), stops the actor as a deleted
// topic's, and checks that the parked append, an append and a watch sent
// after the stop, and reads on the caller's goroutine all answer
// UNKNOWN_TOPIC_OR_PARTITION, as Kafka does for a topic it no longer has.
func TestStopDeletedAnswersUnknownTopic(t *testing.T) {
	e := startActor(t, log.NewMemFS(), false, 1, 2)
	in := NewInbox(e.system)
	defer in.Close()
	e.c.SendAppend(&AppendBatches{ID: 1, Records: plain(t, 1), Acks: -1, TimeoutMs: 60000}, in.PID())
	for !e.c.NeedsTicks() { // parked, waiting for replica 2
		runtime.Gosched()
	}
	if err := e.c.StopDeleted(); err != nil {
		t.Fatal(err)
	}
	unknown := kerr.UnknownTopicOrPartition.Code
	if m := next(t, in).(*AppendBatchesResult); m.ID != 1 || m.ErrorCode != unknown {
		t.Fatalf("parked acks=all append: %+v, want UNKNOWN_TOPIC_OR_PARTITION", m)
	}
	e.c.SendAppend(&AppendBatches{ID: 2, Records: plain(t, 1), Acks: 1}, in.PID())
	if m := next(t, in).(*AppendBatchesResult); m.ID != 2 || m.ErrorCode != unknown {
		t.Fatalf("append after the stop: %+v, want UNKNOWN_TOPIC_OR_PARTITION", m)
	}
	e.c.SendWatch(&WatchHighWatermark{ID: 3, ReplyTo: in.PID(), Above: 100})
	if m := next(t, in).(*HighWatermarkReached); m.ID != 3 {
		t.Fatalf("watch after the stop: %+v", m)
	}
	if r := e.c.ReadNow(&ReadRecords{Offset: 0, MaxBytes: 1 << 20}); r.ErrorCode != unknown {
		t.Fatalf("read after the stop: %+v", r)
	}
	if r := e.c.ListOffset(-1, NoLeaderEpochCheck); r.ErrorCode != unknown {
		t.Fatalf("list offset after the stop: %+v", r)
	}
	if err := e.m.Close(); err != nil {
		t.Fatal(err)
	}
	e.system.Shutdown()
}
