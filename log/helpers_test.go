package log

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirmq/weir/log/batch"
)

// testClock is a settable wall clock.
type testClock struct{ ms int64 }

func (c *testClock) now() time.Time { return time.UnixMilli(c.ms) }

// openTestManager opens a manager on fsys with background work off.
func openTestManager(t testing.TB, fsys FS, dir string, clock *testClock) *Manager {
	t.Helper()
	m, err := OpenManager(ManagerConfig{Dir: dir, FS: fsys, Now: clock.now, NoBackground: true, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("open manager: %v", err)
	}
	return m
}

// testLogger writes the log's lines to the test's output.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// smallConfig rolls segments often and indexes densely.
func smallConfig() Config {
	c := DefaultConfig()
	c.SegmentBytes = 4096
	c.IndexIntervalBytes = 256
	c.SegmentIndexBytes = 1024
	return c
}

// makeBatch builds an uncompressed batch of n records with timestamps
// ts, ts+1, ... and keys "k<first+i>".
func makeBatch(t testing.TB, first, n int, ts int64, valueSize int) []byte {
	t.Helper()
	recs := make([]kmsg.Record, n)
	for i := range recs {
		recs[i] = kmsg.Record{
			OffsetDelta:      int32(i),
			TimestampDelta64: int64(i),
			Key:              fmt.Appendf(nil, "k%d", first+i),
			Value:            make([]byte, valueSize),
		}
		copy(recs[i].Value, fmt.Sprintf("v%d", first+i))
	}
	b, err := batch.Build(batch.Options{
		ProducerID: batch.NoProducerID, ProducerEpoch: batch.NoProducerEpoch, BaseSequence: batch.NoSequence,
		PartitionLeaderEpoch: batch.NoPartitionLeaderEpoch, BaseTimestamp: ts,
	}, recs)
	if err != nil {
		t.Fatalf("build batch: %v", err)
	}
	return b
}

// readAll reads the whole log from its start in chunks of maxBytes and
// returns every batch.
func readAll(t testing.TB, l *Log, maxBytes int) [][]byte {
	t.Helper()
	var out [][]byte
	off := l.LogStartOffset()
	for off < l.LogEndOffset() {
		data, err := l.Read(off, ReadOptions{MaxBytes: maxBytes})
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		if len(data) == 0 {
			t.Fatalf("read at %d (end %d): no data", off, l.LogEndOffset())
		}
		bs, err := batch.Split(data)
		if err != nil {
			t.Fatalf("split read at %d: %v", off, err)
		}
		for _, b := range bs {
			if _, err := batch.Validate(b); err != nil {
				t.Fatalf("read at %d: served batch fails validation: %v", off, err)
			}
			if batch.LastOffset(b) >= off {
				out = append(out, b)
			}
			off = max(off, batch.LastOffset(b)+1)
		}
	}
	return out
}

// holdSyncRounds keeps m's fsync goroutine from starting a round (one
// already running finishes first) until release is called: appends that
// ask for a round meanwhile find "the round has not come yet". Release
// before m.Abandon or m.Close, which run a last round.
func holdSyncRounds(m *Manager) (release func()) {
	m.syncer.hold.Lock()
	var once sync.Once
	return func() { once.Do(m.syncer.hold.Unlock) }
}
