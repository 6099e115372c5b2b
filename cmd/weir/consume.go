package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirmq/weir/internal/cli"
)

// consumeFlags are the parsed flags of `weir consume`.
type consumeFlags struct {
	conn          *cli.Conn
	topics        []string
	offset        offsetSpec
	num           int
	partitions    []int32 // nil: every partition
	group         string
	printer       *recordPrinter
	readCommitted bool
}

// runConsume is `weir consume`: it prints records of topics, as `rpk topic
// consume` does, until --num records, the end -o names, or an interrupt
// (exit status 0). With --group it consumes as a member of the group and
// commits the offsets of the records it printed.
func runConsume(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseConsumeFlags(args, stderr)
	if err != nil {
		return err
	}
	opts, ends, err := f.plan(ctx)
	if err != nil || opts == nil {
		return err // nil opts: nothing between the start and the end
	}
	cl, err := f.conn.Client(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	loopErr := consumeLoop(ctx, cl, f, ends, stdout, stderr)
	if f.group != "" {
		// Commit what was printed before leaving the group; an interrupt
		// must not lose the commit, so it has its own bound.
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), f.conn.Timeout())
		defer ccancel()
		if err := cl.CommitMarkedOffsets(cctx); err != nil && loopErr == nil {
			loopErr = fmt.Errorf("commit the offsets of group %q: %w", f.group, cli.Explain(err))
		}
		if err := cl.LeaveGroupContext(cctx); err != nil && loopErr == nil {
			loopErr = fmt.Errorf("leave group %q: %w", f.group, cli.Explain(err))
		}
	}
	return loopErr
}

// consumeLoop polls and prints records until f.num are printed, every
// partition of ends (when not nil) reached its end offset, or ctx ends.
// With a group, each printed record is marked for commit.
func consumeLoop(ctx context.Context, cl *kgo.Client, f *consumeFlags, ends map[string]map[int32]int64, stdout, stderr io.Writer) error {
	out := bufio.NewWriter(stdout)
	var (
		buf     []byte
		printed int
		marks   []*kgo.Record
	)
	done := func() bool { return f.num > 0 && printed >= f.num || ends != nil && len(ends) == 0 }
	for !done() {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil || fetches.IsClientClosed() {
			return nil
		}
		fetches.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.Canceled) {
				fmt.Fprintf(stderr, "weir consume: topic %s partition %d: %v\n", t, p, cli.Explain(err))
			}
		})
		marks = marks[:0]
		fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
			for _, r := range fp.Records {
				if done() {
					return
				}
				end, bounded := ends[r.Topic][r.Partition]
				switch {
				case ends != nil && !bounded:
					return // ended before: what the client still had is not wanted
				case bounded && r.Offset >= end:
					endPartition(cl, ends, r.Topic, r.Partition)
					return
				}
				if !r.Attrs.IsControl() {
					buf = f.printer.appendRecord(buf[:0], &fp.FetchPartition, r)
					out.Write(buf) // errors are sticky; checked at Flush
					printed++
				}
				marks = append(marks, r)
				if bounded && r.Offset >= end-1 {
					endPartition(cl, ends, r.Topic, r.Partition)
					return
				}
			}
		})
		if err := out.Flush(); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		if f.group != "" {
			cl.MarkCommitRecords(marks...)
		}
	}
	return nil
}

// endPartition stops fetching a partition that reached its end offset.
func endPartition(cl *kgo.Client, ends map[string]map[int32]int64, topic string, partition int32) {
	cl.PauseFetchPartitions(map[string][]int32{topic: {partition}})
	delete(ends[topic], partition)
	if len(ends[topic]) == 0 {
		delete(ends, topic)
	}
}

