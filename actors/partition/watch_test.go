package partition

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/log"
)

// next receives one message from in, failing after a while.
func next(t *testing.T, in *Inbox) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := in.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A watch fires when an append moves the high watermark past it, at once
// when it already has, on a Tick past its deadline (Expired), and not
// after CancelWatch.
func TestActorWatchHighWatermark(t *testing.T) {
	e := startActor(t, log.NewMemFS(), false)
	defer e.stop()
	in := NewInbox(e.system)
	defer in.Close()
	e.append(plain(t, 2), 1, 0, 0)

	e.c.SendWatch(&WatchHighWatermark{ID: 1, ReplyTo: in.PID(), Above: 1})
	if m := next(t, in).(*HighWatermarkReached); m.ID != 1 || m.HighWatermark != 2 || m.Expired {
		t.Fatalf("already passed: %+v", m)
	}
	e.c.SendWatch(&WatchHighWatermark{ID: 2, ReplyTo: in.PID(), Above: 2, DeadlineMs: fixedNow.UnixMilli() + 100})
	e.c.SendWatch(&WatchHighWatermark{ID: 3, ReplyTo: in.PID(), Above: 2})
	e.c.SendCancelWatch(&CancelWatch{ID: 3, ReplyTo: in.PID()})
	e.c.Tick(fixedNow.UnixMilli() + 50) // before the deadline: nothing
	e.append(plain(t, 1), 1, 0, 2)
	if m := next(t, in).(*HighWatermarkReached); m.ID != 2 || m.HighWatermark != 3 || m.Expired {
		t.Fatalf("woken by append: %+v", m)
	}
	e.c.SendWatch(&WatchHighWatermark{ID: 4, ReplyTo: in.PID(), Above: 3, DeadlineMs: fixedNow.UnixMilli() + 100})
	e.c.Tick(fixedNow.UnixMilli() + 100)
	if m := next(t, in).(*HighWatermarkReached); m.ID != 4 || !m.Expired {
		t.Fatalf("expired: %+v", m)
	}
	e.append(plain(t, 1), 1, 0, 3)
	// Watch 3 was cancelled: the next message is the answer to a new
	// watch, not watch 3.
	e.c.SendWatch(&WatchHighWatermark{ID: 5, ReplyTo: in.PID(), Above: 0})
	if m := next(t, in).(*HighWatermarkReached); m.ID != 5 {
		t.Fatalf("cancelled watch fired: %+v", m)
	}
}

// SendAppend answers into an inbox; DeleteRecords moves the log start;
// DescribeProducers lists the producer; a stopped actor's requests get
// dead-letter answers.
func TestActorAsyncRequests(t *testing.T) {
	e := startActor(t, log.NewMemFS(), false)
	in := NewInbox(e.system)
	defer in.Close()
	e.c.SendAppend(&AppendBatches{ID: 7, Records: rec(t, 12, 0, 0, 3), Acks: 1}, in.PID())
	if m := next(t, in).(*AppendBatchesResult); m.ID != 7 || m.ErrorCode != 0 || m.BaseOffset != 0 {
		t.Fatalf("append: %+v", m)
	}
	if r := e.c.ReadNow(&ReadRecords{Offset: 0, MaxBytes: 1 << 20}); r.ErrorCode != 0 || len(r.Records) == 0 || r.HighWatermark != 3 {
		t.Fatalf("read after the acknowledgement: %+v", r)
	}
	e.c.SendDeleteRecords(&DeleteRecords{ID: 8, Offset: 5}, in.PID())
	if m := next(t, in).(*DeleteRecordsResult); m.ID != 8 || m.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("delete past the high watermark: %+v", m)
	}
	e.c.SendDeleteRecords(&DeleteRecords{ID: 9, Offset: -1}, in.PID())
	if m := next(t, in).(*DeleteRecordsResult); m.ID != 9 || m.ErrorCode != 0 || m.LowWatermark != 3 {
		t.Fatalf("delete to the high watermark: %+v", m)
	}
	if r := e.c.ReadNow(&ReadRecords{Offset: 0, MaxBytes: 1 << 20}); r.ErrorCode != kerr.OffsetOutOfRange.Code || r.LogStartOffset != 3 {
		t.Fatalf("read below the log start: %+v", r)
	}
	e.c.SendDescribeProducers(&DescribeProducers{ID: 10}, in.PID())
	if m := next(t, in).(*DescribeProducersResult); m.ID != 10 || len(m.Producers) != 1 || m.Producers[0].ProducerID != 12 {
		t.Fatalf("describe producers: %+v", m)
	}
	if err := e.c.Stop(); err != nil {
		t.Fatal(err)
	}
	e.c.SendAppend(&AppendBatches{ID: 11, Records: plain(t, 1), Acks: 1}, in.PID())
	// The stopped actor's mailbox answers (gone.go), with the request's ID.
	if m, ok := next(t, in).(*AppendBatchesResult); !ok || m.ID != 11 || m.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("append to a stopped actor: %T %+v", m, m)
	}
	if err := e.m.Close(); err != nil {
		t.Fatal(err)
	}
	e.system.Shutdown()
}

// TestNeedsTicks checks the flag the node's ticker reads: set while a
// watch is parked, cleared when it is cancelled.
func TestNeedsTicks(t *testing.T) {
	e := startActor(t, log.NewMemFS(), false)
	defer e.stop()
	if e.c.NeedsTicks() {
		t.Fatal("an idle leader needs ticks")
	}
	in := NewInbox(e.system)
	defer in.Close()
	e.c.SendWatch(&WatchHighWatermark{ID: 1, ReplyTo: in.PID(), Above: 5, DeadlineMs: fixedNow.UnixMilli() + 100})
	waitUntil(t, e.c.NeedsTicks)
	e.c.SendCancelWatch(&CancelWatch{ID: 1, ReplyTo: in.PID()})
	waitUntil(t, func() bool { return !e.c.NeedsTicks() })
}

func waitUntil(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		time.Sleep(time.Millisecond)
	}
}
