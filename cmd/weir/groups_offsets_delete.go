package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/weirmq/weir/internal/cli"
)

// deletedOffset is one row of `weir groups delete-offsets`: a partition
// (-1 when its topic could not be looked up) and why its offset was not
// deleted (nil when it was).
type deletedOffset struct {
	topic     string
	partition int32
	err       error
}

// runGroupsDeleteOffsets is `weir groups delete-offsets`: delete one
// group's committed offsets of some topics or partitions (OffsetDelete,
// KIP-496), as kafka-consumer-groups.sh --delete-offsets. The broker
// refuses a group with members that subscribe to the topic
// (GROUP_SUBSCRIBED_TO_TOPIC, per partition); a partition without a
// committed offset is deleted successfully. --format json prints the
// TOPIC PARTITION STATUS rows as JSON.
func runGroupsDeleteOffsets(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const name = "groups delete-offsets"
	fs := cli.NewFlagSet(name, "--group G --topic T[:P,P...] [--topic ...] [--format text|json] [flags]", stderr)
	conn := cli.AddConnFlags(fs)
	out := cli.AddFormatFlag(fs)
	group := fs.String("group", "", "the group whose offsets to delete (required; one group)")
	var topics topicSelections
	fs.Var(&topics, "topic", "a topic `T` (all its partitions) or T:0,1,2 whose offsets to delete (required); repeat for several")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	switch {
	case *group == "":
		return fs.UsageError(errors.New("--group is required"))
	case len(topics) == 0:
		return fs.UsageError(errors.New("--topic is required"))
	}
	adm, ctx, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
	defer adm.Close()

	set, rows, err := offsetsToDelete(ctx, adm, topics)
	if err != nil {
		return err
	}
	resps, err := adm.DeleteOffsets(ctx, *group, set)
	if err != nil {
		return deleteOffsetsGroupError(ctx, adm, *group, err)
	}
	for t, ps := range set {
		for p := range ps {
			r := deletedOffset{topic: t, partition: p}
			if got, ok := resps[t][p]; !ok {
				r.err = errors.New("the broker did not answer for it")
			} else {
				r.err = got
			}
			rows = append(rows, r)
		}
	}
	slices.SortFunc(rows, func(a, b deletedOffset) int {
		if c := strings.Compare(a.topic, b.topic); c != 0 {
			return c
		}
		return int(a.partition) - int(b.partition)
	})
	failed := 0
	for _, r := range rows {
		if r.err != nil {
			failed++
		}
	}
	err = out.Write(stdout, deletedOffsetsJSON(*group, rows), func(w io.Writer) error {
		if failed == 0 {
			if err := writeLine(w, "Request succeed for deleting offsets with topic %s group %s", topics.String(), *group); err != nil {
				return err
			}
		}
		return writeDeletedOffsets(w, rows)
	})
	if err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("the offsets of %d of %d partitions could not be deleted: see their STATUS", failed, len(rows))
	}
	return nil
}

// offsetsToDelete returns the partitions the --topic values name: those
// listed, or all a topic has. A topic that cannot be looked up is a row
// with partition -1 and the error.
func offsetsToDelete(ctx context.Context, adm *cli.Admin, topics topicSelections) (kadm.TopicsSet, []deletedOffset, error) {
	set := make(kadm.TopicsSet)
	var whole []string
	for _, s := range topics {
		if s.partitions == nil {
			whole = append(whole, s.topic)
			continue
		}
		set.Add(s.topic, s.partitions...)
	}
	var rows []deletedOffset
	if len(whole) == 0 {
		return set, rows, nil
	}
	details, err := adm.ListTopics(ctx, whole...)
	if err != nil {
		return nil, nil, adm.Explain(ctx, "look up the topics' partitions", err)
	}
	for _, t := range whole {
		d, ok := details[t]
		switch {
		case !ok:
			rows = append(rows, deletedOffset{topic: t, partition: -1, err: kerr.UnknownTopicOrPartition})
		case d.Err != nil:
			rows = append(rows, deletedOffset{topic: t, partition: -1, err: d.Err})
		default:
			set.Add(t, d.Partitions.Numbers()...)
		}
	}
	return set, rows, nil
}

// deleteOffsetsGroupError puts a group-level OffsetDelete error in the
// words of Kafka's tool.
func deleteOffsetsGroupError(ctx context.Context, adm *cli.Admin, group string, err error) error {
	switch {
	case errors.Is(err, kerr.GroupIDNotFound):
		return fmt.Errorf("consumer group '%s' does not exist", group)
	case errors.Is(err, kerr.NonEmptyGroup):
		return fmt.Errorf("deleting offsets of a consumer group '%s' is forbidden if the group is not empty: %w", group, err)
	case errors.Is(err, kerr.InvalidGroupID):
		return fmt.Errorf("'%s' is not a valid group id: %w", group, err)
	case errors.Is(err, kerr.GroupAuthorizationFailed):
		return fmt.Errorf("access to '%s' is not authorized: %w", group, err)
	}
	return adm.Explain(ctx, fmt.Sprintf("delete the offsets of group %q", group), err)
}

// deletedOffsetsResultJSON is `weir groups delete-offsets --format json`:
// the group and a row per partition, as the text's table.
type deletedOffsetsResultJSON struct {
	Group      string              `json:"group"`
	Partitions []deletedOffsetJSON `json:"partitions"`
}

// deletedOffsetJSON is a row of the table: the partition (null when its
// topic could not be looked up, "-" in the text), whether its offset was
// deleted (STATUS Successful) and, if not, why (the text after "Error: ").
type deletedOffsetJSON struct {
	Topic     string `json:"topic"`
	Partition *int32 `json:"partition"`
	Deleted   bool   `json:"deleted"`
	Error     string `json:"error,omitempty"`
}

// deletedOffsetsJSON is the JSON of the rows of group.
func deletedOffsetsJSON(group string, rows []deletedOffset) deletedOffsetsResultJSON {
	res := deletedOffsetsResultJSON{Group: group, Partitions: make([]deletedOffsetJSON, 0, len(rows))}
	for _, r := range rows {
		j := deletedOffsetJSON{Topic: r.topic, Deleted: r.err == nil}
		if r.partition >= 0 {
			j.Partition = &r.partition
		}
		if r.err != nil {
			j.Error = cli.Explain(r.err).Error()
		}
		res.Partitions = append(res.Partitions, j)
	}
	return res
}

// writeDeletedOffsets prints TOPIC PARTITION STATUS, the STATUS being
// Successful or Error: and why.
func writeDeletedOffsets(w io.Writer, rows []deletedOffset) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tSTATUS")
	for _, r := range rows {
		partition, status := "-", "Successful"
		if r.partition >= 0 {
			partition = strconv.Itoa(int(r.partition))
		}
		if r.err != nil {
			status = "Error: " + cli.Explain(r.err).Error()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.topic, partition, status)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
