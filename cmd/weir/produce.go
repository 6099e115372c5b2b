package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirmq/weir/bench/perf"
	"github.com/weirmq/weir/internal/cli"
)

// runProduce is `weir produce`: it reads records from standard input and
// produces them, as `rpk topic produce` does.
func runProduce(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return produce(ctx, args, os.Stdin, stdout, stderr)
}

// produceFlags are the parsed flags of `weir produce`.
type produceFlags struct {
	conn        *cli.Conn
	topic       string
	key         []byte // nil: no fixed key
	headers     headerFlag
	partition   int32 // -1: the default partitioner
	format      string
	outFormat   string
	acks        string
	compression string
	tombstone   bool
}

// produce is `weir produce` reading from stdin. Every record read is
// handed to the client at once; at the end of the input the command waits
// until each is acknowledged or has failed, and fails if any did. An
// interrupt stops the reading; what was read is still delivered.
func produce(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	f, err := parseProduceFlags(args, stderr)
	if err != nil {
		return err
	}
	in, err := newRecordInput(stdin, f.format)
	if err != nil {
		return cli.Usagef("--format: %v", err)
	}
	in.key, in.headers, in.partition, in.tombstone = f.key, f.headers, f.partition, f.tombstone
	var printer *recordPrinter
	if f.outFormat != "" {
		if printer, err = newRecordPrinter(f.outFormat); err != nil {
			return cli.Usagef("--output-format: %v", err)
		}
	}
	opts, err := f.clientOpts()
	if err != nil {
		return err
	}
	cl, err := f.conn.Client(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()

	out := bufio.NewWriter(stdout)
	var (
		mu       sync.Mutex
		buf      []byte
		failed   int
		firstErr error
	)
	sent := 0
	readErr := readRecords(ctx, in, func(r *kgo.Record) {
		sent++
		n := sent
		// The promise gets the record back; Produce's context only bounds
		// waiting for room in the buffer.
		cl.Produce(context.WithoutCancel(ctx), r, func(r *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				if firstErr == nil {
					firstErr = fmt.Errorf("input record %d to topic %q: %w", n, r.Topic, explainProduce(err, f))
				}
				return
			}
			if printer != nil {
				// Flushed at once: a user typing records sees each land.
				buf = printer.appendRecord(buf[:0], nil, r)
				out.Write(buf)
				out.Flush() // errors are sticky; checked at the end
			}
		})
	})
	// Flush returns once every record is acknowledged or failed, which the
	// delivery timeout (--timeout) bounds.
	if err := cl.Flush(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if err := out.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	switch {
	case firstErr != nil:
		return fmt.Errorf("%d of %d records not produced; first: %w", failed, sent, firstErr)
	case readErr != nil:
		return fmt.Errorf("%w (the %d records before it were produced)", readErr, sent)
	}
	return nil
}

// readRecords reads records from in and passes each to produce, until the
// end of the input (nil), a record that does not parse (its error) or
// the end of ctx (nil: an interrupt ends the input). The input is read
// in another goroutine because a read of a terminal cannot be cancelled;
// that goroutine ends at the next record or the end of the input.
func readRecords(ctx context.Context, in *recordInput, produce func(*kgo.Record)) error {
	type result struct {
		r   *kgo.Record
		err error
	}
	results := make(chan result)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			r, err := in.next()
			select {
			case results <- result{r, err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case res := <-results:
			switch {
			case errors.Is(res.err, io.EOF):
				return nil
			case res.err != nil:
				return res.err
			}
			produce(res.r)
		}
	}
}

// explainProduce puts a produce error in weir's words. A record that was
// not acknowledged in time says how long was waited and, unless the last
// error already says why, where.
func explainProduce(err error, f *produceFlags) error {
	explained := cli.Explain(err)
	if !errors.Is(err, kgo.ErrRecordTimeout) {
		return explained
	}
	if explained.Error() != err.Error() {
		return fmt.Errorf("not acknowledged within %v (--timeout): %w", f.deliveryTimeout(), explained)
	}
	seeds, _ := f.conn.Seeds()
	return fmt.Errorf("not acknowledged within %v (is a broker running at %s? set --bootstrap-server or %s, or a longer --timeout): %w",
		f.deliveryTimeout(), strings.Join(seeds, ","), cli.BrokersEnv, err)
}

// parseProduceFlags parses the command line of `weir produce`.
func parseProduceFlags(args []string, stderr io.Writer) (*produceFlags, error) {
	fs := cli.NewFlagSet("produce", "[--topic] TOPIC [-k KEY] [-H key=value]... [-p PARTITION] [-f FORMAT] [flags] < RECORDS", stderr)
	f := &produceFlags{conn: cli.AddConnFlags(fs)}
	topic := fs.String("topic", "", "the `TOPIC` to produce to (or the argument); %t in --format overrides it")
	fs.Alias("t", "topic")
	key := fs.String("key", "", "the `KEY` of every record (one --format reads with %k wins)")
	fs.Alias("k", "key")
	fs.Var(&f.headers, "header", "a header `key=value` (or key:value) on every record; repeat for several")
	fs.Alias("H", "header")
	partition := fs.Int("partition", -1, "produce every record to this `PARTITION` (and let %p in --format choose one); -1: the default partitioner, murmur2 of the key as Kafka's")
	fs.Alias("p", "partition")
	fs.StringVar(&f.format, "format", defaultProduceFormat, "how to read records, `FORMAT` in rpk's verbs: '%k %v\\n' is a key, a space and the value on each line (see docs/tools.md)")
	fs.Alias("f", "format")
	fs.StringVar(&f.outFormat, "output-format", defaultProducedFormat, "`FORMAT` to print for each record produced, in rpk's verbs (%p partition, %o offset, %d timestamp, ...); '' prints nothing")
	fs.Alias("o", "output-format")
	fs.StringVar(&f.acks, "acks", "all", "`ACKS` to wait for: all (also -1; idempotent), 1 or 0")
	fs.StringVar(&f.compression, "compression", "snappy", "batch `CODEC`: none, gzip, snappy, lz4 or zstd")
	fs.Alias("z", "compression")
	fs.BoolVar(&f.tombstone, "tombstone", false, "produce an empty value as a tombstone (null value)")
	fs.Alias("Z", "tombstone")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	f.topic = *topic
	switch rest := fs.Args(); {
	case len(rest) > 1:
		return nil, fs.UsageError(fmt.Errorf("one topic to produce to, got %s", strings.Join(rest, " ")))
	case len(rest) == 1 && f.topic != "" && rest[0] != f.topic:
		return nil, fs.UsageError(fmt.Errorf("two topics: --topic %s and %s", f.topic, rest[0]))
	case len(rest) == 1:
		f.topic = rest[0]
	}
	if f.topic == "" && !hasVerb(f.format, 't') {
		return nil, fs.UsageError(errors.New("a topic is required: --topic T, or T as the argument"))
	}
	if fs.Changed("key") {
		f.key = []byte(*key)
	}
	switch {
	case *partition < -1 || *partition > math.MaxInt32:
		return nil, fs.UsageError(fmt.Errorf("--partition %d, want 0 or more (or -1)", *partition))
	case *partition == -1 && hasVerb(f.format, 'p'):
		return nil, fs.UsageError(errors.New("%p in --format needs --partition, which picks the manual partitioner"))
	}
	f.partition = int32(*partition)
	if _, err := ackOpts(f.acks); err != nil {
		return nil, fs.UsageError(err)
	}
	if _, err := compressionOpt(f.compression); err != nil {
		return nil, fs.UsageError(err)
	}
	return f, nil
}

// clientOpts are the producer's client options. Topics are created when
// the broker auto-creates them (auto.create.topics.enable), as Kafka's
// console producer does; records that are not acknowledged within
// --timeout (at least a second) fail.
func (f *produceFlags) clientOpts() ([]kgo.Opt, error) {
	opts, err := ackOpts(f.acks)
	if err != nil {
		return nil, err
	}
	c, err := compressionOpt(f.compression)
	if err != nil {
		return nil, err
	}
	opts = append(opts, c, kgo.AllowAutoTopicCreation(), kgo.RecordDeliveryTimeout(f.deliveryTimeout()))
	if f.topic != "" {
		opts = append(opts, kgo.DefaultProduceTopic(f.topic))
	}
	if f.partition >= 0 {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	return opts, nil
}

// deliveryTimeout bounds the wait for a record's acknowledgement:
// --timeout, but at least the second the client insists on.
func (f *produceFlags) deliveryTimeout() time.Duration { return max(f.conn.Timeout(), time.Second) }

// ackOpts returns the client options of --acks, read as Kafka's clients
// read acks (perf.ParseAcks): all is idempotent (the client's and Kafka's
// default), 1 and 0 are not (idempotence needs all).
func ackOpts(s string) ([]kgo.Opt, error) {
	acks, err := perf.ParseAcks(s)
	if err != nil {
		return nil, fmt.Errorf("--%w", err)
	}
	switch acks {
	case perf.AcksLeader:
		return []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()}, nil
	case perf.AcksNone:
		return []kgo.Opt{kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite()}, nil
	}
	return []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks())}, nil
}

// compressionOpt returns the client option of --compression.
func compressionOpt(name string) (kgo.Opt, error) {
	c, err := perf.ParseCompression(name)
	if err != nil {
		return nil, fmt.Errorf("--%w", err)
	}
	return kgo.ProducerBatchCompression(c.Codec()), nil
}
