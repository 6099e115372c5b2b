package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/weirmq/weir/internal/cli"
)

// topicSelection is a --topic value: a topic and its partitions (all when
// nil).
type topicSelection struct {
	topic      string
	partitions []int32
}

// topicSelections is the repeatable --topic flag: "T" or "T:0,1,2".
type topicSelections []topicSelection

// String returns the values as given, comma-separated.
func (s *topicSelections) String() string {
	var out []string
	for _, sel := range *s {
		v := sel.topic
		if sel.partitions != nil {
			v += ":" + joinInt32s(sel.partitions)
		}
		out = append(out, v)
	}
	return strings.Join(out, ", ")
}

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
	sel       *groupSelection
	topics    topicSelections
	allTopics bool
	spec      resetSpec
	fromFile  string
	execute   bool
	dryRun    bool
	export    bool
	out       *cli.Output // --format of the plan
}

// singleGroup returns the group when exactly one --group was given: then
// --export and --from-file use lines without a group column, as Kafka's
// tool does.
func (f resetFlags) singleGroup() string {
	if len(f.sel.groups) == 1 {
		return f.sel.groups[0]
	}
	return ""
}

// resetScenarios names the scenario flags, for the usage and its errors.
const resetScenarios = "--to-earliest, --to-latest, --to-current, --to-offset, --shift-by, --to-datetime, --by-duration, --from-file"

