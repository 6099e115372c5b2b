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

// runGroupsDescribe is `weir groups describe`: for each --group (or every
// group, --all-groups), its partitions with committed offsets, log end
// offsets and lag and the member consuming each (default), its members
// (--members, with their assignment under --verbose), or its state
// (--state), in the columns of kafka-consumer-groups.sh --describe, one
// table a group with a blank line between. --format json prints the same
// as one document.
func runGroupsDescribe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const name = "groups describe"
	fs := cli.NewFlagSet(name, "(--group G [--group G ...] | --all-groups) [--members [--verbose] | --state] [flags]", stderr)
	conn := cli.AddConnFlags(fs)
	out := cli.AddFormatFlag(fs)
	sel := addGroupSelection(fs, "describe")
	members := fs.Bool("members", false, "print the members: CONSUMER-ID HOST CLIENT-ID #PARTITIONS")
	verbose := fs.Bool("verbose", false, "with --members, add each member's ASSIGNMENT")
	state := fs.Bool("state", false, "print the coordinator, assignment strategy, state and member count")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	view := viewOffsets
	err := sel.check()
	switch {
	case err != nil:
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
	adm, ctx, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
	defer adm.Close()
	groups, err := sel.resolve(ctx, adm)
	if err != nil || len(groups) == 0 {
		return err
	}
	// kadm may reorder the slice it is given: keep the command line order.
	lags, err := adm.Lag(ctx, slices.Clone(groups)...)
	if err != nil {
		return adm.Explain(ctx, "describe groups", err)
	}
	var errs []error
	var described []kadm.DescribedGroupLag
	for _, g := range groups {
		l := lags[g]
		if err := checkDescribed(g, l, view); err != nil {
			errs = append(errs, err)
			continue
		}
		described = append(described, l)
	}
	werr := out.Write(stdout, describedJSON(described, view), func(w io.Writer) error {
		for i, l := range described {
			if i > 0 {
				if err := writeLine(w, ""); err != nil {
					return err
				}
			}
			if err := writeDescribed(w, stderr, l, view, *verbose); err != nil {
				return err
			}
		}
		return nil
	})
	return errors.Join(append(errs, werr)...)
}

// checkDescribed returns an error when group could not be described or
// does not exist.
func checkDescribed(group string, l kadm.DescribedGroupLag, view describeView) error {
	switch {
	case l.Group == "":
		return fmt.Errorf("describe group %q: the broker did not answer for it", group)
	case errors.Is(l.DescribeErr, kerr.GroupIDNotFound), l.DescribeErr == nil && l.State == "Dead":
		return fmt.Errorf("consumer group '%s' does not exist", group)
	case l.DescribeErr != nil:
		return fmt.Errorf("describe group %q: %w", group, cli.Explain(l.DescribeErr))
	case l.FetchErr != nil && view == viewOffsets:
		return fmt.Errorf("fetch the committed offsets of group %q: %w", group, cli.Explain(l.FetchErr))
	}
	return nil
}

// writeDescribed prints one group's view, with a note on stderr when the
// group is rebalancing or has no members, as Kafka's tool does.
func writeDescribed(stdout, stderr io.Writer, l kadm.DescribedGroupLag, view describeView, verbose bool) error {
	switch {
	case view == viewState:
	case l.State == "PreparingRebalance" || l.State == "CompletingRebalance":
		fmt.Fprintf(stderr, "Warning: Consumer group '%s' is rebalancing.\n", l.Group)
	case len(l.Members) == 0:
		fmt.Fprintf(stderr, "Consumer group '%s' has no active members.\n", l.Group)
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
// LAG CONSUMER-ID HOST CLIENT-ID, the rows of offsetRows with "-" for what
// is unknown.
func writeOffsets(w io.Writer, l kadm.DescribedGroupLag) {
	fmt.Fprintln(w, "GROUP\tTOPIC\tPARTITION\tCURRENT-OFFSET\tLOG-END-OFFSET\tLAG\tCONSUMER-ID\tHOST\tCLIENT-ID")
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	number := func(n *int64) string {
		if n == nil {
			return "-"
		}
		return strconv.FormatInt(*n, 10)
	}
	for _, r := range offsetRows(l) {
		partition := "-"
		if r.Partition >= 0 {
			partition = strconv.Itoa(int(r.Partition))
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.Group, dash(r.Topic), partition,
			number(r.CurrentOffset), number(r.LogEndOffset), number(r.Lag), dash(r.ConsumerID), dash(r.Host), dash(r.ClientID))
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
	topics := memberTopics(m)
	if len(topics) == 0 {
		return 0, "-"
	}
	n := 0
	parts := make([]string, len(topics))
	for i, t := range topics {
		n += len(t.Partitions)
		parts[i] = t.Topic + "(" + joinInt32s(t.Partitions) + ")"
	}
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
