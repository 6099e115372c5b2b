package failover

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// readBack reads the log itself, outside the consumer group, from the
// lowest offset at which a missing record was acknowledged in each of its
// partitions up to the partition's end offset, and returns the records of
// round it finds. A round checks these reads beside the group's: a record
// the group member missed (it had not read it when the round ended) but
// the log holds is not lost; Round.ConsumerMissed counts those.
func readBack(ctx context.Context, seeds, topics []string, round uint32, missing []Ack, timeout time.Duration) ([]Read, error) {
	if len(missing) == 0 {
		return nil, nil
	}
	from := map[string]map[int32]kgo.Offset{}
	low := map[string]map[int32]int64{}
	for _, a := range missing {
		t := topics[a.Topic]
		if low[t] == nil {
			low[t], from[t] = map[int32]int64{}, map[int32]kgo.Offset{}
		}
		if o, ok := low[t][a.Partition]; !ok || a.Offset < o {
			low[t][a.Partition] = max(a.Offset, 0)
			from[t][a.Partition] = kgo.NewOffset().At(max(a.Offset, 0))
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumePartitions(from))
	if err != nil {
		return nil, fmt.Errorf("read back: %w", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topics...)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("read back: end offsets: %w", err)
	}
	left := map[string]map[int32]int64{} // partitions not read to their end
	for t, ps := range low {
		for p, o := range ps {
			if e, ok := ends.Lookup(t, p); ok && e.Offset > o {
				if left[t] == nil {
					left[t] = map[int32]int64{}
				}
				left[t][p] = e.Offset
			}
		}
	}
	index := topicIndex(topics)
	var reads []Read
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return reads, fmt.Errorf("read back: %d topics not read to their end: %w", len(left), context.Cause(ctx))
		}
		fs.EachRecord(func(r *kgo.Record) {
			if rd, seq, _, err := decodeValue(r.Value); err == nil && rd == round {
				reads = append(reads, Read{Seq: seq, Topic: index[r.Topic], Partition: r.Partition, Offset: r.Offset})
			}
			if end, ok := left[r.Topic][r.Partition]; ok && r.Offset+1 >= end {
				delete(left[r.Topic], r.Partition)
				if len(left[r.Topic]) == 0 {
					delete(left, r.Topic)
				}
			}
		})
	}
	return reads, nil
}

// missedPartitions names the partitions of the acknowledged records the
// group member had not read when the round ended, with their counts and
// lowest offsets, for the round's problems.
func missedPartitions(topics []string, missing []Ack) string {
	type key struct {
		topic int32
		part  int32
	}
	count := map[key]int{}
	low := map[key]int64{}
	for _, a := range missing {
		k := key{a.Topic, a.Partition}
		if n, ok := count[k]; !ok || a.Offset < low[k] {
			low[k] = a.Offset
			count[k] = n
		}
		count[k]++
	}
	keys := make([]key, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.part, b.part)) })
	var b strings.Builder
	fmt.Fprintf(&b, "the group member had not read %d acknowledged records when the round ended:", len(missing))
	for _, k := range keys {
		fmt.Fprintf(&b, " %s/%d: %d from offset %d;", topics[k.topic], k.part, count[k], low[k])
	}
	return strings.TrimSuffix(b.String(), ";")
}
