package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/weirmq/weir/internal/harness"
)

func TestGroupsDescribeAllGroups(t *testing.T) {
	f := newGroupsFixture(t)
	out := mustRun(t, "groups", "describe", "--bootstrap-server", f.brokers, "--all-groups", "--state")
	re := regexp.MustCompile(`^GROUP +COORDINATOR \(ID\) +ASSIGNMENT-STRATEGY +STATE +#MEMBERS\n` +
		`idle +127\.0\.0\.1:\d+ \(\d+\) +- +Empty +0\n\n` +
		`GROUP +COORDINATOR \(ID\) +ASSIGNMENT-STRATEGY +STATE +#MEMBERS\n` +
		`live +127\.0\.0\.1:\d+ \(\d+\) +cooperative-sticky +Stable +1\n$`)
	if !re.MatchString(out) {
		t.Errorf("describe --all-groups --state printed:\n%s", out)
	}
	// The default view: each group's partitions, a blank line between.
	out = mustRun(t, "groups", "describe", "--bootstrap-server", f.brokers, "--all-groups")
	tables := strings.Split(out, "\n\n")
	if len(tables) != 2 || !strings.HasPrefix(tables[0], "GROUP ") || !strings.HasPrefix(tables[1], "GROUP ") ||
		len(tableRows(tables[0])) != 4 || len(tableRows(tables[1])) != 4 ||
		tableRows(tables[0])[1][0] != "idle" || tableRows(tables[1])[1][0] != "live" {
		t.Errorf("describe --all-groups printed:\n%s", out)
	}
	if code, stdout, _ := runCmd(t, "groups", "describe", "--bootstrap-server", f.brokers, "--all-groups", "--group", "idle"); code != 2 || stdout != "" {
		t.Errorf("--all-groups with --group: exit %d, stdout %q; want 2 and nothing", code, stdout)
	}
}

func TestGroupsDeleteAllGroups(t *testing.T) {
	f := newGroupsFixture(t)
	code, stdout, stderr := runCmd(t, "groups", "delete", "--bootstrap-server", f.brokers, "--all-groups")
	want := "Deletion of some consumer groups failed:\n" +
		"* Group 'live' could not be deleted due to: NON_EMPTY_GROUP: The group is not empty.\n" +
		"\nThese consumer groups were deleted successfully: 'idle'\n"
	if code != 1 || stdout != want || !strings.Contains(stderr, `delete group "live": NON_EMPTY_GROUP`) {
		t.Errorf("delete --all-groups: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, stderr, stdout, want)
	}
	if out := mustRun(t, "groups", "list", "--bootstrap-server", f.brokers); out != "live\n" {
		t.Errorf("list after delete --all-groups printed %q", out)
	}
}

// TestGroupsErrorsInWeirWords runs every groups command against an address
// nobody listens on: each fails saying so and what to do, not in the
// client library's words ("request ListGroups has 1 separate shard
// errors, first: unable to dial: ...").
func TestGroupsErrorsInWeirWords(t *testing.T) {
	addr := harness.FreeAddr(t)
	for _, args := range [][]string{
		{"list"},
		{"list", "--format", "json"},
		{"describe", "--group", "g"},
		{"describe", "--all-groups"},
		{"delete", "--group", "g"},
		{"delete", "--all-groups"},
		{"delete-offsets", "--group", "g", "--topic", "t:0"},
		{"delete-offsets", "--group", "g", "--topic", "t"},
		{"reset-offsets", "--group", "g", "--topic", "t", "--to-earliest"},
		{"reset-offsets", "--all-groups", "--topic", "t", "--to-earliest"},
	} {
		code, stdout, stderr := runCmd(t, append([]string{"groups"}, append(args, "--bootstrap-server", addr, "--timeout", "10s")...)...)
		if code != 1 || stdout != "" || strings.Contains(stderr, "shard errors") || strings.Contains(stderr, "unable to dial") ||
			!strings.Contains(stderr, "no broker is listening at "+addr) {
			t.Errorf("weir groups %q against nothing: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
}
