package wire

import (
	"math"
	"os"
	"strings"
	"sync/atomic"
	"testing"

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