// plan checks the topics and returns the consumer's client options and,
// when -o names an end, the offset each partition ends before (nil
// otherwise). No options and no error mean there is nothing to consume.
func (f *consumeFlags) plan(ctx context.Context) ([]kgo.Opt, map[string]map[int32]int64, error) {
	adm, ctx, err := f.conn.Admin(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer adm.Close()
	if err := f.checkTopics(ctx, adm); err != nil {
		return nil, nil, err
	}
	opts := []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadUncommitted())}
	if f.readCommitted {
		opts = []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadCommitted())}
	}
	switch {
	case f.offset.hasUntil():
		starts, ends, err := f.resolveRanges(ctx, adm)
		if err != nil || len(starts) == 0 {
			return nil, nil, err
		}
		// A control record (a transaction marker) may be the last offset
		// before an end; the client must return it for the end to be seen.
		return append(opts, kgo.ConsumePartitions(starts), kgo.KeepControlRecords()), ends, nil
	case f.group != "":
		return append(opts, kgo.ConsumerGroup(f.group), kgo.ConsumeTopics(f.topics...),
			kgo.ConsumeResetOffset(f.offset.startOffset()), kgo.AutoCommitMarks()), nil, nil
	case f.partitions != nil:
		starts := make(map[string]map[int32]kgo.Offset)
		for _, t := range f.topics {
			starts[t] = make(map[int32]kgo.Offset)
			for _, p := range f.partitions {
				starts[t][p] = f.offset.startOffset()
			}
		}
		return append(opts, kgo.ConsumePartitions(starts)), nil, nil
	}
	return append(opts, kgo.ConsumeTopics(f.topics...), kgo.ConsumeResetOffset(f.offset.startOffset())), nil, nil
}

// checkTopics fails unless every topic exists and has every partition
// --partitions names: a consumer of a missing topic would wait in silence.
func (f *consumeFlags) checkTopics(ctx context.Context, adm *cli.Admin) error {
	details, err := adm.ListTopics(ctx, f.topics...)
	if err != nil {
		return adm.Explain(ctx, "describe topics", err)
	}
	for _, t := range f.topics {
		d, ok := details[t]
		if !ok || d.Err != nil {
			err := d.Err
			if err == nil {
				err = errors.New("not in the broker's metadata")
			}
			return fmt.Errorf("topic %q: %w", t, cli.Explain(err))
		}
		for _, p := range f.partitions {
			if _, ok := d.Partitions[p]; !ok {
				return fmt.Errorf("topic %q has no partition %d (it has %d, from 0)", t, p, len(d.Partitions))
			}
		}
	}
	return nil
}

// resolveRanges lists the offsets -o needs and returns, per partition
// with something to consume, where to start and the offset to end before.
func (f *consumeFlags) resolveRanges(ctx context.Context, adm *cli.Admin) (map[string]map[int32]kgo.Offset, map[string]map[int32]int64, error) {
	list := func(what string, fn func() (kadm.ListedOffsets, error)) (kadm.ListedOffsets, error) {
		l, err := fn()
		if err == nil {
			err = l.Error()
		}
		if err != nil {
			return nil, adm.Explain(ctx, "list "+what+" offsets", err)
		}
		return l, nil
	}
	logStarts, err := list("start", func() (kadm.ListedOffsets, error) { return adm.ListStartOffsets(ctx, f.topics...) })
	if err != nil {
		return nil, nil, err
	}
	endsFn := adm.ListEndOffsets
	if f.readCommitted {
		endsFn = adm.ListCommittedOffsets // the last stable offset
	}
	hwms, err := list("end", func() (kadm.ListedOffsets, error) { return endsFn(ctx, f.topics...) })
	if err != nil {
		return nil, nil, err
	}
	atTime := func(use bool, ms int64) (kadm.ListedOffsets, error) {
		if !use {
			return nil, nil
		}
		return list("time", func() (kadm.ListedOffsets, error) { return adm.ListOffsetsAfterMilli(ctx, ms, f.topics...) })
	}
	fromListed, err := atTime(f.offset.from == fromTime, f.offset.fromN)
	if err != nil {
		return nil, nil, err
	}
	untilListed, err := atTime(f.offset.until == untilTime, f.offset.untilN)
	if err != nil {
		return nil, nil, err
	}
	starts := make(map[string]map[int32]kgo.Offset)
	stops := make(map[string]map[int32]int64)
	hwms.Each(func(h kadm.ListedOffset) {
		if f.partitions != nil && !slices.Contains(f.partitions, h.Partition) {
			return
		}
		ls, _ := logStarts.Lookup(h.Topic, h.Partition)
		fl, _ := fromListed.Lookup(h.Topic, h.Partition)
		ul, _ := untilListed.Lookup(h.Topic, h.Partition)
		from, until := f.offset.bounds(ls.Offset, h.Offset, fl.Offset, ul.Offset)
		if until <= from {
			return
		}
		if starts[h.Topic] == nil {
			starts[h.Topic], stops[h.Topic] = make(map[int32]kgo.Offset), make(map[int32]int64)
		}
		starts[h.Topic][h.Partition] = kgo.NewOffset().At(from)
		stops[h.Topic][h.Partition] = until
	})
	return starts, stops, nil
}

