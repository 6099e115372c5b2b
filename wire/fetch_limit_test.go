package wire

import (
	"encoding/binary"
	"io"
	"math"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

// countingFS is the OS file system counting the bytes read from segment
// files (.log), so a test can see how much a fetch took from the log.
type countingFS struct {
	log.OSFS
	read atomic.Int64
}

func (c *countingFS) OpenFile(name string, flag int, perm os.FileMode) (log.File, error) {
	f, err := c.OSFS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return &countingFile{File: f, read: &c.read}, nil
}

type countingFile struct {
	log.File
	read *atomic.Int64
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.read.Add(int64(n))
	return n, err
}

// fetchLimit is the fetch.max.bytes of the tests below; readSlack is what
// locating the first batch may read beyond the data (one header scan
// window).
const (
	fetchLimit = 256 << 10
	readSlack  = 16 << 10
)

// A fetch asking for 2^31-1 bytes gets at most fetch.max.bytes, or one
// batch larger than it (KIP-74), and reads no more than that from the log;
// a consumer still walks the whole partition, over the large batch too.
func TestFetchMaxBytesCapsHugeFetch(t *testing.T) {
	fs := &countingFS{}
	s, b := startBrokerFS(t, map[string]string{"fetch.max.bytes": "262144"}, fs)
	createTopic(t, b, "huge", 1)
	c := dial(t, s)
	small := makeBatch(t, batchOpts(), 1, 16<<10)
	big := makeBatch(t, batchOpts(), 1, 400<<10) // larger than fetch.max.bytes
	var total int
	for i := range 60 {
		rec := small
		if i == 30 {
			rec = big
		}
		wantCode(t, "produce", c.produce(9, 1, "huge", 0, rec).ErrorCode, nil)
		total += len(rec)
	}
	if total < 4*fetchLimit {
		t.Fatalf("partition of %d bytes is not much larger than fetch.max.bytes", total)
	}

	next, sawBig := int64(0), false
	for fetches := 0; next < 60; fetches++ {
		if fetches > 60 {
			t.Fatalf("no progress: at offset %d after %d fetches", next, fetches)
		}
		before := fs.read.Load()
		resp := roundTrip[*kmsg.FetchResponse](c, fetchReq(11, 0, 1, math.MaxInt32, fetchPart("huge", 0, next, math.MaxInt32)))
		read := fs.read.Load() - before
		p := onlyPartition(t, resp)
		wantCode(t, "fetch", p.ErrorCode, nil)
		bs, err := batch.Split(p.RecordBatches)
		if err != nil || len(bs) == 0 {
			t.Fatalf("fetch at %d: %d batches, %v", next, len(bs), err)
		}
		n := len(p.RecordBatches)
		switch {
		case len(bs) == 1 && n > fetchLimit:
			sawBig = n == len(big)
		case n > fetchLimit:
			t.Fatalf("fetch at %d: %d bytes in %d batches over fetch.max.bytes %d", next, n, len(bs), fetchLimit)
		}
		if read > int64(max(n, fetchLimit)+readSlack) {
			t.Fatalf("fetch at %d: read %d bytes from the log to send %d (fetch.max.bytes %d)", next, read, n, fetchLimit)
		}
		for _, bt := range bs {
			if batch.BaseOffset(bt) != next {
				t.Fatalf("batch at %d, want %d", batch.BaseOffset(bt), next)
			}
			next = batch.LastOffset(bt) + 1
		}
	}
	if !sawBig {
		t.Fatal("the batch larger than fetch.max.bytes was never returned whole")
	}
}

// Once a partition of the fetch returned data, a later partition whose
// first batch does not fit in what is left returns no records, and that
// batch is not read from the log at all.
func TestFetchLaterPartitionBatchOverBudgetNotRead(t *testing.T) {
	fs := &countingFS{}
	s, b := startBrokerFS(t, map[string]string{"fetch.max.bytes": "262144"}, fs)
	createTopic(t, b, "two", 2)
	c := dial(t, s)
	small := makeBatch(t, batchOpts(), 1, 16<<10)
	sent := 0
	for range 12 {
		wantCode(t, "produce", c.produce(9, 1, "two", 0, small).ErrorCode, nil)
		sent += len(small)
	}
	big := makeBatch(t, batchOpts(), 1, 200<<10) // fits the limit, not what is left
	wantCode(t, "produce", c.produce(9, 1, "two", 1, big).ErrorCode, nil)

	req := fetchReq(11, 0, 1, fetchLimit, fetchPart("two", 0, 0, math.MaxInt32))
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, req.Topics[0].Partitions[0])
	req.Topics[0].Partitions[1].Partition = 1
	before := fs.read.Load()
	resp := roundTrip[*kmsg.FetchResponse](c, req)
	read := fs.read.Load() - before
	ps := resp.Topics[0].Partitions
	if len(ps) != 2 || len(ps[0].RecordBatches) != sent || len(ps[1].RecordBatches) != 0 || ps[1].HighWatermark != 1 {
		t.Fatalf("got %d partitions; first %d bytes (want %d), second %d bytes (want 0)", len(ps), len(ps[0].RecordBatches), sent, len(ps[1].RecordBatches))
	}
	if read > int64(sent+2*readSlack) {
		t.Fatalf("read %d bytes from the log to send %d: the batch that did not fit was read", read, sent)
	}
	// Alone, the second partition's batch comes back.
	resp = roundTrip[*kmsg.FetchResponse](c, fetchReq(11, 0, 1, math.MaxInt32, fetchPart("two", 1, 0, math.MaxInt32)))
	if p := onlyPartition(t, resp); len(p.RecordBatches) != len(big) {
		t.Fatalf("second partition alone: %d bytes, want %d", len(p.RecordBatches), len(big))
	}
}