// parseResetFlags reads and checks the flags of `weir groups
// reset-offsets`; now is the time --by-duration counts back from.
func parseResetFlags(name string, args []string, stderr io.Writer, now time.Time) (resetFlags, *cli.Conn, error) {
	fs := cli.NewFlagSet(name, "(--group G ... | --all-groups) (--topic T[:P,P...] ... | --all-topics) (one of "+resetScenarios+") [--execute] [--export | --format text|json] [flags]", stderr)
	conn := cli.AddConnFlags(fs)
	f := resetFlags{sel: addGroupSelection(fs, "reset the offsets of"), out: cli.AddFormatFlag(fs)}
	fs.Var(&f.topics, "topic", "a topic `T` or T:0,1,2 (some partitions) to reset; repeat for several")
	fs.BoolVar(&f.allTopics, "all-topics", false, "reset every topic the group has committed offsets for")
	earliest := fs.Bool("to-earliest", false, "reset to the log start offset")
	latest := fs.Bool("to-latest", false, "reset to the log end offset")
	current := fs.Bool("to-current", false, "reset to the committed offset (the log end offset where there is none)")
	toOffset := fs.String("to-offset", "", "reset to offset `N`, held within the log's start and end")
	shiftBy := fs.String("shift-by", "", "move the committed offset by `N` (negative moves back), held within the log")
	datetime := fs.String("to-datetime", "", "reset to the first record at or after `YYYY-MM-DDTHH:mm:SS.sss` (UTC unless a zone follows: Z, +HH, +HHMM, +HH:MM)")
	duration := fs.String("by-duration", "", "reset to the first record at or after now minus the ISO-8601 duration `PnDTnHnMn.nS` (PT30M, P1DT12H)")
	fs.StringVar(&f.fromFile, "from-file", "", "reset to the offsets of a CSV `FILE` as --export prints it (topic,partition,offset or group,topic,partition,offset lines)")
	fs.BoolVar(&f.execute, "execute", false, "commit the new offsets; without it only the plan is printed")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the plan only (the default)")
	fs.BoolVar(&f.export, "export", false, "print the plan as CSV lines --from-file reads, instead of a table")
	if err := fs.ParseNoArgs(args); err != nil {
		return f, conn, err
	}
	var scenarios []resetSpec
	for _, b := range []struct {
		set  bool
		kind resetKind
	}{{*earliest, resetEarliest}, {*latest, resetLatest}, {*current, resetToCurrent}, {f.fromFile != "", resetFromFile}} {
		if b.set {
			scenarios = append(scenarios, resetSpec{kind: b.kind})
		}
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
	if *datetime != "" {
		ms, perr := parseResetDatetime(*datetime)
		err = errors.Join(err, perr)
		scenarios = append(scenarios, resetSpec{kind: resetToTime, n: ms})
	}
	if *duration != "" {
		d, perr := parseISODuration(*duration)
		err = errors.Join(err, perr)
		scenarios = append(scenarios, resetSpec{kind: resetToTime, n: now.Add(-d).UnixMilli()})
	}
	scoped := len(f.topics) > 0 || f.allTopics
	switch {
	case err != nil:
	case f.sel.check() != nil:
		err = f.sel.check()
	case len(scenarios) != 1:
		err = errors.New("give exactly one of " + resetScenarios)
	case len(f.topics) > 0 && f.allTopics:
		err = errors.New("--topic and --all-topics exclude each other")
	case f.fromFile != "" && scoped:
		err = errors.New("--from-file takes its partitions from the file: drop --topic and --all-topics")
	case f.fromFile == "" && !scoped:
		err = errors.New("name the topics: --topic T or --all-topics")
	case f.execute && f.dryRun:
		err = errors.New("--execute and --dry-run exclude each other")
	case f.export && f.out.JSON():
		err = errors.New("--export prints the plan as CSV for --from-file: drop --format json (or --export)")
	}
	if err != nil {
		return f, conn, fs.UsageError(err)
	}
	f.spec = scenarios[0]
	return f, conn, nil
}

// runGroupsResetOffsets is `weir groups reset-offsets`. Like
// kafka-consumer-groups.sh --reset-offsets it refuses a group with members
// (state other than Empty or Dead), warns on stderr where an offset is
// moved into the log, prints the plan as GROUP TOPIC PARTITION NEW-OFFSET
// (as CSV with --export, as JSON with --format json), and commits it only
// with --execute.
func runGroupsResetOffsets(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const name = "groups reset-offsets"
	f, conn, err := parseResetFlags(name, args, stderr, time.Now())
	if err != nil {
		return err
	}
	var fromFile map[string][]fileOffset
	if f.fromFile != "" {
		if fromFile, err = readResetFile(f.fromFile, f.singleGroup()); err != nil {
			return err
		}
	}
	adm, ctx, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
	defer adm.Close()
	groups, err := f.sel.resolve(ctx, adm)
	if err != nil {
		return err
	}
	var described kadm.DescribedGroups
	if len(groups) > 0 {
		if described, err = adm.DescribeGroups(ctx, groups...); err != nil {
			return adm.Explain(ctx, "describe groups", err)
		}
	}
	if !f.execute && !f.dryRun {
		fmt.Fprintln(stderr, "WARN: no action is performed as the --execute option is missing; printing the plan only.")
	}
	var plans []groupPlan
	var errs []error
	for _, g := range groups {
		plan, err := resetGroup(ctx, adm, f, g, described[g], fromFile, stderr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		plans = append(plans, groupPlan{group: g, offsets: plan.offsets, warnings: plan.warnings})
	}
	var werr error
	switch {
	case f.export:
		werr = writeResetCSV(stdout, plans, f.singleGroup() == "")
	case f.out.JSON():
		werr = f.out.Write(stdout, resetPlanJSON(plans, f.execute), nil)
	case len(plans) > 0:
		werr = writePlan(stdout, plans)
	}
	return errors.Join(append(errs, werr)...)
}

// resetGroup plans the reset of one group, prints the plan's warnings to
// stderr and, with --execute, commits it.
func resetGroup(ctx context.Context, adm *cli.Admin, f resetFlags, group string, d kadm.DescribedGroup, fromFile map[string][]fileOffset, stderr io.Writer) (resetPlan, error) {
	switch {
	case d.Group == "":
		return resetPlan{}, fmt.Errorf("describe group %q: the broker did not answer for it", group)
	case d.Err != nil:
		return resetPlan{}, fmt.Errorf("describe group %q: %w", group, cli.Explain(d.Err))
	case d.State != "Empty" && d.State != "Dead":
		return resetPlan{}, fmt.Errorf("assignments can only be reset if the group '%s' is inactive, but the current state is %s", group, d.State)
	}
	var rows []fileOffset
	if f.spec.kind == resetFromFile {
		if rows = fromFile[group]; len(rows) == 0 {
			return resetPlan{}, fmt.Errorf("no reset plan for group %s found in %s", group, f.fromFile)
		}
	}
	parts, err := resetInputs(ctx, adm, f, group, rows)
	if err != nil {
		return resetPlan{}, err
	}
	plan, err := planReset(f.spec, parts)
	if err != nil {
		return resetPlan{}, fmt.Errorf("group %q: %w", group, err)
	}
	for _, w := range plan.warnings {
		fmt.Fprintf(stderr, "WARN: %s\n", w)
	}
	if f.execute {
		if err := commitPlan(ctx, adm, group, plan.offsets); err != nil {
			return resetPlan{}, err
		}
	}
	return plan, nil
}

// readResetFile reads a --from-file plan.
func readResetFile(path, single string) (map[string][]fileOffset, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--from-file: %w", err)
	}
	defer file.Close()
	plans, err := parseResetCSV(file, single)
	if err != nil {
		return nil, fmt.Errorf("--from-file %s: %w", path, err)
	}
	return plans, nil
}

// resetInputs collects the committed, start and end offsets (and the
// offsets at the time, or the file's) of the partitions of group that f
// selects, or that rows name.
func resetInputs(ctx context.Context, adm *cli.Admin, f resetFlags, group string, rows []fileOffset) ([]partitionOffsets, error) {
	committed, err := adm.FetchOffsets(ctx, group)
	if err == nil {
		err = committed.Error()
	}
	if err != nil {
		return nil, adm.Explain(ctx, fmt.Sprintf("fetch the offsets of group %q", group), err)
	}
	selections := f.topics
	requested := make(map[string]map[int32]int64)
	switch {
	case f.allTopics:
		for _, t := range committed.Partitions().Sorted() {
			selections = append(selections, topicSelection{topic: t.Topic, partitions: t.Partitions})
		}
		if len(selections) == 0 {
			return nil, fmt.Errorf("group %q has no committed offsets: nothing to reset", group)
		}
	case rows != nil:
		set := make(kadm.TopicsSet)
		for _, r := range rows {
			set.Add(r.topic, r.partition)
			if requested[r.topic] == nil {
				requested[r.topic] = make(map[int32]int64)
			}
			requested[r.topic][r.partition] = r.offset
		}
		for _, t := range set.Sorted() {
			selections = append(selections, topicSelection{topic: t.Topic, partitions: t.Partitions})
		}
	}
	var topics []string
	for _, s := range selections {
		if !slices.Contains(topics, s.topic) {
			topics = append(topics, s.topic)
		}
	}
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, adm.Explain(ctx, "list log start offsets", err)
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, adm.Explain(ctx, "list log end offsets", err)
	}
	var atTime kadm.ListedOffsets
	if f.spec.kind == resetToTime {
		if atTime, err = adm.ListOffsetsAfterMilli(ctx, f.spec.n, topics...); err != nil {
			return nil, adm.Explain(ctx, "list offsets by time", err)
		}
	}
	var parts []partitionOffsets
	seen := make(map[string]map[int32]bool)
	for _, s := range selections {
		ps, err := selectedPartitions(s, starts)
		if err != nil {
			return nil, err
		}
		if seen[s.topic] == nil {
			seen[s.topic] = make(map[int32]bool)
		}
		for _, p := range ps {
			if seen[s.topic][p] {
				continue
			}
			seen[s.topic][p] = true
			part := partitionOffsets{topic: s.topic, partition: p, committed: -1, atTime: -1, requested: requested[s.topic][p]}
			if part.start, err = listedOffset(starts, s.topic, p); err != nil {
				return nil, err
			}
			if part.end, err = listedOffset(ends, s.topic, p); err != nil {
				return nil, err
			}
			if atTime != nil {
				if part.atTime, err = listedOffset(atTime, s.topic, p); err != nil {
					return nil, err
				}
			}
			if o, ok := committed.Lookup(s.topic, p); ok && o.Err == nil {
				part.committed = o.At
			}
			parts = append(parts, part)
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
			return nil, fmt.Errorf("topic %q: %w", s.topic, cli.Explain(o.Err))
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
		return 0, fmt.Errorf("list offsets of %s-%d: %w", topic, p, cli.Explain(o.Err))
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

// writePlan prints GROUP TOPIC PARTITION NEW-OFFSET, one table for all
// the groups.
func writePlan(w io.Writer, plans []groupPlan) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tTOPIC\tPARTITION\tNEW-OFFSET")
	for _, g := range plans {
		for _, p := range g.offsets {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", g.group, p.topic, p.partition, p.offset)
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
