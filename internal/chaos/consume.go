package chaos

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Record is one record read back from a partition.
type Record struct {
	Partition int32
	Offset    int64
	Value     string
}

// Log is what was read from a topic: each partition's records in the
// order they were read.
type Log map[int32][]Record

// Len returns the number of records in l.
func (l Log) Len() int {
	n := 0
	for _, rs := range l {
		n += len(rs)
	}
	return n
}

// EndOffsets returns the end offset (high watermark) of every partition
// of topic, retrying until every partition answers or ctx ends.
func EndOffsets(ctx context.Context, seeds []string, topic string) (map[int32]int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return nil, fmt.Errorf("chaos: end offsets of %s: %w", topic, err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var last error
	for {
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err == nil {
			err = ends.Error()
		}
		if err == nil {
			out := map[int32]int64{}
			ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
			if len(out) > 0 {
				return out, nil
			}
			err = errors.New("no partitions listed")
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("chaos: end offsets of %s: %w (last: %v)", topic, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ReadAll reads every partition of topic from its first offset up to the
// end offset it has when ReadAll starts (so call it once the producers
// stopped), with a franz-go consumer assigned every partition.
func ReadAll(ctx context.Context, seeds []string, topic string) (Log, error) {
	ends, err := EndOffsets(ctx, seeds, topic)
	if err != nil {
		return nil, err
	}
	return ReadUpTo(ctx, seeds, topic, ends)
}

// ReadUpTo reads each partition of topic named in ends from its first
// offset up to its given end offset.
func ReadUpTo(ctx context.Context, seeds []string, topic string, ends map[int32]int64) (Log, error) {
	parts := map[int32]kgo.Offset{}
	for p, end := range ends {
		if end > 0 {
			parts[p] = kgo.NewOffset().AtStart()
		}
	}
	out := Log{}
	if len(parts) == 0 {
		return out, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}))
	if err != nil {
		return nil, fmt.Errorf("chaos: read %s: %w", topic, err)
	}
	defer cl.Close()
	next := map[int32]int64{}
	var fetchErrs []string
	for !reached(next, ends) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return out, fmt.Errorf("chaos: read %s: %w: at %v of %v (fetch errors: %s)", topic, ctx.Err(), next, ends, strings.Join(fetchErrs, "; "))
		}
		fs.EachError(func(_ string, p int32, err error) {
			if len(fetchErrs) < 10 {
				fetchErrs = append(fetchErrs, fmt.Sprintf("p%d: %v", p, err))
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset >= ends[r.Partition] {
				return // written after ReadAll started
			}
			out[r.Partition] = append(out[r.Partition], Record{Partition: r.Partition, Offset: r.Offset, Value: string(r.Value)})
			next[r.Partition] = max(next[r.Partition], r.Offset+1)
		})
	}
	return out, nil
}

// reached reports whether every partition was read up to its end.
func reached(next, ends map[int32]int64) bool {
	for _, p := range slices.Sorted(maps.Keys(ends)) {
		if next[p] < ends[p] {
			return false
		}
	}
	return true
}
