package brokerbench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"time"
)

// Key names the series of one figure: a metric of a measurement on a
// target.
type Key struct {
	Measure Measure
	Target  Target
	Metric  Metric
}

// Result holds every figure of a run.
type Result struct {
	// Config is the run's configuration.
	Config Config
	// Samples holds each figure's value per repetition, in repetition
	// order; every series has Config.Reps values.
	Samples map[Key][]float64
	// Started and Elapsed time the whole run.
	Started time.Time
	Elapsed time.Duration
}

// runner runs the measurements of one Run.
type runner struct {
	cfg Config
	log *slog.Logger
	res *Result
}

// Run measures every target of every measurement Config.Reps times,
// interleaved: each repetition runs the measurements in turn, and each
// measurement runs its targets one after the other on fresh brokers, in
// alternating order from one repetition to the next. Without a WeirPath
// only the references run. The first failure ends the run.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r := &runner{cfg: cfg, log: logger, res: &Result{Config: cfg, Samples: map[Key][]float64{}, Started: time.Now()}}
	for rep := range cfg.Reps {
		for _, m := range measurements {
			if len(cfg.Measures) > 0 && !slices.Contains(cfg.Measures, m.id) {
				continue
			}
			for _, t := range r.order(m.targets, rep) {
				if err := r.measure(ctx, m, t, rep); err != nil {
					return r.res, fmt.Errorf("repetition %d, measurement (%s) on %s: %w", rep+1, m.id, t, err)
				}
			}
		}
	}
	r.res.Elapsed = time.Since(r.res.Started)
	return r.res, nil
}

// order returns the targets to run in repetition rep: without weir when
// there is no weir binary, reversed in odd repetitions.
func (r *runner) order(targets []Target, rep int) []Target {
	var out []Target
	for _, t := range targets {
		if t.isWeir() && r.cfg.WeirPath == "" {
			continue
		}
		out = append(out, t)
	}
	if rep%2 == 1 {
		slices.Reverse(out)
	}
	return out
}

// measure runs measurement m on a fresh broker of target t and records its
// figures.
func (r *runner) measure(ctx context.Context, m measurement, t Target, rep int) (err error) {
	dir, err := os.MkdirTemp(r.cfg.TempDir, "weir-brokerbench-")
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	defer func() {
		if rmErr := os.RemoveAll(dir); rmErr != nil && err == nil {
			err = fmt.Errorf("remove data directory: %w", rmErr)
		}
	}()
	b, err := r.start(ctx, t, dir)
	if err != nil {
		return err
	}
	defer func() {
		if closeErr := b.Close(); closeErr != nil && err == nil {
			err = closeErr
		}
	}()
	figures, err := m.run(ctx, r, t, b)
	if err != nil {
		if p, ok := b.(*weirProcess); ok {
			if exited, out := p.Exited(); exited {
				err = fmt.Errorf("%w (weir serve exited; its output ends:\n%s)", err, out)
			}
		}
		return err
	}
	attrs := []any{"rep", rep + 1, "measure", string(m.id), "target", string(t)}
	for _, metric := range slices.Sorted(maps.Keys(figures)) {
		k := Key{Measure: m.id, Target: t, Metric: metric}
		r.res.Samples[k] = append(r.res.Samples[k], figures[metric])
		attrs = append(attrs, string(metric), round(figures[metric]))
	}
	r.log.Info("measured", attrs...)
	return nil
}

// round keeps three significant decimals for log lines.
func round(v float64) string { return fmt.Sprintf("%.4g", v) }
