package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/weirmq/weir/internal/cli"
)

// resetKind is the scenario of `weir groups reset-offsets`.
type resetKind int

const (
	resetEarliest resetKind = iota + 1 // --to-earliest
	resetLatest                        // --to-latest
	resetToOffset                      // --to-offset N
	resetShiftBy                       // --shift-by N
)

// resetSpec is the scenario and its number.
type resetSpec struct {
	kind resetKind
	n    int64
}

// partitionOffsets are what the plan of one partition is computed from:
// the group's committed offset (-1 for none) and the log start and end
// offsets.
type partitionOffsets struct {
	topic     string
	partition int32
	committed int64
	start     int64
	end       int64
}

// plannedOffset is one partition's new offset.
type plannedOffset struct {
	topic     string
	partition int32
	offset    int64
}

// planReset computes the new offset of each partition, in topic and
// partition order. As Kafka's tool does, --to-offset and --shift-by
// results are clamped into [start, end], and --shift-by needs a committed
// offset.
func planReset(spec resetSpec, parts []partitionOffsets) ([]plannedOffset, error) {
	plan := make([]plannedOffset, 0, len(parts))
	for _, p := range parts {
		var at int64
		switch spec.kind {
		case resetEarliest:
			at = p.start
		case resetLatest:
			at = p.end
		case resetToOffset:
			at = clamp(spec.n, p.start, p.end)
		case resetShiftBy:
			if p.committed < 0 {
				return nil, fmt.Errorf("cannot shift the offset of %s-%d: the group has no committed offset there", p.topic, p.partition)
			}
			at = clamp(addSaturating(p.committed, spec.n), p.start, p.end)
		default:
			return nil, fmt.Errorf("reset scenario %d unknown", spec.kind)
		}
		plan = append(plan, plannedOffset{topic: p.topic, partition: p.partition, offset: at})
	}
	slices.SortFunc(plan, func(a, b plannedOffset) int {
		if c := strings.Compare(a.topic, b.topic); c != 0 {
			return c
		}
		return int(a.partition) - int(b.partition)
	})
	return plan, nil
}

func clamp(v, lo, hi int64) int64 { return max(lo, min(v, hi)) }

// addSaturating returns a+b, held at the int64 limits.
func addSaturating(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}

// topicSelection is a --topic value: a topic and its partitions (all when
// nil).
type topicSelection struct {
	topic      string
	partitions []int32
}

// topicSelections is the repeatable --topic flag: "T" or "T:0,1,2".
type topicSelections []topicSelection

func (s *topicSelections) String() string { return "" }

func (s *topicSelections) Set(v string) error {
	topic, list, hasList := strings.Cut(v, ":")
	if topic == "" {
		return fmt.Errorf("%q names no topic", v)
	}
	sel := topicSelection{topic: topic}
	if hasList {
		for _, f := range strings.Split(list, ",") {
			p, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32)
			if err != nil || p < 0 {
				return fmt.Errorf("%q: bad partition %q", v, f)
			}
			sel.partitions = append(sel.partitions, int32(p))
		}
	}
	*s = append(*s, sel)
	return nil
}

// resetFlags are the parsed flags of `weir groups reset-offsets`.
type resetFlags struct {
	group     string
	topics    topicSelections
	allTopics bool
	spec      resetSpec
	execute   bool
	dryRun    bool
}

// parseResetFlags reads and checks the flags of `weir groups reset-offsets`.
func parseResetFlags(name string, args []string, stderr io.Writer) (resetFlags, *cli.Conn, error) {
	fs := cli.NewFlagSet(name, "--group G (--topic T[:P,P...] ... | --all-topics) (--to-earliest | --to-latest | --to-offset N | --shift-by N) [--execute] [flags]", stderr)
	conn := cli.AddConnFlags(fs)
	var f resetFlags
	fs.StringVar(&f.group, "group", "", "the group whose offsets to reset (required); it must have no members")
	fs.Var(&f.topics, "topic", "a topic `T` or T:0,1,2 (some partitions) to reset; repeat for several")
	fs.BoolVar(&f.allTopics, "all-topics", false, "reset every topic the group has committed offsets for")
	earliest := fs.Bool("to-earliest", false, "reset to the log start offset")
	latest := fs.Bool("to-latest", false, "reset to the log end offset")
	toOffset := fs.String("to-offset", "", "reset to offset `N`, held within the log's start and end")
	shiftBy := fs.String("shift-by", "", "move the committed offset by `N` (negative moves back), held within the log")
	fs.BoolVar(&f.execute, "execute", false, "commit the new offsets; without it only the plan is printed")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the plan only (the default)")
	if err := fs.Parse(args); err != nil {
		return f, conn, err
	}
	if err := fs.NoArgs(); err != nil {
		return f, conn, err
	}
	var scenarios []resetSpec
	if *earliest {
		scenarios = append(scenarios, resetSpec{kind: resetEarliest})
	}
	if *latest {
		scenarios = append(scenarios, resetSpec{kind: resetLatest})
	}
	var err error
	for _, s := range []struct {
		flag, value string
		kind        resetKind
	}{{"to-offset", *toOffset, resetToOffset}, {"shift-by", *shiftBy, resetShiftBy}} {
		if s.value == "" {
			continue
		}
		n, perr := strconv.ParseInt(s.value, 10, 64)
		switch {
		case perr != nil:
			err = fmt.Errorf("--%s %q: want an integer", s.flag, s.value)
		case s.kind == resetToOffset && n < 0:
			err = fmt.Errorf("--to-offset %d: want at least 0", n)
		}
		scenarios = append(scenarios, resetSpec{kind: s.kind, n: n})
	}
	switch {
	case err != nil:
	case f.group == "":
		err = errors.New("--group is required")
	case len(f.topics) == 0 && !f.allTopics:
		err = errors.New("name the topics: --topic T or --all-topics")
	case len(f.topics) > 0 && f.allTopics:
		err = errors.New("--topic and --all-topics exclude each other")
	case len(scenarios) != 1:
		err = errors.New("give exactly one of --to-earliest, --to-latest, --to-offset, --shift-by")
	case f.execute && f.dryRun:
		err = errors.New("--execute and --dry-run exclude each other")
	}
	if err != nil {
		return f, conn, fs.UsageError(err)
	}
	f.spec = scenarios[0]
	return f, conn, nil
}

