package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/internal/harness"
	"github.com/weirmq/weir/log/batch"
)

// A weir serve process with fetch.max.bytes 1 MiB answers a Fetch asking
// for 2^31-1 bytes (response and partition) from a 6 MiB partition with
// at most 1 MiB, or one larger batch; a consumer asking for 1 GiB still
// reads every record.
func TestServeFetchMaxBytes(t *testing.T) {
	addr := harness.FreeAddr(t)
	props := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(props, []byte("fetch.max.bytes=1048576\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	startServe(t, "--data", t.TempDir(), "--listen", addr, "--config", props)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	const records, size = 60, 100 << 10
	cl := newTestClient(t, addr, kgo.DefaultProduceTopic("big"), kgo.AllowAutoTopicCreation(),
		kgo.ProducerLinger(0), kgo.MaxBufferedRecords(1), kgo.ProducerBatchCompression(kgo.NoCompression()))
	for i := range records {
		r := &kgo.Record{Key: fmt.Appendf(nil, "%d", i), Value: bytes.Repeat([]byte{byte(i)}, size)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}

	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 11, -1, 0, 1, math.MaxInt32
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "big"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.LogStartOffset = 0, 0, math.MaxInt32, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	bs, err := batch.Split(p.RecordBatches)
	if p.ErrorCode != 0 || err != nil || len(bs) == 0 || p.HighWatermark != records {
		t.Fatalf("fetch: error %d, %d batches (%v), high watermark %d", p.ErrorCode, len(bs), err, p.HighWatermark)
	}
	t.Logf("fetch of 2^31-1 bytes: %d bytes in %d batches", len(p.RecordBatches), len(bs))
	if n := len(p.RecordBatches); n > 1<<20 && len(bs) > 1 {
		t.Fatalf("fetch of 2^31-1 bytes got %d bytes in %d batches, over fetch.max.bytes 1 MiB", n, len(bs))
	}

	consumer := newTestClient(t, addr, kgo.ConsumeTopics("big"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(1<<30), kgo.FetchMaxPartitionBytes(1<<30), kgo.BrokerMaxReadBytes(1<<30))
	for got := 0; got < records; {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume after %d records: %v", got, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset != int64(got) || len(r.Value) != size {
				t.Fatalf("record at %d (%d bytes), want offset %d", r.Offset, len(r.Value), got)
			}
			got++
		})
	}
}
