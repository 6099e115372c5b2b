package main

import (
	"slices"
	"strings"
	"testing"
)

// TestGroupsChangesJSON checks --format json of the groups commands that
// change offsets or groups: reset-offsets (the plan, beside the text plan
// and its warnings), delete-offsets (the rows of the table) and delete (a
// result per group).
func TestGroupsChangesJSON(t *testing.T) {
	f := newGroupsFixture(t)
	reset := []string{"groups", "reset-offsets", "--bootstrap-server", f.brokers, "--group", "idle", "--topic", groupsTopic, "--to-offset", "5"}

	// The idle group's committed offsets are 1 2 3 and orders' ends 4 6 8:
	// --to-offset 5 holds partition 0 at 4, with a warning.
	code, text, textErr := runCmd(t, reset...)
	if code != 0 {
		t.Fatalf("reset-offsets: exit %d, stderr %q", code, textErr)
	}
	code, out, jsonErr := runCmd(t, append(reset, "--format", "json")...)
	if code != 0 {
		t.Fatalf("reset-offsets --format json: exit %d, stderr %q", code, jsonErr)
	}
	var plans []struct {
		Group    string `json:"group"`
		Executed bool   `json:"executed"`
		Offsets  []struct {
			Topic         string `json:"topic"`
			Partition     int32  `json:"partition"`
			CurrentOffset *int64 `json:"current_offset"`
			NewOffset     int64  `json:"new_offset"`
		} `json:"offsets"`
		Warnings []string `json:"warnings"`
	}
	decodeJSON(t, out, &plans)
	if len(plans) != 1 || plans[0].Group != "idle" || plans[0].Executed || len(plans[0].Offsets) != len(groupsEnds) {
		t.Fatalf("reset-offsets --format json:\n%s", out)
	}
	var newOffsets, current []int64
	for i, o := range plans[0].Offsets {
		if o.Topic != groupsTopic || o.Partition != int32(i) || o.CurrentOffset == nil {
			t.Fatalf("plan row %d: %+v", i, o)
		}
		newOffsets = append(newOffsets, o.NewOffset)
		current = append(current, *o.CurrentOffset)
	}
	if want := planOffsets(t, text); !slices.Equal(newOffsets, want) || !slices.Equal(want, []int64{4, 5, 5}) {
		t.Errorf("JSON new offsets %v, text %v, want 4 5 5", newOffsets, want)
	}
	if !slices.Equal(current, []int64{1, 2, 3}) {
		t.Errorf("JSON current offsets %v, want the committed 1 2 3", current)
	}
	if w := warnings(textErr); !slices.Equal(plans[0].Warnings, w) || len(w) != 1 || !strings.Contains(w[0], "higher than latest offset") {
		t.Errorf("JSON warnings %q, text's %q", plans[0].Warnings, w)
	}
	if got := f.idleCommitted(t); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("a plan without --execute committed %v", got)
	}
	if code, stdout, stderr := runCmd(t, append(reset, "--format", "json", "--export")...); code != 2 || stdout != "" || !strings.Contains(stderr, "--export") {
		t.Errorf("--format json --export: exit %d, stdout %q, stderr %q; want a usage error", code, stdout, stderr)
	}
	decodeJSON(t, mustRun(t, append(reset, "--format", "json", "--execute")...), &plans)
	if len(plans) != 1 || !plans[0].Executed {
		t.Errorf("--execute --format json: %+v", plans)
	}
	if got := f.idleCommitted(t); !slices.Equal(got, []int64{4, 5, 5}) {
		t.Errorf("after --execute idle has committed %v, want 4 5 5", got)
	}

	// delete-offsets: one row per partition, the table's STATUS as deleted
	// and error.
	type deletedRows struct {
		Group      string `json:"group"`
		Partitions []struct {
			Topic     string `json:"topic"`
			Partition *int32 `json:"partition"`
			Deleted   bool   `json:"deleted"`
			Error     string `json:"error"`
		} `json:"partitions"`
	}
	var rows deletedRows
	decodeJSON(t, mustRun(t, "groups", "delete-offsets", "--bootstrap-server", f.brokers, "--group", "idle", "--topic", groupsTopic+":0", "--format", "json"), &rows)
	if rows.Group != "idle" || len(rows.Partitions) != 1 || rows.Partitions[0].Topic != groupsTopic ||
		rows.Partitions[0].Partition == nil || *rows.Partitions[0].Partition != 0 || !rows.Partitions[0].Deleted || rows.Partitions[0].Error != "" {
		t.Errorf("delete-offsets idle orders:0 --format json: %+v", rows)
	}
	code, out, stderr := runCmd(t, "groups", "delete-offsets", "--bootstrap-server", f.brokers, "--group", "live", "--topic", groupsTopic, "--topic", "nope", "--format", "json")
	rows = deletedRows{}
	decodeJSON(t, out, &rows)
	if code != 1 || !strings.Contains(stderr, "could not be deleted") || len(rows.Partitions) != 4 {
		t.Fatalf("delete-offsets live: exit %d, stderr %q, stdout:\n%s", code, stderr, out)
	}
	if r := rows.Partitions[0]; r.Topic != "nope" || r.Partition != nil || r.Deleted || !strings.HasPrefix(r.Error, "UNKNOWN_TOPIC_OR_PARTITION") {
		t.Errorf("unknown topic row %+v", r)
	}
	for i, r := range rows.Partitions[1:] {
		if r.Topic != groupsTopic || r.Partition == nil || *r.Partition != int32(i) || r.Deleted || !strings.HasPrefix(r.Error, "GROUP_SUBSCRIBED_TO_TOPIC") {
			t.Errorf("live row %+v", r)
		}
	}

	// delete: a result per group, in the order given.
	var deleted []struct {
		Group   string `json:"group"`
		Deleted bool   `json:"deleted"`
		Error   string `json:"error"`
	}
	code, out, stderr = runCmd(t, "groups", "delete", "--bootstrap-server", f.brokers, "--group", "live", "--group", "idle", "--format", "json")
	decodeJSON(t, out, &deleted)
	if code != 1 || !strings.Contains(stderr, `delete group "live": NON_EMPTY_GROUP`) || len(deleted) != 2 ||
		deleted[0].Group != "live" || deleted[0].Deleted || !strings.HasPrefix(deleted[0].Error, "NON_EMPTY_GROUP") ||
		deleted[1].Group != "idle" || !deleted[1].Deleted || deleted[1].Error != "" {
		t.Errorf("delete live idle --format json: exit %d, stderr %q, %+v", code, stderr, deleted)
	}
	if out := mustRun(t, "groups", "list", "--bootstrap-server", f.brokers); out != "live\n" {
		t.Errorf("list after delete printed %q", out)
	}
}
