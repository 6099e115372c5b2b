package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// benchRun is what a broker-level benchmark reports about its run.
type benchRun struct {
	name     string // the benchmark's name after `weir bench`
	args     []string
	started  time.Time
	elapsed  time.Duration
	weirPath string
	// markdown writes the results.
	markdown func(io.Writer) error
}

// writeBenchReport prints the run's Markdown report, headed by the command
// and the run's circumstances, to stdout and, when out is set, to out.
func writeBenchReport(stdout io.Writer, out string, r benchRun) error {
	var report bytes.Buffer
	fmt.Fprintf(&report, "Command: `weir bench %s %s`\n\n", r.name, strings.Join(r.args, " "))
	fmt.Fprintf(&report, "Run at %s for %s; %s, GOMAXPROCS %d; weir %s.\n\n",
		r.started.UTC().Format(time.RFC3339), r.elapsed.Round(time.Second), runtime.Version(),
		runtime.GOMAXPROCS(0), weirLabel(r.weirPath))
	if err := r.markdown(&report); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if _, err := stdout.Write(report.Bytes()); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if out != "" {
		if err := os.WriteFile(out, report.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	return nil
}

// weirLabel names the measured weir binary in the report.
func weirLabel(path string) string {
	if path == "" {
		return "not measured (--no-weir)"
	}
	return path
}
