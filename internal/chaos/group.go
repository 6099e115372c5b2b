package chaos

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// GroupConsumer consumes a topic as the only member of a consumer group,
// from the start, and commits synchronously after each poll. It
// remembers the highest offset of each partition whose commit the
// coordinator acknowledged, and how often it read each value.
type GroupConsumer struct {
	group, topic string
	cl           *kgo.Client
	cancel       context.CancelFunc
	done         chan struct{}

	mu         sync.Mutex
	committed  map[int32]int64 // acknowledged commits: next offset to read
	seen       map[string]int
	read       int
	commitErrs []string

	stopOnce sync.Once
}

// StartGroupConsumer starts a group consumer of topic in group, through
// seeds, at franz-go's defaults but with autocommit off.
func StartGroupConsumer(t testing.TB, seeds []string, group, topic string) *GroupConsumer {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	if err != nil {
		t.Fatalf("chaos: group consumer %s: %v", group, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &GroupConsumer{group: group, topic: topic, cl: cl, cancel: cancel, done: make(chan struct{}),
		committed: map[int32]int64{}, seen: map[string]int{}}
	t.Cleanup(g.Stop)
	go g.run(ctx)
	return g
}

func (g *GroupConsumer) run(ctx context.Context) {
	defer close(g.done)
	for {
		fs := g.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		recs := fs.Records()
		if len(recs) == 0 {
			continue
		}
		g.mu.Lock()
		for _, r := range recs {
			g.seen[string(r.Value)]++
		}
		g.read += len(recs)
		g.mu.Unlock()
		err := g.cl.CommitRecords(ctx, recs...)
		g.mu.Lock()
		if err != nil {
			if len(g.commitErrs) < 10 {
				g.commitErrs = append(g.commitErrs, err.Error())
			}
		} else {
			for _, r := range recs {
				g.committed[r.Partition] = max(g.committed[r.Partition], r.Offset+1)
			}
		}
		g.mu.Unlock()
	}
}

// Committed returns, per partition, the highest offset whose commit the
// coordinator acknowledged so far.
func (g *GroupConsumer) Committed() map[int32]int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.committed)
}

// Seen returns how many times each value was read.
func (g *GroupConsumer) Seen() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.seen)
}

// CommitErrors returns the first few commit errors (retriable ones are
// expected around a coordinator's failover).
func (g *GroupConsumer) CommitErrors() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.commitErrs)
}

// Stop ends the consumer and closes its client (leaving the group).
func (g *GroupConsumer) Stop() {
	g.stopOnce.Do(func() {
		g.cancel()
		<-g.done
		g.cl.Close()
	})
}

// FetchCommitted returns group's committed offsets for topic (OffsetFetch
// through kadm), retrying while the coordinator is moving, until ctx ends.
func FetchCommitted(ctx context.Context, seeds []string, group, topic string) (map[int32]int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return nil, fmt.Errorf("chaos: fetch offsets of %s: %w", group, err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var last error
	for {
		rctx, cancel := context.WithTimeout(ctx, requestTimeout)
		res, err := adm.FetchOffsets(rctx, group)
		cancel()
		if err == nil {
			err = res.Error()
		}
		if err == nil {
			out := map[int32]int64{}
			for p, o := range res[topic] {
				out[p] = o.At
			}
			return out, nil
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("chaos: fetch offsets of %s: %w (last: %v)", group, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// CommitViolations compares the committed offsets fetched from the
// coordinator with the previous fetch (prev) and with the commits the
// coordinator had acknowledged before this fetch began (acked): a
// committed offset below prev moved back, one below acked was lost. It
// returns one line per violation, nil when there is none.
func CommitViolations(prev, acked, fetched map[int32]int64) []string {
	var out []string
	parts := map[int32]bool{}
	for p := range prev {
		parts[p] = true
	}
	for p := range acked {
		parts[p] = true
	}
	for _, p := range slices.Sorted(maps.Keys(parts)) {
		got, ok := fetched[p]
		if !ok {
			got = -1
		}
		if want, ok := acked[p]; ok && got < want {
			out = append(out, fmt.Sprintf("p%d: committed offset %d, but a commit of %d was acknowledged: lost", p, got, want))
		}
		if was, ok := prev[p]; ok && got < was {
			out = append(out, fmt.Sprintf("p%d: committed offset %d, earlier %d: moved back", p, got, was))
		}
	}
	return out
}

// Coordinator returns the node id of group's coordinator, retrying while
// it is moving, until ctx ends.
func Coordinator(ctx context.Context, seeds []string, group string) (int32, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return -1, fmt.Errorf("chaos: coordinator of %s: %w", group, err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var last error
	for {
		rctx, cancel := context.WithTimeout(ctx, requestTimeout)
		res := adm.FindGroupCoordinators(rctx, group)
		cancel()
		r, ok := res[group]
		switch {
		case !ok:
			last = fmt.Errorf("no answer for %s", group)
		case r.Err != nil:
			last = r.Err
		default:
			return r.NodeID, nil
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("chaos: coordinator of %s: %w (last: %v)", group, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
