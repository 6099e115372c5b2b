package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/weirmq/weir/internal/cli"
)

// groupsCommands is the table of `weir groups` commands, in the order the
// usage lists them.
var groupsCommands = []cli.Command{
	{Name: "list", Summary: "print the consumer groups' names, one a line; --state S[,S] filters and adds a STATE column", Run: runGroupsList},
	{Name: "describe", Summary: "print groups' partitions with committed offsets and lag, or their --members or --state (--group G ... or --all-groups), as kafka-consumer-groups.sh", Run: runGroupsDescribe},
	{Name: "delete", Summary: "delete consumer groups and their committed offsets: --group G [--group G ...] or --all-groups", Run: runGroupsDelete},
	{Name: "delete-offsets", Summary: "delete one group's committed offsets of some topics or partitions: --group G --topic T[:P,P]", Run: runGroupsDeleteOffsets},
	{Name: "reset-offsets", Summary: "plan (default), --export or --execute a reset of inactive groups' committed offsets", Run: runGroupsResetOffsets},
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
// STATE table, as kafka-consumer-groups.sh --list --state does. --format
// json prints every listed group with its state and protocol type.
func runGroupsList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const name = "groups list"
	fs := cli.NewFlagSet(name, "[--state S[,S...]] [flags]", stderr)
	conn := cli.AddConnFlags(fs)
	out := cli.AddFormatFlag(fs)
	stateFlag := fs.String("state", "", "only groups in these states (comma-separated: "+strings.Join(groupStates, ", ")+"); prints a STATE column")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	var states []string
	if *stateFlag != "" {
		var err error
		if states, err = parseStates(*stateFlag); err != nil {
			return fs.UsageError(err)
		}
	}
	adm, ctx, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
	defer adm.Close()
	listed, err := adm.ListGroups(ctx, states...)
	if err != nil {
		return adm.Explain(ctx, "list groups", err)
	}
	return out.Write(stdout, groupListJSON(listed, states), func(w io.Writer) error {
		return writeGroupList(w, listed, states)
	})
}

// listedGroupJSON is one group of `weir groups list --format json`.
type listedGroupJSON struct {
	Group        string `json:"group"`
	State        string `json:"state"`
	ProtocolType string `json:"protocol_type"`
}

// groupListJSON returns the groups of listed in one of states (all when
// empty), sorted by name.
func groupListJSON(listed kadm.ListedGroups, states []string) []listedGroupJSON {
	out := []listedGroupJSON{}
	for _, g := range listed.Sorted() {
		if len(states) == 0 || slices.ContainsFunc(states, func(s string) bool { return strings.EqualFold(g.State, s) }) {
			out = append(out, listedGroupJSON{Group: g.Group, State: g.State, ProtocolType: g.ProtocolType})
		}
	}
	return out
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
	for _, g := range groupListJSON(listed, states) {
		fmt.Fprintf(tw, "%s\t%s\n", g.Group, g.State)
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

// groupSelection is the --group (repeatable) and --all-groups flags of a
// command that acts on groups, as kafka-consumer-groups.sh takes them.
type groupSelection struct {
	groups groupList
	all    bool
}

// addGroupSelection registers --group and --all-groups on fs; what says
// what is done to the groups ("describe").
func addGroupSelection(fs *cli.FlagSet, what string) *groupSelection {
	s := &groupSelection{}
	fs.Var(&s.groups, "group", "a group `G` to "+what+"; repeat for several")
	fs.BoolVar(&s.all, "all-groups", false, what+" every group the brokers list")
	return s
}

// check returns the mistake in the flags, if any: exactly one of --group
// and --all-groups is needed.
func (s *groupSelection) check() error {
	switch {
	case len(s.groups) == 0 && !s.all:
		return errors.New("name the groups: --group G or --all-groups")
	case len(s.groups) > 0 && s.all:
		return errors.New("--group and --all-groups exclude each other")
	}
	return nil
}

// resolve returns the groups selected: those named, in command-line order,
// or every listed group, sorted.
func (s *groupSelection) resolve(ctx context.Context, adm *cli.Admin) ([]string, error) {
	if !s.all {
		return slices.Clone(s.groups), nil
	}
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return nil, adm.Explain(ctx, "list groups", err)
	}
	return listed.Groups(), nil
}

// runGroupsDelete is `weir groups delete`. It prints what
// kafka-consumer-groups.sh --delete prints (with --format json, each
// group's result) and fails when any group could not be deleted (a group
// with members answers NON_EMPTY_GROUP).
func runGroupsDelete(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const name = "groups delete"
	fs := cli.NewFlagSet(name, "(--group G [--group G ...] | --all-groups) [--format text|json] [flags]", stderr)
	conn := cli.AddConnFlags(fs)
	sel := addGroupSelection(fs, "delete")
	out := cli.AddFormatFlag(fs)
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	if err := sel.check(); err != nil {
		return fs.UsageError(err)
	}
	adm, ctx, err := conn.Admin(ctx)
	if err != nil {
		return err
	}
	defer adm.Close()
	groups, err := sel.resolve(ctx, adm)
	if err != nil {
		return err
	}
	if len(groups) == 0 {
		return out.Write(stdout, []deletedGroupJSON{}, func(w io.Writer) error {
			return writeLine(w, "There are no consumer groups to delete.")
		})
	}
	resps, err := adm.DeleteGroups(ctx, groups...)
	if err != nil {
		return adm.Explain(ctx, "delete groups", err)
	}
	var failed, deleted []string
	var errs []error
	results := make([]deletedGroupJSON, 0, len(groups))
	for _, g := range groups {
		r, ok := resps[g]
		switch {
		case !ok:
			r.Err = errors.New("the broker did not answer for it")
		case r.Err == nil:
			deleted = append(deleted, g)
			results = append(results, deletedGroupJSON{Group: g, Deleted: true})
			continue
		}
		r.Err = cli.Explain(r.Err)
		failed = append(failed, fmt.Sprintf("* Group '%s' could not be deleted due to: %v", g, r.Err))
		errs = append(errs, fmt.Errorf("delete group %q: %w", g, r.Err))
		results = append(results, deletedGroupJSON{Group: g, Error: r.Err.Error()})
	}
	if out.JSON() {
		return errors.Join(append(errs, out.Write(stdout, results, nil))...)
	}
	if len(failed) == 0 {
		return writeLine(stdout, "Deletion of requested consumer groups (%s) was successful.", quoteGroups(groups))
	}
	if err := writeLine(stdout, "Deletion of some consumer groups failed:\n%s", strings.Join(failed, "\n")); err != nil {
		return err
	}
	if len(deleted) > 0 {
		if err := writeLine(stdout, "\nThese consumer groups were deleted successfully: %s", quoteGroups(deleted)); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

// deletedGroupJSON is one group of `weir groups delete --format json`.
type deletedGroupJSON struct {
	Group   string `json:"group"`
	Deleted bool   `json:"deleted"`
	// Error is why the group was not deleted, as the text says it.
	Error string `json:"error,omitempty"`
}

// quoteGroups formats group ids as Kafka's tool does: 'a', 'b'.
func quoteGroups(groups []string) string {
	q := make([]string, len(groups))
	for i, g := range groups {
		q[i] = "'" + g + "'"
	}
	return strings.Join(q, ", ")
}
