package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/weirmq/weir/internal/cli"
)

// topicsCommands is the table of `weir topics` commands, in the order the
// usage lists them.
var topicsCommands = []cli.Command{
	{Name: "create", Summary: "create a topic: --topic T [--partitions N] [--replication-factor R] [--config k=v ...]", Run: runTopicsCreate},
	{Name: "list", Summary: "print the topics' names, one a line, sorted (--format json: with partitions, replication factor, id)", Run: runTopicsList},
	{Name: "describe", Summary: "print topics and partitions as kafka-topics.sh --describe, with start offsets, high watermarks and every config's value and source", Run: runTopicsDescribe},
	{Name: "add-partitions", Summary: "grow a topic: --topic T --partitions TOTAL (as kafka-topics.sh --alter) or --num N more (as rpk)", Run: runTopicsAddPartitions},
	{Name: "delete", Summary: "delete a topic: --topic T", Run: runTopicsDelete},
	{Name: "alter-config", Summary: "set (--config k=v) or remove (--delete-config k) topic config overrides", Run: runTopicsAlterConfig},
}

// runTopics is `weir topics <command>`: topic administration through any
// Kafka-compatible broker, with franz-go's admin client.
func runTopics(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cli.Dispatch(ctx, "topics", topicsCommands, args, stdout, stderr)
}

// runTopicsCreate is `weir topics create`. It prints "Created topic T." as
// kafka-topics.sh does.
func runTopicsCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const name = "topics create"
	fs := cli.NewFlagSet(name, "--topic T [--partitions N] [--replication-factor R] [--config key=value ...] [flags]", stderr)
	conn := cli.AddConnFlags(fs)
	topic := fs.String("topic", "", "name of the topic to create (required)")
	partitions := fs.Int("partitions", -1, "number of partitions; -1: the broker's num.partitions")
	replication := fs.Int("replication-factor", -1, "replicas of each partition; -1: the broker's default.replication.factor")
	var configs configFlag
	fs.Var(&configs, "config", "a topic config override `key=value`; repeat for several")
	ifNotExists := fs.Bool("if-not-exists", false, "succeed without a change when the topic exists")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	switch {
	case *topic == "":
		return fs.UsageError(errors.New("--topic is required"))
	case *partitions != -1 && (*partitions < 1 || *partitions > math.MaxInt32):
		return fs.UsageError(fmt.Errorf("--partitions %d, want at least 1 (or -1)", *partitions))
	case *replication != -1 && (*replication < 1 || *replication > math.MaxInt16):
		return fs.UsageError(fmt.Errorf("--replication-factor %d, want 1 to %d (or -1)", *replication, math.MaxInt16))
	}
	adm, ctx, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
	defer adm.Close()
	resp, err := adm.CreateTopic(ctx, int32(*partitions), int16(*replication), configs.values(), *topic)
	switch {
	case errors.Is(err, kerr.TopicAlreadyExists) && *ifNotExists:
		return nil
	case err != nil:
		return adm.Explain(ctx, fmt.Sprintf("create topic %q", *topic), cli.WithBrokerMessage(err, resp.ErrMessage))
	}
	return writeLine(stdout, "Created topic %s.", *topic)
}

// runTopicsList is `weir topics list`.
func runTopicsList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const name = "topics list"
	fs := cli.NewFlagSet(name, "[--internal] [flags]", stderr)
	conn := cli.AddConnFlags(fs)
	internal := fs.Bool("internal", false, "include internal topics (__consumer_offsets, ...)")
	out := cli.AddFormatFlag(fs)
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	adm, ctx, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
	defer adm.Close()
	topics, err := adm.ListTopicsWithInternal(ctx)
	if err != nil {
		return adm.Explain(ctx, "list topics", err)
	}
	names := topicNames(topics, *internal)
	summaries := make([]topicSummary, 0, len(names))
	for _, t := range names {
		summaries = append(summaries, newTopicSummary(topics[t]))
	}
	return out.Write(stdout, summaries, func(w io.Writer) error {
		for _, t := range names {
			if err := writeLine(w, "%s", t); err != nil {
				return err
			}
		}
		return nil
	})
}

