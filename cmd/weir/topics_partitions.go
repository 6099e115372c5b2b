package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/weirmq/weir/internal/cli"
)

// runTopicsAddPartitions is `weir topics add-partitions`: CreatePartitions
// to a new total, checked against the topic's current count first so a
// count that would not grow it is refused in weir's words. It prints
// "Added N partitions to topic T (now M)."; the broker places the new
// partitions' replicas.
func runTopicsAddPartitions(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("topics add-partitions", "--topic T (--partitions TOTAL | --num N) [flags]", stderr)
	conn := cli.AddConnFlags(fs)
	topic := fs.String("topic", "", "name of the topic to grow (required)")
	total := fs.Int("partitions", 0, "grow the topic to `TOTAL` partitions, more than it has (as kafka-topics.sh --alter --partitions)")
	add := fs.Int("num", 0, "add `N` partitions to the ones it has (as rpk topic add-partitions -n)")
	fs.Alias("n", "num")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	if *topic == "" {
		return fs.UsageError(errors.New("--topic is required"))
	}
	growth, err := newPartitionGrowth(*total, fs.Changed("partitions"), *add, fs.Changed("num"))
	if err != nil {
		return fs.UsageError(err)
	}
	adm, ctx, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
	defer adm.Close()
	what := fmt.Sprintf("add partitions to topic %q", *topic)
	topics, err := adm.ListTopicsWithInternal(ctx, *topic)
	if err != nil {
		return adm.Explain(ctx, what, err)
	}
	d, ok := topics[*topic]
	switch {
	case !ok:
		return fmt.Errorf("%s: the broker did not answer for it", what)
	case d.Err != nil:
		return topicError(what, d.Err)
	}
	current := len(d.Partitions)
	target, err := growth.target(*topic, current)
	if err != nil {
		return err
	}
	resps, err := adm.UpdatePartitions(ctx, target, *topic)
	if err != nil {
		return adm.Explain(ctx, what, err)
	}
	resp, err := resps.On(*topic, nil)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, cli.WithBrokerMessage(err, resp.ErrMessage))
	}
	noun := "partitions"
	if target-current == 1 {
		noun = "partition"
	}
	return writeLine(stdout, "Added %d %s to topic %s (now %d).", target-current, noun, *topic, target)
}

// partitionGrowth is what `weir topics add-partitions` asks for: a new
// total (--partitions, as kafka-topics.sh --alter --partitions) or a
// number to add (-n/--num, as rpk topic add-partitions).
type partitionGrowth struct {
	// byTotal says total was given; otherwise add was.
	byTotal    bool
	total, add int
}

// newPartitionGrowth checks the flags: exactly one of --partitions (total,
// given when totalSet) and --num (add, given when addSet), at least 1. A
// mistake is a command-line one.
func newPartitionGrowth(total int, totalSet bool, add int, addSet bool) (partitionGrowth, error) {
	switch {
	case totalSet && addSet:
		return partitionGrowth{}, errors.New("give one of --partitions (the new total) and --num (how many to add), not both")
	case !totalSet && !addSet:
		return partitionGrowth{}, errors.New("give --partitions N (the new total) or --num N (how many to add)")
	case totalSet && (total < 1 || total > math.MaxInt32):
		return partitionGrowth{}, fmt.Errorf("--partitions %d, want a total of at least 1", total)
	case addSet && (add < 1 || add > math.MaxInt32):
		return partitionGrowth{}, fmt.Errorf("--num %d, want at least 1 partition to add", add)
	}
	return partitionGrowth{byTotal: totalSet, total: total, add: add}, nil
}

// target returns the topic's new partition count given its current one,
// or an error in weir's words when that would not grow the topic.
func (g partitionGrowth) target(topic string, current int) (int, error) {
	if !g.byTotal {
		if current+g.add > math.MaxInt32 {
			return 0, fmt.Errorf("topic %q has %d partitions; adding %d would pass the limit of %d", topic, current, g.add, math.MaxInt32)
		}
		return current + g.add, nil
	}
	if g.total <= current {
		return 0, fmt.Errorf("topic %q already has %d partitions: --partitions is the new total and must be more than %d (use --num to give how many to add); partitions cannot be removed", topic, current, current)
	}
	return g.total, nil
}
