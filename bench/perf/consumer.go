package perf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ErrTimeout is wrapped by RunConsumer's error when no record arrived for
// ConsumerConfig.Timeout before the run had its records.
var ErrTimeout = errors.New("timed out waiting for records")

// RunConsumer consumes cfg.Records records of cfg.Topic as cfg describes and
// returns the result. While records arrive it writes a progress line
// (ConsumerWindow) to progress every cfg.ReportInterval, unless progress is
// nil. If no record arrives for cfg.Timeout first, it returns the result so
// far with an error wrapping ErrTimeout; if ctx is cancelled, the result so
// far with ctx's error. A topic that does not exist is a *MissingTopicError
// (a consumer run does not ask the broker to create it).
func RunConsumer(ctx context.Context, cfg ConsumerConfig, progress io.Writer) (ConsumerResult, error) {
	if err := cfg.Validate(); err != nil {
		return ConsumerResult{}, err
	}
	c := &consumer{start: time.Now()}
	cl, err := kgo.NewClient(cfg.clientOpts(c.assigned)...)
	if err != nil {
		return ConsumerResult{}, fmt.Errorf("consumer client: %w", err)
	}
	defer cl.Close()
	if _, err := checkTopic(ctx, cl, cfg.Topic, false, DefaultTopicTimeout); err != nil {
		return ConsumerResult{}, err
	}

	res := ConsumerResult{Start: c.start, End: c.start}
	last := c.start // when records last arrived
	report := newConsumeReporter(c.start, cfg.ReportInterval, progress)
	for res.Records < cfg.Records {
		pollCtx, cancel := context.WithDeadline(ctx, last.Add(cfg.Timeout))
		fetches := cl.PollFetches(pollCtx)
		cancel()
		if err := ctx.Err(); err != nil {
			return c.finish(res), err
		}
		if err := fetchError(fetches); err != nil {
			return c.finish(res), err
		}
		now := time.Now()
		if count(fetches, &res, cfg.Records) > 0 {
			last, res.End = now, now
			if err := report.maybe(now, res); err != nil {
				return c.finish(res), err
			}
			continue
		}
		if now.Sub(last) >= cfg.Timeout {
			return c.finish(res), fmt.Errorf("%w: %d of %d records consumed, then none for %v",
				ErrTimeout, res.Records, cfg.Records, cfg.Timeout)
		}
	}
	return c.finish(res), nil
}

// consumeReporter writes a consumer run's progress lines.
type consumeReporter struct {
	every time.Duration
	w     io.Writer // nil: no lines
	// prev is the result as of the previous line (or the start).
	prev     ConsumerResult
	prevTime time.Time
}

// newConsumeReporter returns a reporter for a run that started at start.
func newConsumeReporter(start time.Time, every time.Duration, w io.Writer) *consumeReporter {
	if every == 0 {
		w = nil
	}
	return &consumeReporter{every: every, w: w, prevTime: start}
}

// maybe writes the line of the window since the previous one if it is due
// at now, res being the figures so far.
func (r *consumeReporter) maybe(now time.Time, res ConsumerResult) error {
	if r.w == nil || now.Sub(r.prevTime) < r.every {
		return nil
	}
	line := ConsumerWindow{
		Records:      res.Records - r.prev.Records,
		Bytes:        res.Bytes - r.prev.Bytes,
		Elapsed:      now.Sub(r.prevTime),
		TotalRecords: res.Records,
	}
	r.prev, r.prevTime = res, now
	if _, err := fmt.Fprintln(r.w, line); err != nil {
		return fmt.Errorf("write progress: %w", err)
	}
	return nil
}

// consumer holds what a run learns from the client's goroutines.
type consumer struct {
	start time.Time

	mu         sync.Mutex
	assignedAt time.Time // first group assignment; zero without a group
}

// assigned notes the group's assignment of partitions.
func (c *consumer) assigned() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.assignedAt.IsZero() {
		c.assignedAt = time.Now()
	}
}

// finish completes res with the time spent waiting for the group.
func (c *consumer) finish(res ConsumerResult) ConsumerResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.assignedAt.IsZero() {
		res.Rebalance = min(c.assignedAt.Sub(c.start), res.End.Sub(res.Start))
	}
	return res
}

// count adds the records of fs to res, up to want in all, and returns how
// many it added.
func count(fs kgo.Fetches, res *ConsumerResult, want int64) int64 {
	before := res.Records
	fs.EachRecord(func(r *kgo.Record) {
		if res.Records < want {
			res.Records++
			res.Bytes += int64(len(r.Key) + len(r.Value))
		}
	})
	return res.Records - before
}

// fetchError returns the first error of fs that ends the run: not a
// context's (the caller checks those) nor a retriable Kafka error, which
// the client retries itself.
func fetchError(fs kgo.Fetches) error {
	var first error
	fs.EachError(func(topic string, partition int32, err error) {
		switch {
		case first != nil, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), kerr.IsRetriable(err):
			return
		}
		first = fmt.Errorf("fetch %s[%d]: %w", topic, partition, err)
	})
	return first
}
