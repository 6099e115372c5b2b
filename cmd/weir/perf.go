package main

import (
	"cmp"
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
	{Name: "consume", Summary: "read records and print kafka-consumer-perf-test.sh's summary", Run: runPerfConsume},
}

// runPerf is `weir perf <produce|consume>`: load tools for any
// Kafka-compatible broker; see package perf.
func runPerf(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cli.Dispatch(ctx, "perf", perfCommands, args, stdout, stderr)
}

// runPerfProduce is `weir perf produce`. It prints a progress line every
// --reporting-interval and Kafka's summary line at the end, also when some
// records failed (the summary counts the acknowledged ones).
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
		return fmt.Errorf("produce: %w", err)
	}
	return nil
}

// parsePerfProduceFlags reads the flags of `weir perf produce` into a
// checked configuration.
func parsePerfProduceFlags(args []string, stderr io.Writer) (perf.ProducerConfig, error) {
	const name = "perf produce"
	cfg := perf.DefaultProducerConfig()
	fs := cli.NewFlagSet(name, "--topic T --records N [flags]", stderr)
	conn := cli.AddBrokersFlag(fs)
	fs.StringVar(&cfg.Topic, "topic", "", "topic to produce to (required; it must exist)")
	fs.Int64Var(&cfg.Records, "records", 0, "number of records to send (required)")
	fs.IntVar(&cfg.RecordSize, "record-size", cfg.RecordSize, "bytes of each record's value (random letters; records have no key)")
	acks := fs.String("acks", cfg.Acks.String(), "acknowledgements to wait for: 0, 1, -1 or all")
	fs.Float64Var(&cfg.Throughput, "throughput", cfg.Throughput, "cap on records per second; -1: no cap")
	fs.Var(millisFlag{&cfg.Linger}, "linger", "how long a batch waits for more records: a `duration` (5ms) or milliseconds (5)")
	batchBytes := fs.Int("batch-bytes", int(cfg.BatchBytes), "largest record batch in bytes")
	compression := fs.String("compression", string(cfg.Compression), "batch codec: none, gzip, snappy, lz4 or zstd")
	fs.BoolVar(&cfg.Idempotent, "idempotent", false, "idempotent producer; by default on exactly when --acks is all, as the Java client")
	fs.IntVar(&cfg.MaxInFlight, "max-in-flight", cfg.MaxInFlight, "produce requests in flight per broker when not idempotent")
	fs.Var(millisFlag{&cfg.ReportInterval}, "reporting-interval", "how often to print a progress line: a `duration` (5s) or milliseconds; 0: never")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if err := fs.NoArgs(); err != nil {
		return cfg, err
	}
	err := perfCommonFlags(fs, conn, &cfg.Brokers)
	if err == nil {
		cfg.Acks, err = perf.ParseAcks(*acks)
	}
	if err == nil {
		cfg.Compression, err = perf.ParseCompression(*compression)
	}
	if err == nil && (*batchBytes < 1 || *batchBytes > 1<<30) {
		err = fmt.Errorf("--batch-bytes %d, want 1 to %d", *batchBytes, 1<<30)
	}
	if err != nil {
		return cfg, fs.UsageError(err)
	}
	cfg.BatchBytes = int32(*batchBytes)
	if !fs.Changed("idempotent") {
		cfg.Idempotent = cfg.Acks == perf.AcksAll
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fs.UsageError(err)
	}
	return cfg, nil
}

// runPerfConsume is `weir perf consume`. It prints Kafka's header (unless
// --hide-header) and summary line; when the records stop coming before
// --records, it prints the summary of what came and fails.
func runPerfConsume(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, hideHeader, err := parsePerfConsumeFlags(args, stderr)
	if err != nil {
		return err
	}
	res, err := perf.RunConsumer(ctx, cfg)
	if err == nil || errors.Is(err, perf.ErrTimeout) {
		err = cmp.Or(writeConsumerSummary(stdout, res, hideHeader), err)
	}
	if err != nil {
		return fmt.Errorf("consume: %w", err)
	}
	return nil
}

// writeConsumerSummary prints the header, unless hidden, and the summary.
func writeConsumerSummary(stdout io.Writer, res perf.ConsumerResult, hideHeader bool) error {
	if !hideHeader {
		if err := writeLine(stdout, "%s", perf.ConsumerHeader); err != nil {
			return err
		}
	}
	return writeLine(stdout, "%s", res.Summary())
}

// parsePerfConsumeFlags reads the flags of `weir perf consume` into a
// checked configuration, and whether to leave out the header line.
func parsePerfConsumeFlags(args []string, stderr io.Writer) (perf.ConsumerConfig, bool, error) {
	const name = "perf consume"
	cfg := perf.DefaultConsumerConfig()
	fs := cli.NewFlagSet(name, "--topic T --records N [flags]", stderr)
	conn := cli.AddBrokersFlag(fs)
	fs.StringVar(&cfg.Topic, "topic", "", "topic to consume (required; it must exist)")
	fs.Int64Var(&cfg.Records, "records", 0, "number of records to consume (required)")
	fs.Var(millisFlag{&cfg.Timeout}, "timeout", "longest wait for the next records: a `duration` (10s) or milliseconds (10000)")
	fs.StringVar(&cfg.Group, "group", "", "consume as a member of this consumer group; default: every partition directly from its start")
	hideHeader := fs.Bool("hide-header", false, "print the summary line without the header line")
	if err := fs.Parse(args); err != nil {
		return cfg, false, err
	}
	if err := fs.NoArgs(); err != nil {
		return cfg, false, err
	}
	err := perfCommonFlags(fs, conn, &cfg.Brokers)
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		return cfg, false, fs.UsageError(err)
	}
	return cfg, *hideHeader, nil
}

// perfCommonFlags checks the required flags both commands share and sets
// the brokers.
func perfCommonFlags(fs *cli.FlagSet, conn *cli.Conn, seeds *[]string) error {
	switch {
	case !fs.Changed("topic"):
		return errors.New("--topic is required")
	case !fs.Changed("records"):
		return errors.New("--records is required")
	}
	s, err := conn.Seeds()
	if err != nil {
		return err
	}
	*seeds = s
	return nil
}
