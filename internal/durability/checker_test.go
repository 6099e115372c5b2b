package durability

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// progressTimeout bounds each wait for the broker to make progress again
// after a fault: a broker that has not recovered by then is taken to hang
// for good. It is no performance bound, only a way to end a stuck test.
const progressTimeout = time.Minute

// position is where a record sits: its partition and offset.
type position struct {
	partition int32
	offset    int64
}

// seqPartition is the partition record s is produced to.
func seqPartition(s int64) int32 { return int32(s % killPartitions) }

// seqRecord is record s: key s, value value-s, to partition s%killPartitions
// of killTopic (readAll reads that topic; every test runs its own broker).
func seqRecord(s int64) *kgo.Record {
	return &kgo.Record{
		Topic:     killTopic,
		Partition: seqPartition(s),
		Key:       []byte(strconv.FormatInt(s, 10)),
		Value:     []byte(fmt.Sprintf("value-%d", s)),
	}
}

// recordSeq returns the number of a record made by seqRecord, checking
// that its value and partition are the ones record s has.
func recordSeq(r *kgo.Record) (int64, error) {
	s, err := strconv.ParseInt(string(r.Key), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("partition %d offset %d: key %q is no record number", r.Partition, r.Offset, r.Key)
	}
	if want := fmt.Sprintf("value-%d", s); string(r.Value) != want {
		return 0, fmt.Errorf("partition %d offset %d: value %q, want %q", r.Partition, r.Offset, r.Value, want)
	}
	if seqPartition(s) != r.Partition {
		return 0, fmt.Errorf("record %d in partition %d, want %d", s, r.Partition, seqPartition(s))
	}
	return s, nil
}

// seqProducer produces seqRecord(0), seqRecord(1), ... from a goroutine
// until stopped, and keeps where each acknowledged record was written and
// every produce error. The client retries for ever (franz-go's default),
// so any error is a record the broker never took.
type seqProducer struct {
	cl   *kgo.Client
	done chan int64 // receives how many records were sent, once stopped
	stop chan struct{}

	mu    sync.Mutex
	acked map[int64]position
	fails []error
}

// startSeqProducer starts producing with cl, one record per tick of every,
// or as fast as the client takes them when every is 0 (franz-go's Produce
// blocks while its buffer of unacknowledged records is full).
func startSeqProducer(ctx context.Context, cl *kgo.Client, every time.Duration) *seqProducer {
	p := &seqProducer{cl: cl, done: make(chan int64, 1), stop: make(chan struct{}), acked: map[int64]position{}}
	go p.run(ctx, every)
	return p
}

func (p *seqProducer) run(ctx context.Context, every time.Duration) {
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	var seq int64
	defer func() { p.done <- seq }()
	for {
		select {
		case <-p.stop:
			return
		case <-ctx.Done():
			return
		default:
		}
		if tick != nil {
			select {
			case <-p.stop:
				return
			case <-ctx.Done():
				return
			case <-tick:
			}
		}
		s := seq
		seq++
		p.cl.Produce(ctx, seqRecord(s), func(r *kgo.Record, err error) {
			p.mu.Lock()
			defer p.mu.Unlock()
			if err != nil {
				p.fails = append(p.fails, fmt.Errorf("record %d: %w", s, err))
				return
			}
			p.acked[s] = position{r.Partition, r.Offset}
		})
	}
}

// ackedCount returns how many records were acknowledged so far.
func (p *seqProducer) ackedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.acked)
}

// failed returns the first produce error, or nil.
func (p *seqProducer) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.fails) > 0 {
		return fmt.Errorf("%d produce errors, first: %w", len(p.fails), p.fails[0])
	}
	return nil
}

// waitAcked waits until n records are acknowledged; it fails the test on
// a produce error or when the broker makes no progress for
// progressTimeout.
func (p *seqProducer) waitAcked(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(progressTimeout)
	for p.ackedCount() < n {
		if err := p.failed(); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d records acknowledged after %v", p.ackedCount(), n, progressTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// finish stops producing, waits until every record sent is acknowledged
// or failed, fails the test on any produce error and returns where each
// acknowledged record was written.
func (p *seqProducer) finish(ctx context.Context, t *testing.T) map[int64]position {
	t.Helper()
	close(p.stop)
	sent := <-p.done
	if err := p.cl.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if err := p.failed(); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if int64(len(p.acked)) != sent {
		t.Fatalf("%d records sent, %d acknowledged, none failed", sent, len(p.acked))
	}
	acked := make(map[int64]position, len(p.acked))
	for s, pos := range p.acked {
		acked[s] = pos
	}
	return acked
}

// checkLog checks the records of killTopic read back by readAll against
// the acknowledged ones: each partition holds records of its own, at
// offsets 0, 1, 2, ..., in the order they were produced, none twice;
// every acknowledged record is there, at the offset its acknowledgement
// gave. It returns where each record read sits.
func checkLog(t *testing.T, got map[int32][]*kgo.Record, acked map[int64]position) map[int64]position {
	t.Helper()
	seen := map[int64]position{}
	for part, recs := range got {
		last := int64(-1)
		for i, r := range recs {
			s, err := recordSeq(r)
			if err != nil {
				t.Fatal(err)
			}
			if prev, dup := seen[s]; dup {
				t.Fatalf("record %d twice: offsets %d and %d of partition %d", s, prev.offset, r.Offset, part)
			}
			seen[s] = position{part, r.Offset}
			if s <= last {
				t.Fatalf("partition %d out of order at offset %d: record %d after %d", part, r.Offset, s, last)
			}
			if r.Offset != int64(i) {
				t.Fatalf("partition %d: offset %d at position %d", part, r.Offset, i)
			}
			last = s
		}
	}
	lost := 0
	for s, want := range acked {
		got, ok := seen[s]
		switch {
		case !ok:
			lost++
			if lost <= 10 {
				t.Errorf("acknowledged record %d (partition %d offset %d) lost", s, want.partition, want.offset)
			}
		case got != want:
			t.Errorf("record %d acknowledged at partition %d offset %d, read at partition %d offset %d",
				s, want.partition, want.offset, got.partition, got.offset)
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged records lost", lost, len(acked))
	}
	return seen
}
