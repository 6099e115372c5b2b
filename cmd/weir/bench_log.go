package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/weirmq/weir/bench/logbench"
	"github.com/weirmq/weir/internal/cli"
)

// runBenchLog is `weir bench log`: see package logbench. It prints the
// ready line, a progress line every --reporting-interval, the synced lines
// under --report-synced, and a summary line. Its data goes to a new
// temporary directory, or to --dir, and is removed when the run ends
// (Ctrl-C included) unless --keep.
func runBenchLog(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, keep, err := parseBenchLogFlags(args, stderr)
	if err != nil {
		return err
	}
	dir, err := prepareBenchDir(cfg.Dir, keep)
	if err != nil {
		return err
	}
	cfg.Dir = dir.path
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	res, err := logbench.Run(ctx, cfg, stdout)
	if err == nil {
		if _, werr := fmt.Fprintln(stdout, res.String()); werr != nil {
			err = fmt.Errorf("write summary: %w", werr)
		}
	}
	if derr := dir.finish(); derr != nil {
		err = errors.Join(err, derr)
	}
	if keep && dir.temporary {
		fmt.Fprintf(stderr, "weir bench log: the data is kept in %s\n", dir.path)
	}
	return err
}

// parseBenchLogFlags reads the flags of `weir bench log` into a checked
// configuration (its Dir empty for a temporary directory) and --keep.
func parseBenchLogFlags(args []string, stderr io.Writer) (logbench.Config, bool, error) {
	cfg := logbench.DefaultConfig()
	fs := cli.NewFlagSet("bench log", "[--dir DIR [--keep]] [flags]", stderr)
	fs.StringVar(&cfg.Dir, "dir", "", "log directory to append to; default a new temporary one. Without --keep it must be new or empty")
	keep := fs.Bool("keep", false, "keep the data when the run ends (default: remove it); with --keep, --dir may hold earlier runs' data, which is recovered and appended to")
	fs.IntVar(&cfg.Partitions, "partitions", cfg.Partitions, "number of partition logs")
	fs.IntVar(&cfg.Writers, "writers", cfg.Writers, "concurrent appenders; writer w appends to partition w mod partitions")
	fs.IntVar(&cfg.RecordSize, "record-size", cfg.RecordSize, "bytes of each record's value")
	fs.IntVar(&cfg.BatchBytes, "batch-bytes", cfg.BatchBytes, "bytes of values per batch: records per batch = batch-bytes/record-size")
	fs.BoolVar(&cfg.Fsync, "fsync", false, "group commit (flush.messages=1): each writer waits until its append is fsynced")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long to run; with --batches and no --duration, no time bound")
	fs.Int64Var(&cfg.Batches, "batches", 0, "stop after this many batches in total (0: no count bound)")
	fs.Int64Var(&cfg.SegmentBytes, "segment-bytes", cfg.SegmentBytes, "segment.bytes of every partition")
	fs.BoolVar(&cfg.ReportSynced, "report-synced", false, "print 'synced <partition> <firstOffset> <lastOffset> <writer> <seq>' once each append is durable (needs --fsync)")
	fs.Var(millisFlag{&cfg.ReportInterval}, "reporting-interval", "how often to print a progress line: a `duration` (5s) or milliseconds; 0: never")
	fs.Int64Var(&cfg.Run, "run", 0, "run id written into every record key, to tell runs on one directory apart")
	if err := fs.ParseNoArgs(args); err != nil {
		return cfg, false, err
	}
	if cfg.Batches > 0 && !fs.Changed("duration") {
		cfg.Duration = 0
	}
	check := cfg
	if check.Dir == "" {
		check.Dir = "(temporary)" // Validate wants one; prepareBenchDir makes it
	}
	if err := check.Validate(); err != nil {
		return cfg, false, fs.UsageError(err)
	}
	if cfg.Dir != "" && !*keep {
		if err := checkEmptyDir(cfg.Dir); err != nil {
			return cfg, false, fs.UsageError(err)
		}
	}
	return cfg, *keep, nil
}

// checkEmptyDir refuses a --dir that holds anything, since a run without
// --keep removes its data afterwards and would take the rest with it.
func checkEmptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--dir %s: %w", dir, err)
	case len(entries) > 0:
		return fmt.Errorf("--dir %s is not empty, and the run removes its data when it ends: add --keep to append to it and keep it, or name a new or empty directory", dir)
	}
	return nil
}

// benchDir is the data directory of one `weir bench log` run and what to
// remove when the run ends.
type benchDir struct {
	path string
	// temporary means the run made the directory under os.TempDir.
	temporary bool
	// removeDir and removeContents say what finish deletes: the directory
	// itself when the run created it, only its contents when it was there
	// (empty) before, nothing under --keep.
	removeDir, removeContents bool
}

// prepareBenchDir returns the run's directory: dir, or a new temporary one
// when dir is empty.
func prepareBenchDir(dir string, keep bool) (benchDir, error) {
	if dir == "" {
		path, err := os.MkdirTemp("", "weir-bench-log-")
		if err != nil {
			return benchDir{}, fmt.Errorf("temporary data directory: %w", err)
		}
		return benchDir{path: path, temporary: true, removeDir: !keep}, nil
	}
	_, err := os.Stat(dir)
	existed := err == nil
	return benchDir{path: dir, removeDir: !keep && !existed, removeContents: !keep && existed}, nil
}

// finish removes what the run wrote, unless it is to be kept.
func (d benchDir) finish() error {
	switch {
	case d.removeDir:
		if err := os.RemoveAll(d.path); err != nil {
			return fmt.Errorf("remove the data directory: %w", err)
		}
	case d.removeContents:
		entries, err := os.ReadDir(d.path)
		if err != nil {
			return fmt.Errorf("remove the data: %w", err)
		}
		for _, e := range entries {
			if err := os.RemoveAll(filepath.Join(d.path, e.Name())); err != nil {
				return fmt.Errorf("remove the data: %w", err)
			}
		}
	}
	return nil
}