// topicNames returns the sorted names of topics, without the internal ones
// unless internal is set.
func topicNames(topics kadm.TopicDetails, internal bool) []string {
	var names []string
	for _, t := range topics.Names() {
		if internal || !topics[t].IsInternal {
			names = append(names, t)
		}
	}
	return names
}

// runTopicsDescribe is `weir topics describe`.
func runTopicsDescribe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const name = "topics describe"
	fs := cli.NewFlagSet(name, "[--topic T] [--internal] [flags]", stderr)
	conn := cli.AddConnFlags(fs)
	topic := fs.String("topic", "", "the topic to describe; all topics when not given")
	internal := fs.Bool("internal", false, "with no --topic, include internal topics")
	out := cli.AddFormatFlag(fs)
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	adm, ctx, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
	defer adm.Close()
	topics, err := describeTopics(ctx, adm, *topic, *internal)
	if err != nil {
		return err
	}
	if topics == nil {
		topics = []topicView{}
	}
	return out.Write(stdout, topics, func(w io.Writer) error {
		for _, t := range topics {
			if err := t.writeText(w); err != nil {
				return err
			}
		}
		return nil
	})
}

// runTopicsDelete is `weir topics delete`. Like kafka-topics.sh it prints
// nothing.
func runTopicsDelete(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const name = "topics delete"
	fs := cli.NewFlagSet(name, "--topic T [flags]", stderr)
	conn := cli.AddConnFlags(fs)
	topic := fs.String("topic", "", "name of the topic to delete (required)")
	ifExists := fs.Bool("if-exists", false, "succeed without a change when the topic does not exist")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	if *topic == "" {
		return fs.UsageError(errors.New("--topic is required"))
	}
	adm, ctx, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
	defer adm.Close()
	resp, err := adm.DeleteTopic(ctx, *topic)
	switch {
	case errors.Is(err, kerr.UnknownTopicOrPartition) && *ifExists:
		return nil
	case err != nil:
		return adm.Explain(ctx, fmt.Sprintf("delete topic %q", *topic), cli.WithBrokerMessage(err, resp.ErrMessage))
	}
	return nil
}

// runTopicsAlterConfig is `weir topics alter-config`, an incremental alter
// (IncrementalAlterConfigs). It prints "Completed updating config for
// topic T." as kafka-configs.sh does.
func runTopicsAlterConfig(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const name = "topics alter-config"
	fs := cli.NewFlagSet(name, "--topic T [--config key=value ...] [--delete-config key ...] [flags]", stderr)
	conn := cli.AddConnFlags(fs)
	topic := fs.String("topic", "", "name of the topic to alter (required)")
	var set configFlag
	fs.Var(&set, "config", "set the override `key=value`; repeat for several")
	var del deleteConfigFlag
	fs.Var(&del, "delete-config", "remove the override of `key`, back to the default; repeat for several")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	alters, err := alterations(set, del)
	switch {
	case *topic == "":
		err = errors.New("--topic is required")
	case err == nil && len(alters) == 0:
		err = errors.New("nothing to alter: give --config or --delete-config")
	}
	if err != nil {
		return fs.UsageError(err)
	}
	adm, ctx, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
	defer adm.Close()
	what := fmt.Sprintf("alter configs of topic %q", *topic)
	resps, err := adm.AlterTopicConfigs(ctx, alters, *topic)
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
	return writeLine(stdout, "Completed updating config for topic %s.", *topic)
}

// writeLine writes one formatted line to w.
func writeLine(w io.Writer, format string, args ...any) error {
	if _, err := fmt.Fprintf(w, format+"\n", args...); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