// runGroupsResetOffsets is `weir groups reset-offsets`. Like
// kafka-consumer-groups.sh --reset-offsets it refuses a group with members
// (state other than Empty or Dead), prints the plan as GROUP TOPIC
// PARTITION NEW-OFFSET, and commits it only with --execute.
func runGroupsResetOffsets(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const name = "groups reset-offsets"
	f, conn, err := parseResetFlags(name, args, stderr)
	if err != nil {
		return err
	}
	adm, ctx, cancel, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	defer adm.Close()
	described, err := adm.DescribeGroups(ctx, f.group)
	if err != nil {
		return adm.Explain(ctx, fmt.Sprintf("describe group %q", f.group), err)
	}
	if d, ok := described[f.group]; ok && d.Err == nil && d.State != "Empty" && d.State != "Dead" {
		return fmt.Errorf("assignments can only be reset if the group '%s' is inactive, but the current state is %s", f.group, d.State)
	}
	parts, err := resetInputs(ctx, adm, f)
	if err != nil {
		return err
	}
	plan, err := planReset(f.spec, parts)
	if err != nil {
		return err
	}
	if f.execute {
		if err := commitPlan(ctx, adm, f.group, plan); err != nil {
			return err
		}
	} else if !f.dryRun {
		fmt.Fprintln(stderr, "WARN: no action is performed as the --execute option is missing; printing the plan only.")
	}
	return writePlan(stdout, f.group, plan)
}

// resetInputs collects the committed, start and end offsets of the
// partitions f selects.
func resetInputs(ctx context.Context, adm *cli.Admin, f resetFlags) ([]partitionOffsets, error) {
	committed, err := adm.FetchOffsets(ctx, f.group)
	if err == nil {
		err = committed.Error()
	}
	if err != nil {
		return nil, adm.Explain(ctx, fmt.Sprintf("fetch the offsets of group %q", f.group), err)
	}
	selections := f.topics
	if f.allTopics {
		for _, t := range committed.Partitions().Sorted() {
			selections = append(selections, topicSelection{topic: t.Topic, partitions: t.Partitions})
		}
		if len(selections) == 0 {
			return nil, fmt.Errorf("group %q has no committed offsets: nothing to reset", f.group)
		}
	}
	var topics []string
	for _, s := range selections {
		topics = append(topics, s.topic)
	}
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, adm.Explain(ctx, "list log start offsets", err)
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, adm.Explain(ctx, "list log end offsets", err)
	}
	var parts []partitionOffsets
	for _, s := range selections {
		ps, err := selectedPartitions(s, starts)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			start, err := listedOffset(starts, s.topic, p)
			if err != nil {
				return nil, err
			}
			end, err := listedOffset(ends, s.topic, p)
			if err != nil {
				return nil, err
			}
			c := int64(-1)
			if o, ok := committed.Lookup(s.topic, p); ok && o.Err == nil {
				c = o.At
			}
			parts = append(parts, partitionOffsets{topic: s.topic, partition: p, committed: c, start: start, end: end})
		}
	}
	return parts, nil
}

// selectedPartitions returns the partitions of s: those it names, or all
// the topic has.
func selectedPartitions(s topicSelection, listed kadm.ListedOffsets) ([]int32, error) {
	all, ok := listed[s.topic]
	if !ok {
		return nil, fmt.Errorf("topic %q: the broker did not list it", s.topic)
	}
	for _, o := range all {
		if o.Err != nil {
			return nil, fmt.Errorf("topic %q: %w", s.topic, o.Err)
		}
	}
	if s.partitions != nil {
		return s.partitions, nil
	}
	ps := make([]int32, 0, len(all))
	for p := range all {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps, nil
}

// listedOffset returns the listed offset of one partition.
func listedOffset(listed kadm.ListedOffsets, topic string, p int32) (int64, error) {
	o, ok := listed.Lookup(topic, p)
	switch {
	case !ok:
		return 0, fmt.Errorf("topic %q has no partition %d", topic, p)
	case o.Err != nil:
		return 0, fmt.Errorf("list offsets of %s-%d: %w", topic, p, o.Err)
	}
	return o.Offset, nil
}

// commitPlan commits the planned offsets for group.
func commitPlan(ctx context.Context, adm *cli.Admin, group string, plan []plannedOffset) error {
	offsets := make(kadm.Offsets)
	for _, p := range plan {
		offsets.Add(kadm.Offset{Topic: p.topic, Partition: p.partition, At: p.offset, LeaderEpoch: -1})
	}
	resps, err := adm.CommitOffsets(ctx, group, offsets)
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		return adm.Explain(ctx, fmt.Sprintf("commit the new offsets of group %q", group), err)
	}
	return nil
}

// writePlan prints GROUP TOPIC PARTITION NEW-OFFSET.
func writePlan(w io.Writer, group string, plan []plannedOffset) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tTOPIC\tPARTITION\tNEW-OFFSET")
	for _, p := range plan {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", group, p.topic, p.partition, p.offset)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
