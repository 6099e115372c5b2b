package conformance

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// storedBatch is what a raw Fetch shows of one stored record batch.
type storedBatch struct {
	Partition   int32
	FirstOffset int64
	Records     int32
	Magic       int8
	Codec       int8 // attributes & 7: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd
	CRCValid    bool
}

// codecIDs maps codec names to their attribute values.
var codecIDs = map[string]int8{"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Byte positions in a record batch (v2): the CRC covers the batch from the
// attributes to its end.
const (
	batchLengthEnd = 12 // after baseOffset int64 and batchLength int32
	magicAt        = 16 // after partitionLeaderEpoch int32
	attributesAt   = 21 // after magic int8 and crc uint32
)

// fetchBatches reads every stored batch of partitions 0..n-1 of topic with
// raw Fetch requests, so the batches are seen as the broker serves them,
// compressed or not.
func fetchBatches(ctx context.Context, addr, topic string, n int32) ([]storedBatch, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil, fmt.Errorf("kgo client: %w", err)
	}
	defer cl.Close()
	topics, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	detail, ok := topics[topic]
	if !ok || detail.Err != nil {
		return nil, fmt.Errorf("metadata of %s: %v", topic, detail.Err)
	}
	var all []storedBatch
	for p := range n {
		bs, err := fetchPartitionBatches(ctx, cl, topic, detail.ID, p)
		if err != nil {
			return nil, err
		}
		all = append(all, bs...)
	}
	return all, nil
}

// fetchPartitionBatches fetches one partition from offset 0 to its high
// watermark.
func fetchPartitionBatches(ctx context.Context, cl *kgo.Client, topic string, id [16]byte, p int32) ([]storedBatch, error) {
	var out []storedBatch
	for offset := int64(0); ; {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.MaxWaitMillis = 0
		req.MinBytes = 0
		req.MaxBytes = 64 << 20
		req.SessionEpoch = -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, id
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, offset, 16<<20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return nil, fmt.Errorf("fetch partition %d at %d: %w", p, offset, err)
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return nil, fmt.Errorf("fetch partition %d at %d: %w", p, offset, err)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return nil, fmt.Errorf("fetch partition %d at %d: response has %d topics, want 1 with 1 partition", p, offset, len(resp.Topics))
		}
		rp0 := resp.Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(rp0.ErrorCode); err != nil {
			return nil, fmt.Errorf("fetch partition %d at %d: %w", p, offset, err)
		}
		if offset >= rp0.HighWatermark {
			return out, nil
		}
		bs, next, err := parseBatches(p, rp0.RecordBatches)
		if err != nil {
			return nil, fmt.Errorf("fetch partition %d at %d: %w", p, offset, err)
		}
		if len(bs) == 0 || next <= offset {
			return nil, fmt.Errorf("fetch partition %d at %d (high watermark %d): no complete batch in %d bytes", p, offset, rp0.HighWatermark, len(rp0.RecordBatches))
		}
		out = append(out, bs...)
		offset = next
	}
}

// parseBatches splits fetched bytes into batches; a truncated last batch,
// which Kafka may send, is ignored. It returns the offset after the last
// complete batch.
func parseBatches(p int32, b []byte) ([]storedBatch, int64, error) {
	var out []storedBatch
	var next int64
	for len(b) >= batchLengthEnd {
		size := batchLengthEnd + int(int32(binary.BigEndian.Uint32(b[8:12])))
		if size > len(b) {
			break
		}
		raw := b[:size]
		b = b[size:]
		if size <= attributesAt || raw[magicAt] != 2 {
			out = append(out, storedBatch{Partition: p, FirstOffset: int64(binary.BigEndian.Uint64(raw)), Magic: int8(raw[min(magicAt, size-1)])})
			return out, next, fmt.Errorf("batch at offset %d of %d bytes is not magic 2", out[len(out)-1].FirstOffset, size)
		}
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(raw); err != nil {
			return out, next, fmt.Errorf("decode batch: %w", err)
		}
		out = append(out, storedBatch{
			Partition:   p,
			FirstOffset: rb.FirstOffset,
			Records:     rb.NumRecords,
			Magic:       rb.Magic,
			Codec:       int8(rb.Attributes & 0x7),
			CRCValid:    uint32(rb.CRC) == crc32.Checksum(raw[attributesAt:], castagnoli),
		})
		next = rb.FirstOffset + int64(rb.LastOffsetDelta) + 1
	}
	return out, next, nil
}

// checkBatches checks the stored batches: magic 2, valid CRC, offsets
// contiguous from 0 in each partition, and, when codec is set, every
// batch compressed with it except uncompressed ones (librdkafka and
// kafka-python send a batch uncompressed when compressing would not shrink
// it), with at least one compressed batch in every partition holding
// records. A client that sends nothing compressed fails: librdkafka 2.0.2
// does that unless Produce is advertised from v0.
func checkBatches(batches []storedBatch, codec string, n int32) *problems {
	p := &problems{}
	next := make(map[int32]int64)
	compressed := make(map[int32]int)
	want, checkCodec := codecIDs[codec]
	for _, b := range batches {
		where := fmt.Sprintf("partition %d batch at offset %d", b.Partition, b.FirstOffset)
		if b.Magic != 2 {
			p.addf("%s: magic %d, want 2", where, b.Magic)
		}
		if !b.CRCValid {
			p.addf("%s: CRC does not match", where)
		}
		if b.FirstOffset != next[b.Partition] {
			p.addf("%s: want first offset %d", where, next[b.Partition])
		}
		next[b.Partition] = b.FirstOffset + int64(b.Records)
		if checkCodec {
			switch b.Codec {
			case want:
				compressed[b.Partition]++
			case 0:
			default:
				p.addf("%s: codec %d, want %d (%s) or none", where, b.Codec, want, codec)
			}
		}
	}
	if checkCodec {
		for part := range n {
			if next[part] > 0 && compressed[part] == 0 {
				p.addf("partition %d: no batch stored with codec %s", part, codec)
			}
		}
	}
	return p
}

// summarizeBatches describes the stored batches per partition for the log:
// records, batches and the codecs seen.
func summarizeBatches(batches []storedBatch) string {
	type sum struct {
		records, batches int
		codecs           map[int8]int
	}
	var parts []int32
	sums := make(map[int32]*sum)
	for _, b := range batches {
		s, ok := sums[b.Partition]
		if !ok {
			s = &sum{codecs: make(map[int8]int)}
			sums[b.Partition] = s
			parts = append(parts, b.Partition)
		}
		s.records += int(b.Records)
		s.batches++
		s.codecs[b.Codec]++
	}
	slices.Sort(parts)
	var out []string
	for _, p := range parts {
		s := sums[p]
		var cs []string
		for name, id := range codecIDs {
			if c := s.codecs[id]; c > 0 {
				cs = append(cs, fmt.Sprintf("%s:%d", name, c))
			}
		}
		slices.Sort(cs)
		out = append(out, fmt.Sprintf("p%d %d records in %d batches (%s)", p, s.records, s.batches, strings.Join(cs, " ")))
	}
	return strings.Join(out, "; ")
}
