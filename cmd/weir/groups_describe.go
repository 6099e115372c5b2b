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

// describeView is what `weir groups describe` prints of a group.
type describeView int

const (
	viewOffsets describeView = iota // partitions, committed offsets, lag (the default)
	viewMembers                     // --members
	viewState                       // --state
)

// runGroupsDescribe is `weir groups describe`: for each --group, its
// partitions with committed offsets, log end offsets and lag and the member
// consuming each (default), its members (--members, with their assignment
// under --verbose), or its state (--state), in the columns of
// kafka-consumer-groups.sh --describe.
func runGroupsDescribe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const name = "groups describe"
	fs := cli.NewFlagSet(name, "--group G [--group G ...] [--members [--verbose] | --state] [flags]", stderr)
	conn := cli.AddConnFlags(fs)
	var groups groupList
	fs.Var(&groups, "group", "a group to describe (required); repeat for several")
	members := fs.Bool("members", false, "print the members: CONSUMER-ID HOST CLIENT-ID #PARTITIONS")
	verbose := fs.Bool("verbose", false, "with --members, add each member's ASSIGNMENT")
	state := fs.Bool("state", false, "print the coordinator, assignment strategy, state and member count")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := fs.NoArgs(); err != nil {
		return err
	}
	view := viewOffsets
	var err error
	switch {
	case len(groups) == 0:
		err = errors.New("--group is required")
	case *members && *state:
		err = errors.New("--members and --state exclude each other")
	case *verbose && !*members:
		err = errors.New("--verbose needs --members")
	case *members:
		view = viewMembers
	case *state:
		view = viewState
	}
	if err != nil {
		return fs.UsageError(err)
	}
	adm, ctx, cancel, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	defer adm.Close()
	// kadm may reorder the slice it is given: keep the command line order.
	lags, err := adm.Lag(ctx, slices.Clone(groups)...)
	if err != nil {
		return adm.Explain(ctx, "describe groups", err)
	}
	var errs []error
	for i, g := range groups {
		if i > 0 {
			if err := writeLine(stdout, ""); err != nil {
				return err
			}
		}
		if err := describeOne(stdout, stderr, g, lags[g], view, *verbose); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// describeOne prints one group's view, a note on stderr when the group is
// rebalancing or has no members, and returns an error when the group could
// not be described or does not exist.
func describeOne(stdout, stderr io.Writer, group string, l kadm.DescribedGroupLag, view describeView, verbose bool) error {
	if l.Group == "" {
		return fmt.Errorf("describe group %q: the broker did not answer for it", group)
	}
	switch {
	case errors.Is(l.DescribeErr, kerr.GroupIDNotFound), l.DescribeErr == nil && l.State == "Dead":
		return fmt.Errorf("consumer group '%s' does not exist", group)
	case l.DescribeErr != nil:
		return fmt.Errorf("describe group %q: %w", group, l.DescribeErr)
	case l.FetchErr != nil && view == viewOffsets:
		return fmt.Errorf("fetch the committed offsets of group %q: %w", group, l.FetchErr)
	}
	switch {
	case view == viewState:
	case l.State == "PreparingRebalance" || l.State == "CompletingRebalance":
		fmt.Fprintf(stderr, "Warning: Consumer group '%s' is rebalancing.\n", group)
	case len(l.Members) == 0:
		fmt.Fprintf(stderr, "Consumer group '%s' has no active members.\n", group)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	switch view {
	case viewMembers:
		writeMembers(tw, l, verbose)
	case viewState:
		writeState(tw, l)
	default:
		writeOffsets(tw, l)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// writeOffsets prints GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET
// LAG CONSUMER-ID HOST CLIENT-ID, one line per partition the group is
// assigned or has an offset committed for, sorted by topic and partition,
// then one line per member without partitions. LAG is the log end offset
// minus the committed offset; "-" stands for what is unknown (no commit,
// no member).
func writeOffsets(w io.Writer, l kadm.DescribedGroupLag) {
	fmt.Fprintln(w, "GROUP\tTOPIC\tPARTITION\tCURRENT-OFFSET\tLOG-END-OFFSET\tLAG\tCONSUMER-ID\tHOST\tCLIENT-ID")
	withPartitions := make(map[string]bool)
	for _, p := range l.Lag.Sorted() {
		current, end, lag := "-", "-", "-"
		if p.Commit.At >= 0 {
			current = strconv.FormatInt(p.Commit.At, 10)
		}
		if p.End.Err == nil && p.End.Offset >= 0 {
			end = strconv.FormatInt(p.End.Offset, 10)
			if p.Commit.At >= 0 {
				lag = strconv.FormatInt(p.End.Offset-p.Commit.At, 10)
			}
		}
		consumer, host, client := "-", "-", "-"
		if m := p.Member; m != nil {
			consumer, host, client = m.MemberID, m.ClientHost, m.ClientID
			withPartitions[m.MemberID] = true
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", l.Group, p.Topic, p.Partition, current, end, lag, consumer, host, client)
	}
	for _, m := range sortedMembers(l.Members) {
		if !withPartitions[m.MemberID] {
			fmt.Fprintf(w, "%s\t-\t-\t-\t-\t-\t%s\t%s\t%s\n", l.Group, m.MemberID, m.ClientHost, m.ClientID)
		}
	}
}

// writeMembers prints GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS, and
// ASSIGNMENT ("topic(0,1),other(2)") when verbose, one line per member.
func writeMembers(w io.Writer, l kadm.DescribedGroupLag, verbose bool) {
	head := "GROUP\tCONSUMER-ID\tHOST\tCLIENT-ID\t#PARTITIONS"
	if verbose {
		head += "\tASSIGNMENT"
	}
	fmt.Fprintln(w, head)
	for _, m := range sortedMembers(l.Members) {
		n, assignment := memberAssignment(m)
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d", l.Group, m.MemberID, m.ClientHost, m.ClientID, n)
		if verbose {
			fmt.Fprintf(w, "\t%s", assignment)
		}
		fmt.Fprintln(w)
	}
}

// memberAssignment returns how many partitions m is assigned and the
// assignment formatted "topic(0,1),other(2)" ("-" when none).
func memberAssignment(m kadm.DescribedGroupMember) (int, string) {
	c, ok := m.Assigned.AsConsumer()
	if !ok || len(c.Topics) == 0 {
		return 0, "-"
	}
	n := 0
	var parts []string
	for _, t := range c.Topics {
		ps := slices.Clone(t.Partitions)
		slices.Sort(ps)
		n += len(ps)
		parts = append(parts, t.Topic+"("+joinInt32s(ps)+")")
	}
	slices.Sort(parts)
	return n, strings.Join(parts, ",")
}

// writeState prints GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE
// #MEMBERS.
func writeState(w io.Writer, l kadm.DescribedGroupLag) {
	fmt.Fprintln(w, "GROUP\tCOORDINATOR (ID)\tASSIGNMENT-STRATEGY\tSTATE\t#MEMBERS")
	coordinator := fmt.Sprintf("%s:%d (%d)", l.Coordinator.Host, l.Coordinator.Port, l.Coordinator.NodeID)
	strategy := l.Protocol
	if strategy == "" {
		strategy = "-"
	}
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\n", l.Group, coordinator, strategy, l.State, len(l.Members))
}

// sortedMembers returns members sorted by member id.
func sortedMembers(members []kadm.DescribedGroupMember) []kadm.DescribedGroupMember {
	s := slices.Clone(members)
	slices.SortFunc(s, func(a, b kadm.DescribedGroupMember) int { return strings.Compare(a.MemberID, b.MemberID) })
	return s
}

// joinInt32s formats ids as "0,1,2".
func joinInt32s(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}