// parseConsumeFlags parses the command line of `weir consume`.
func parseConsumeFlags(args []string, stderr io.Writer) (*consumeFlags, error) {
	fs := cli.NewFlagSet("consume", "[--topic] TOPIC... [-o OFFSET] [-n COUNT] [-p PARTITION[,P...]] [-g GROUP] [-f FORMAT] [flags]", stderr)
	f := &consumeFlags{conn: cli.AddConnFlags(fs)}
	topic := fs.String("topic", "", "the `TOPIC` to consume (or the arguments, several topics)")
	fs.Alias("t", "topic")
	offset := fs.String("offset", "start", "`OFFSET` to start at and optionally stop before: start, end, N, +N, -N, FROM:UNTIL, @TIME, @T1:T2 (see docs/tools.md); with --group, for partitions the group has no offset for")
	fs.Alias("o", "offset")
	fs.IntVar(&f.num, "num", 0, "stop after `COUNT` records; 0: until interrupted or the end -o names")
	fs.Alias("n", "num")
	fs.Alias("max-messages", "num")
	partitions := fs.String("partitions", "", "consume only these comma-separated partitions `P[,P...]` (not with --group)")
	fs.Alias("p", "partitions")
	fs.Alias("partition", "partitions")
	fs.StringVar(&f.group, "group", "", "consume as a member of this `GROUP` and commit the offsets of the records printed")
	fs.Alias("g", "group")
	format := fs.String("format", "text", "how to print records, `FORMAT`: text (the value and a newline), json (one object a line) or a layout in rpk's verbs, e.g. '%k %v %h{%k=%v,}\\n' (see docs/tools.md)")
	fs.Alias("f", "format")
	fromBeginning := fs.Bool("from-beginning", false, "kafka-console-consumer.sh's flag: the same as -o start, the default here")
	fs.BoolVar(&f.readCommitted, "read-committed", false, "read only committed transactional records (isolation.level read_committed)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *topic != "" {
		f.topics = append(f.topics, *topic)
	}
	for _, t := range fs.Args() {
		if !slices.Contains(f.topics, t) {
			f.topics = append(f.topics, t)
		}
	}
	if len(f.topics) == 0 {
		return nil, fs.UsageError(errors.New("a topic is required: --topic T, or topics as arguments"))
	}
	if *fromBeginning && fs.Changed("offset") {
		return nil, fs.UsageError(errors.New("--from-beginning and --offset exclude each other"))
	}
	var err error
	if f.offset, err = parseOffsetSpec(*offset, time.Now()); err != nil {
		return nil, fs.UsageError(fmt.Errorf("--offset %q: %w", *offset, err))
	}
	if f.num < 0 {
		return nil, fs.UsageError(fmt.Errorf("--num %d, want 0 or more", f.num))
	}
	if fs.Changed("partitions") {
		if f.partitions, err = parsePartitions(*partitions); err != nil {
			return nil, fs.UsageError(fmt.Errorf("--partitions %q: %w", *partitions, err))
		}
	}
	switch {
	case f.group != "" && f.partitions != nil:
		return nil, fs.UsageError(errors.New("--partitions and --group exclude each other: a group assigns partitions to its members"))
	case f.group != "" && f.offset.hasUntil():
		return nil, fs.UsageError(fmt.Errorf("--offset %q ends, which a group member cannot: the group assigns its partitions", *offset))
	}
	if f.printer, err = newRecordPrinter(*format); err != nil {
		return nil, fs.UsageError(fmt.Errorf("--format: %w", err))
	}
	return f, nil
}

// parsePartitions parses "0,2,5" into distinct partition numbers.
func parsePartitions(s string) ([]int32, error) {
	ps := []int32{}
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(part), 10, 32)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a partition number", part)
		}
		if !slices.Contains(ps, int32(n)) {
			ps = append(ps, int32(n))
		}
	}
	return ps, nil
}
