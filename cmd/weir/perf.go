package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/weirmq/weir/bench/perf"
	"github.com/weirmq/weir/internal/cli"
)

// perfCommands is the table of `weir perf` commands.
var perfCommands = []cli.Command{
	{Name: "produce", Summary: "send records and print kafka-producer-perf-test.sh's progress and summary lines", Run: runPerfProduce},
	{Name: "consume", Summary: "read records, print progress lines and kafka-consumer-perf-test.sh's summary", Run: runPerfConsume},
}

// runPerf is `weir perf <produce|consume>`: load tools for any
// Kafka-compatible broker; see package perf.
func runPerf(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cli.Dispatch(ctx, "perf", perfCommands, args, stdout, stderr)
}

// runPerfProduce is `weir perf produce`. It prints a progress line every
// --reporting-interval and Kafka's summary line at the end, also when some
// records failed or the run was interrupted (the summary counts the
// acknowledged ones).
func runPerfProduce(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parsePerfProduceFlags(args, stderr)
	if err != nil {
		return err
	}
	res, err := perf.RunProducer(ctx, cfg, stdout)
	if res.Latency != nil { // the run started
		if werr := writeLine(stdout, "%s", res.Summary()); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return fmt.Errorf("produce: %w", perfError(ctx, err, res.Records, cfg.Records, "sent"))
	}
	return nil
}

// runPerfConsume is `weir perf consume`. It prints a progress line every
// --reporting-interval while records come, then Kafka's header (unless
// --hide-header) and summary line. When the records stop coming before
// --records, or the run is interrupted (Ctrl-C), it prints the summary of
// what came and fails.
func runPerfConsume(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, hideHeader, err := parsePerfConsumeFlags(args, stderr)
	if err != nil {
		return err
	}
	res, err := perf.RunConsumer(ctx, cfg, stdout)
	if !res.Start.IsZero() { // the run started
		if werr := writeConsumerSummary(stdout, res, hideHeader); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return fmt.Errorf("consume: %w", perfError(ctx, err, res.Records, cfg.Records, "consumed"))
	}
	return nil
}

// writeConsumerSummary prints the header, unless hidden, and the summary.
// Kafka's tool prints the header first; weir prints it after its progress
// lines, right above the line it names the columns of.
func writeConsumerSummary(stdout io.Writer, res perf.ConsumerResult, hideHeader bool) error {
	if !hideHeader {
		if err := writeLine(stdout, "%s", perf.ConsumerHeader); err != nil {
			return err
		}
	}
	return writeLine(stdout, "%s", res.Summary())
}

// perfError puts the error of a run in weir's words: an interrupt says how
// far the run got, a missing topic how to create it, a client error what
// to check.
func perfError(ctx context.Context, err error, done, want int64, verb string) error {
	var missing *perf.MissingTopicError
	switch {
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return fmt.Errorf("interrupted after %d of %d records %s: %w", done, want, verb, err)
	case errors.As(err, &missing):
		return fmt.Errorf("%w; create it with 'weir topics create --topic %s'", err, missing.Topic)
	}
	return cli.Explain(err)
}
