package perf

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// RunProducer sends cfg.Records records to cfg.Topic as cfg describes and
// returns once each is acknowledged or has failed. Every cfg.ReportInterval
// it writes a progress line (WindowSummary) to progress, unless progress is
// nil. A missing topic is created by the broker if its
// auto.create.topics.enable allows, else the run fails with a
// *MissingTopicError before sending. If some records failed it returns the result with an error wrapping
// the first failure; if ctx is cancelled it stops sending and returns the
// result so far with ctx's error.
func RunProducer(ctx context.Context, cfg ProducerConfig, progress io.Writer) (ProducerResult, error) {
	if err := cfg.Validate(); err != nil {
		return ProducerResult{}, err
	}
	cl, err := kgo.NewClient(cfg.clientOpts()...)
	if err != nil {
		return ProducerResult{}, fmt.Errorf("producer client: %w", err)
	}
	defer cl.Close()
	if _, err := checkTopic(ctx, cl, cfg.Topic, true, cfg.TopicTimeout); err != nil {
		return ProducerResult{}, err
	}

	value := payload(cfg.RecordSize)
	throttle := NewThrottle(cfg.Throughput)
	p := &producer{stats: newProduceStats(time.Now(), cfg.ReportInterval), progress: progress}
	for sent := int64(0); sent < cfg.Records && ctx.Err() == nil; sent++ {
		if d := throttle.Delay(sent, time.Since(p.stats.start)); d > 0 && sleep(ctx, d) != nil {
			break
		}
		p.send(ctx, cl, value)
	}
	flushErr := cl.Flush(ctx)
	res := p.finish(time.Now())
	switch {
	case ctx.Err() != nil:
		return res, ctx.Err()
	case flushErr != nil:
		return res, fmt.Errorf("flush: %w", flushErr)
	case res.Failed > 0:
		return res, fmt.Errorf("%d of %d records failed, the first with: %w", res.Failed, cfg.Records, res.FirstError)
	}
	return res, nil
}

// producer collects the outcomes of the records of a run; the client calls
// done from its own goroutines.
type producer struct {
	mu       sync.Mutex
	stats    *produceStats
	progress io.Writer // nil once the run has finished
}

// send hands one record holding value to cl, to be timed from now until
// its acknowledgement. It blocks while the client's buffer is full.
func (p *producer) send(ctx context.Context, cl *kgo.Client, value []byte) {
	sent := time.Now()
	cl.Produce(ctx, &kgo.Record{Value: value}, func(r *kgo.Record, err error) {
		p.done(sent, len(r.Value), err)
	})
}

// done records the outcome of a record sent at sent, printing a progress
// line when one is due.
func (p *producer) done(sent time.Time, size int, err error) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.stats.failedRecord(err)
		return
	}
	if w, ok := p.stats.acked(now.Sub(sent), size, now); ok && p.progress != nil {
		fmt.Fprintln(p.progress, w)
	}
}

// finish returns the run's result as of end and stops progress lines, so
// that no late callback writes after the run has returned.
func (p *producer) finish(end time.Time) ProducerResult {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.progress = nil
	return p.stats.result(end)
}

// payload returns a record value of size random upper-case letters, as
// Kafka's tool makes them; one value is shared by every record of a run.
func payload(size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = 'A' + byte(rand.IntN(26))
	}
	return b
}
