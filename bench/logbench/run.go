package logbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirmq/weir/log"
)

// ReadyPrefix opens the line Run writes once every partition log is open
// (and recovered) and the writers are about to start.
const ReadyPrefix = "ready"

// Run opens the log directory cfg.Dir, appends to its partitions until
// cfg.Duration has passed, cfg.Batches batches were appended or ctx is
// cancelled, closes the directory cleanly and returns the figures.
//
// It writes to out the ready line (ReadyPrefix, then the settings and
// whether the previous shutdown of the directory was clean), a Progress
// line every cfg.ReportInterval and, with cfg.ReportSynced, one Synced line
// per append once it is durable. Each line
// is written whole with one Write call and nothing is buffered, so a parent
// reading a pipe sees every line the moment it is written, even if the
// process is killed right after.
//
// A cancelled ctx is a normal stop: Run returns the figures so far and no
// error.
func Run(ctx context.Context, cfg Config, out io.Writer) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m, err := log.OpenManager(log.ManagerConfig{Dir: cfg.Dir, Logger: logger})
	if err != nil {
		return Result{}, fmt.Errorf("open log directory: %w", err)
	}
	logs, err := openLogs(m, cfg)
	if err != nil {
		m.Abandon() // no clean-shutdown marker over a partition that failed to open
		return Result{}, err
	}
	res, err := runOn(ctx, cfg, m, logs, &lineWriter{w: out})
	if cerr := m.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("close %s: %w", cfg.Dir, cerr))
	}
	return res, err
}

// openLogs opens (recovering if needed) the run's partitions.
func openLogs(m *log.Manager, cfg Config) ([]*log.Log, error) {
	logs := make([]*log.Log, cfg.Partitions)
	for p := range logs {
		l, err := m.OpenLog(TopicPartition(int32(p)), cfg.LogConfig(), TopicID())
		if err != nil {
			return nil, fmt.Errorf("open partition %d: %w", p, err)
		}
		logs[p] = l
	}
	return logs, nil
}

// runOn announces readiness and runs the writers over the open logs.
func runOn(ctx context.Context, cfg Config, m *log.Manager, logs []*log.Log, out *lineWriter) (Result, error) {
	err := out.writeLine(func(b []byte) []byte {
		return fmt.Appendf(b, "%s dir=%q partitions=%d writers=%d records/batch=%d fsync=%t clean_shutdown=%t",
			ReadyPrefix, cfg.Dir, cfg.Partitions, cfg.Writers, cfg.RecordsPerBatch(), cfg.Fsync, m.CleanShutdown())
	})
	if err != nil {
		return Result{}, err
	}
	r := &runner{cfg: cfg, logs: logs, out: out}
	rounds := m.SyncRounds()
	res, err := r.run(ctx)
	res.SyncRounds = m.SyncRounds() - rounds
	return res, err
}

// runner holds what the writers of one run share.
type runner struct {
	cfg     Config
	logs    []*log.Log
	out     *lineWriter
	claimed atomic.Int64 // batches started, against cfg.Batches
	live    liveCounts   // what the writers appended so far, for Progress lines
}

// writerStats is what one writer counted.
type writerStats struct {
	batches, records, bytes int64
	latency                 histogram
}

// run starts the writers and waits for them. The first writer that fails
// stops the others; its error is returned with the figures so far.
func (r *runner) run(ctx context.Context) (Result, error) {
	if r.cfg.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.cfg.Duration)
		defer cancel()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stats := make([]writerStats, r.cfg.Writers)
	errs := make([]error, r.cfg.Writers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range r.cfg.Writers {
		wg.Go(func() {
			if errs[w] = r.write(ctx, int32(w), &stats[w]); errs[w] != nil {
				cancel()
			}
		})
	}
	reported := make(chan error, 1)
	stop := make(chan struct{})
	go func() {
		err := r.report(start, stop)
		if err != nil {
			cancel()
		}
		reported <- err
	}()
	wg.Wait()
	close(stop)
	return summarize(stats, time.Since(start)), errors.Join(append(errs, <-reported)...)
}

// claim takes one batch of the cfg.Batches budget, if there is one.
func (r *runner) claim() bool {
	return r.cfg.Batches == 0 || r.claimed.Add(1) <= r.cfg.Batches
}

// write is writer w's loop: build a batch, append it, wait for it to be
// durable under Fsync, report it, repeat.
func (r *runner) write(ctx context.Context, w int32, st *writerStats) error {
	p := w % int32(len(r.logs))
	l := r.logs[p]
	b := newBatchBuilder(r.cfg, p, w)
	for seq := int64(0); ctx.Err() == nil && r.claim(); seq++ {
		data, err := b.build(seq, time.Now().UnixMilli())
		if err != nil {
			return err
		}
		start := time.Now()
		res, err := l.Append(data, log.AppendOptions{AssignOffsets: true})
		if err != nil {
			return fmt.Errorf("writer %d: %w", w, err)
		}
		if r.cfg.Fsync {
			if err := l.WaitFlushed(res.LastOffset + 1); err != nil {
				return fmt.Errorf("writer %d: wait for offsets [%d, %d] to be flushed: %w", w, res.FirstOffset, res.LastOffset, err)
			}
		}
		took := time.Since(start)
		st.latency.add(took)
		r.live.add(res.Records, int64(res.Bytes), took)
		st.batches++
		st.records += res.Records
		st.bytes += int64(res.Bytes)
		if r.cfg.ReportSynced {
			s := Synced{Partition: p, FirstOffset: res.FirstOffset, LastOffset: res.LastOffset, Writer: w, Seq: seq}
			if err := r.out.writeLine(s.AppendTo); err != nil {
				return err
			}
		}
	}
	return nil
}

// report writes a Progress line every cfg.ReportInterval until stop is
// closed.
func (r *runner) report(start time.Time, stop <-chan struct{}) error {
	if r.cfg.ReportInterval == 0 {
		return nil
	}
	tick := time.NewTicker(r.cfg.ReportInterval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return nil
		case now := <-tick.C:
			p := r.live.progress(now.Sub(start))
			if err := r.out.writeLine(p.AppendTo); err != nil {
				return err
			}
		}
	}
}

// lineWriter writes whole lines, one Write call each, from many goroutines.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// writeLine writes the line appendLine appends to an empty buffer, with a
// line ending.
func (lw *lineWriter) writeLine(appendLine func([]byte) []byte) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.buf = append(appendLine(lw.buf[:0]), '\n')
	if _, err := lw.w.Write(lw.buf); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