// The node's fetch memory bounds what fetches read at once: a fetch gets
// what is free, at least one whole batch when nothing is (KIP-74, so it
// still makes progress), and gives it all back once its response is
// written.
func TestFetchMemoryBoundsReads(t *testing.T) {
	s, b := startBroker(t, nil)
	const budget = 64 << 10
	b.handler.apis.fetchMemory = newFetchMemory(budget)
	mem := b.handler.apis.fetchMemory
	createTopic(t, b, "mem", 1)
	c := dial(t, s)
	small := makeBatch(t, batchOpts(), 1, 10<<10)
	for range 20 {
		wantCode(t, "produce", c.produce(9, 1, "mem", 0, small).ErrorCode, nil)
	}
	fetch := func(offset int64) kmsg.FetchResponseTopicPartition {
		t.Helper()
		resp := roundTrip[*kmsg.FetchResponse](c, fetchReq(11, 0, 1, math.MaxInt32, fetchPart("mem", 0, offset, math.MaxInt32)))
		p := onlyPartition(t, resp)
		wantCode(t, "fetch", p.ErrorCode, nil)
		return p
	}
	// Alone, a fetch reads up to the budget.
	if p := fetch(0); len(p.RecordBatches) > budget || numBatches(t, p.RecordBatches) != budget/len(small) {
		t.Fatalf("alone: %d bytes in %d batches, budget %d", len(p.RecordBatches), numBatches(t, p.RecordBatches), budget)
	}
	waitUntil(t, "the fetch memory back", func() bool { return mem.inUse() == 0 })
	// With the budget taken, one batch still comes.
	taken := mem.take(budget)
	if p := fetch(3); numBatches(t, p.RecordBatches) != 1 || batch.BaseOffset(p.RecordBatches) != 3 {
		t.Fatalf("budget taken: %d bytes in %d batches", len(p.RecordBatches), numBatches(t, p.RecordBatches))
	}
	waitUntil(t, "the fetch memory back", func() bool { return mem.inUse() == taken })
	mem.give(taken)
}

// A fetch whose connection closes before its response is written gives
// its fetch memory back all the same.
func TestFetchMemoryBackAfterClose(t *testing.T) {
	s, b := startBroker(t, nil)
	mem := b.handler.apis.fetchMemory
	createTopic(t, b, "gone", 1)
	c := dial(t, s)
	for range 8 {
		wantCode(t, "produce", c.produce(9, 1, "gone", 0, makeBatch(t, batchOpts(), 1, 100<<10)).ErrorCode, nil)
	}
	for i := range 20 {
		d := dial(t, s)
		d.send(fetchReq(11, 0, 1, math.MaxInt32, fetchPart("gone", 0, 0, math.MaxInt32)), int32(i))
		_ = d.nc.Close()
	}
	waitUntil(t, "the fetch memory back", func() bool { return mem.inUse() == 0 })
}

// A response's fetch memory stays taken until it is written: a client that
// does not read a large response keeps its bytes out of the budget, and
// other fetches read within what is left, not past it.
func TestFetchMemoryHeldUntilWritten(t *testing.T) {
	s, b := startBroker(t, nil)
	const budget = 32 << 20
	b.handler.apis.fetchMemory = newFetchMemory(budget)
	mem := b.handler.apis.fetchMemory
	createTopic(t, b, "slow", 1)
	c := dial(t, s)
	one := makeBatch(t, batchOpts(), 1, 512<<10)
	for range 48 { // 24 MiB: more than loopback socket buffers hold
		wantCode(t, "produce", c.produce(9, 1, "slow", 0, one).ErrorCode, nil)
	}
	stuck := dial(t, s)
	stuck.send(fetchReq(11, 0, 1, math.MaxInt32, fetchPart("slow", 0, 0, math.MaxInt32)), 1)
	var size [4]byte // the response is encoded and being written
	_ = stuck.nc.SetReadDeadline(time.Now().Add(ioTimeout))
	if _, err := io.ReadFull(stuck.nc, size[:]); err != nil {
		t.Fatal(err)
	}
	held := mem.inUse()
	if held < 48*int64(len(one)) {
		t.Fatalf("fetch memory %d while a %d-byte response is unwritten", held, 48*len(one))
	}
	resp := roundTrip[*kmsg.FetchResponse](c, fetchReq(11, 0, 1, math.MaxInt32, fetchPart("slow", 0, 0, math.MaxInt32)))
	if p := onlyPartition(t, resp); int64(len(p.RecordBatches)) > budget-held+int64(len(one)) {
		t.Fatalf("second fetch got %d bytes with %d of %d taken", len(p.RecordBatches), held, budget)
	}
	rest := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(stuck.nc, rest); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the fetch memory back", func() bool { return mem.inUse() == 0 })
}
