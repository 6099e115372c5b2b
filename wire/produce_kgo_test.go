package wire

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// newKgo returns a franz-go client of the broker at s, closed at the end
// of the test.
func newKgo(t *testing.T, s *Server, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(s.Addr().String())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// kgoRecord is the record i of a test run.
func kgoRecord(topic string, i int) *kgo.Record {
	return &kgo.Record{
		Topic: topic, Key: fmt.Appendf(nil, "key-%d", i),
		Value:   bytes.Repeat(fmt.Appendf(nil, "value-%d;", i), 1+i%7),
		Headers: []kgo.RecordHeader{{Key: "h", Value: fmt.Appendf(nil, "%d", i)}},
	}
}

// consumeAll reads n records of topic from the start and checks them
// against kgoRecord, per partition in offset order.
func consumeAll(t *testing.T, s *Server, topic string, n int) {
	t.Helper()
	cl := newKgo(t, s, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	seen := map[string]bool{}
	next := map[int32]int64{}
	for len(seen) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(seen), n, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s-%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			var i int
			if _, err := fmt.Sscanf(string(r.Key), "key-%d", &i); err != nil {
				t.Fatalf("key %q", r.Key)
			}
			want := kgoRecord(topic, i)
			if !bytes.Equal(r.Value, want.Value) || len(r.Headers) != 1 || !bytes.Equal(r.Headers[0].Value, want.Headers[0].Value) {
				t.Fatalf("record %d differs: %q", i, r.Value)
			}
			if r.Offset != next[r.Partition] {
				t.Fatalf("partition %d: offset %d, want %d", r.Partition, r.Offset, next[r.Partition])
			}
			next[r.Partition]++
			if seen[string(r.Key)] {
				t.Fatalf("duplicate %s", r.Key)
			}
			seen[string(r.Key)] = true
		})
	}
}

// franz-go produces with every acks setting and codec and consumes it all
// back (its consumer uses incremental fetch sessions).
func TestKgoProduceConsume(t *testing.T) {
	s, b := startBroker(t, nil)
	cases := []struct {
		name  string
		codec kgo.CompressionCodec
		opts  []kgo.Opt
	}{
		{"acks=all none", kgo.NoCompression(), nil},
		{"acks=1 gzip", kgo.GzipCompression(), []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()}},
		{"acks=0 snappy", kgo.SnappyCompression(), []kgo.Opt{kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite()}},
		{"acks=all lz4", kgo.Lz4Compression(), nil},
		{"acks=all zstd", kgo.ZstdCompression(), nil},
	}
	const n = 600
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			topic := fmt.Sprintf("kgo%d", i)
			createTopic(t, b, topic, 3)
			cl := newKgo(t, s, append([]kgo.Opt{kgo.ProducerBatchCompression(tc.codec), kgo.ProducerLinger(5 * time.Millisecond)}, tc.opts...)...)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for j := range n {
				cl.Produce(ctx, kgoRecord(topic, j), func(r *kgo.Record, err error) {
					if err != nil {
						t.Errorf("produce %s: %v", r.Key, err)
					}
				})
			}
			if err := cl.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			consumeAll(t, s, topic, n)
		})
	}
}

// A kgo consumer that waits on an empty topic gets records produced later
// through its long poll.
func TestKgoConsumerLongPoll(t *testing.T) {
	s, b := startBroker(t, nil)
	createTopic(t, b, "kgolp", 2)
	cl := newKgo(t, s)
	done := make(chan struct{})
	go func() { // the consumer below is already polling: the topic is empty until it asks
		defer close(done)
		for j := range 50 {
			if err := cl.ProduceSync(context.Background(), kgoRecord("kgolp", j)).FirstErr(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	consumeAll(t, s, "kgolp", 50)
	<-done
}
