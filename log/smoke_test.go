package log

import (
	"testing"
)

func TestSmoke(t *testing.T) {
	fsys := OSFS{}
	dir := t.TempDir()
	clock := &testClock{ms: 1_000_000}
	m := openTestManager(t, fsys, dir, clock)
	l, err := m.OpenLog(TopicPartition{"t", 0}, smallConfig(), [16]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		b := makeBatch(t, i*3, 3, clock.ms+int64(i*3), 50)
		res, err := l.Append(b, AppendOptions{AssignOffsets: true, LeaderEpoch: int32(i / 30)})
		if err != nil {
			t.Fatal(err)
		}
		if res.FirstOffset != int64(i*3) {
			t.Fatalf("first offset %d", res.FirstOffset)
		}
	}
	t.Logf("segments %d leo %d", l.SegmentCount(), l.LogEndOffset())
	got := readAll(t, l, 1000)
	if len(got) != 100 {
		t.Fatalf("got %d batches", len(got))
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = openTestManager(t, fsys, dir, clock)
	l, err = m.OpenLog(TopicPartition{"t", 0}, smallConfig(), [16]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 300 {
		t.Fatalf("leo %d", l.LogEndOffset())
	}
	if got := readAll(t, l, 1000); len(got) != 100 {
		t.Fatalf("got %d batches", len(got))
	}
	t.Log(l.Epochs())
	m.Abandon()
	m = openTestManager(t, fsys, dir, clock)
	l, err = m.OpenLog(TopicPartition{"t", 0}, smallConfig(), [16]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 300 {
		t.Fatalf("leo %d", l.LogEndOffset())
	}
	off, ts, found, err := l.OffsetForTimestamp(1_000_000 + 150)
	t.Log(off, ts, found, err)
	m.Close()
}
