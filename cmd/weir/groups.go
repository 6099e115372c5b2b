package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/weirmq/weir/internal/cli"
)

// groupsCommands is the table of `weir groups` commands, in the order the
// usage lists them.
var groupsCommands = []cli.Command{
	{Name: "list", Summary: "print the consumer groups' names, one a line; --state S[,S] filters and adds a STATE column", Run: runGroupsList},
	{Name: "describe", Summary: "print a group's partitions with committed offsets and lag, or its --members or --state, as kafka-consumer-groups.sh", Run: runGroupsDescribe},
	{Name: "delete", Summary: "delete consumer groups and their committed offsets: --group G [--group G ...]", Run: runGroupsDelete},
	{Name: "reset-offsets", Summary: "plan (default) or --execute a reset of an inactive group's committed offsets", Run: runGroupsResetOffsets},
}

// runGroups is `weir groups <command>`: consumer group administration
// through any Kafka-compatible broker, with franz-go's admin client, in the
// manner of kafka-consumer-groups.sh.
func runGroups(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cli.Dispatch(ctx, "groups", groupsCommands, args, stdout, stderr)
}

// groupStates are the states of a classic group, spelled as brokers
// report them (KIP-518 ListGroups state filter).
var groupStates = []string{"PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty"}

// parseStates turns a --state value, comma-separated and case-insensitive,
// into the states' canonical names.
func parseStates(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		found := ""
		for _, st := range groupStates {
			if strings.EqualFold(f, st) {
				found = st
			}
		}
		if found == "" {
			return nil, fmt.Errorf("--state %q: unknown state %q, want some of %s", s, f, strings.Join(groupStates, ", "))
		}
		out = append(out, found)
	}
	return out, nil
}

// runGroupsList is `weir groups list`. Without --state it prints the
// groups' names, sorted; with it, the groups in those states as a GROUP
// STATE table, as kafka-consumer-groups.sh --list --state does.
func runGroupsList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const name = "groups list"
	fs := cli.NewFlagSet(name, "[--state S[,S...]] [flags]", stderr)
	conn := cli.AddConnFlags(fs)
	stateFlag := fs.String("state", "", "only groups in these states (comma-separated: "+strings.Join(groupStates, ", ")+"); prints a STATE column")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := fs.NoArgs(); err != nil {
		return err
	}
	var states []string
	if *stateFlag != "" {
		var err error
		if states, err = parseStates(*stateFlag); err != nil {
			return fs.UsageError(err)
		}
	}
	adm, ctx, cancel, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	defer adm.Close()
	listed, err := adm.ListGroups(ctx, states...)
	if err != nil {
		return adm.Explain(ctx, "list groups", err)
	}
	return writeGroupList(stdout, listed, states)
}

// writeGroupList prints listed: names only when states is empty, else the
// groups in one of states (a broker older than ListGroups v4 ignores the
// filter, so it is applied here too) with their state.
func writeGroupList(w io.Writer, listed kadm.ListedGroups, states []string) error {
	if len(states) == 0 {
		for _, g := range listed.Groups() {
			if err := writeLine(w, "%s", g); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tSTATE")
	for _, g := range listed.Sorted() {
		for _, s := range states {
			if strings.EqualFold(g.State, s) {
				fmt.Fprintf(tw, "%s\t%s\n", g.Group, g.State)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// groupList is a repeatable --group flag.
type groupList []string

func (l *groupList) String() string { return strings.Join(*l, ",") }

func (l *groupList) Set(s string) error {
	if s == "" {
		return errors.New("empty group id")
	}
	*l = append(*l, s)
	return nil
}

// runGroupsDelete is `weir groups delete`. It prints what
// kafka-consumer-groups.sh --delete prints and fails when any group could
// not be deleted (a group with members answers NON_EMPTY_GROUP).
func runGroupsDelete(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const name = "groups delete"
	fs := cli.NewFlagSet(name, "--group G [--group G ...] [flags]", stderr)
	conn := cli.AddConnFlags(fs)
	var groups groupList
	fs.Var(&groups, "group", "a group to delete (required); repeat for several")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := fs.NoArgs(); err != nil {
		return err
	}
	if len(groups) == 0 {
		return fs.UsageError(errors.New("--group is required"))
	}
	adm, ctx, cancel, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	defer adm.Close()
	resps, err := adm.DeleteGroups(ctx, groups...)
	if err != nil {
		return adm.Explain(ctx, "delete groups", err)
	}
	var failed []string
	var errs []error
	for _, g := range groups {
		r, ok := resps[g]
		switch {
		case !ok:
			r.Err = errors.New("the broker did not answer for it")
		case r.Err == nil:
			continue
		}
		failed = append(failed, fmt.Sprintf("* Group '%s' could not be deleted due to: %v", g, r.Err))
		errs = append(errs, fmt.Errorf("delete group %q: %w", g, r.Err))
	}
	if len(failed) == 0 {
		return writeLine(stdout, "Deletion of requested consumer groups (%s) was successful.", quoteGroups(groups))
	}
	if err := writeLine(stdout, "Deletion of some consumer groups failed:\n%s", strings.Join(failed, "\n")); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// quoteGroups formats group ids as Kafka's tool does: 'a', 'b'.
func quoteGroups(groups []string) string {
	q := make([]string, len(groups))
	for i, g := range groups {
		q[i] = "'" + g + "'"
	}
	return strings.Join(q, ", ")
}
