package main

import (
	"slices"
	"strings"
	"testing"
)

func TestGroupsDeleteOffsets(t *testing.T) {
	f := newGroupsFixture(t)
	deleteOffsets := func(group string, topics ...string) (int, string, string) {
		args := []string{"groups", "delete-offsets", "--bootstrap-server", f.brokers, "--group", group}
		for _, tp := range topics {
			args = append(args, "--topic", tp)
		}
		return runCmd(t, args...)
	}
	committed := func() []int32 {
		t.Helper()
		resp, err := f.adm.FetchOffsets(t.Context(), "idle")
		if err != nil {
			t.Fatal(err)
		}
		var ps []int32
		for p := range int32(3) {
			if _, ok := resp.Lookup(groupsTopic, p); ok {
				ps = append(ps, p)
			}
		}
		return ps
	}

	// One partition of an empty group: Kafka's success line and table.
	code, stdout, stderr := deleteOffsets("idle", groupsTopic+":0")
	lines := strings.Split(stdout, "\n")
	if code != 0 || stderr != "" || lines[0] != "Request succeed for deleting offsets with topic orders:0 group idle" {
		t.Fatalf("delete-offsets idle orders:0: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	if rows := tableRows(strings.Join(lines[1:], "\n")); !slices.Equal(slices.Concat(rows...), []string{"TOPIC", "PARTITION", "STATUS", groupsTopic, "0", "Successful"}) {
		t.Errorf("delete-offsets table:\n%s", stdout)
	}
	if got := committed(); !slices.Equal(got, []int32{1, 2}) {
		t.Errorf("after deleting orders:0 idle has offsets for partitions %v, want 1 2", got)
	}

	// A whole topic beside one that does not exist: the topic's partitions
	// succeed (one had no offset left), the unknown topic is a failed row.
	code, stdout, stderr = deleteOffsets("idle", groupsTopic, "nope")
	rows := tableRows(stdout)
	want := [][]string{
		{"TOPIC", "PARTITION", "STATUS"},
		{"nope", "-", "Error:", "UNKNOWN_TOPIC_OR_PARTITION:"},
		{groupsTopic, "0", "Successful"},
		{groupsTopic, "1", "Successful"},
		{groupsTopic, "2", "Successful"},
	}
	if code != 1 || len(rows) != len(want) || !strings.Contains(stderr, "1 of 4 partitions could not be deleted") {
		t.Fatalf("delete-offsets idle orders nope: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	for i, w := range want {
		if len(rows[i]) < len(w) || !slices.Equal(rows[i][:len(w)], w) {
			t.Errorf("row %d %q, want %q...", i, rows[i], w)
		}
	}
	if got := committed(); len(got) != 0 {
		t.Errorf("after deleting topic orders idle has offsets for partitions %v", got)
	}

	// A member subscribes to the topic: each partition is refused.
	code, stdout, _ = deleteOffsets("live", groupsTopic)
	rows = tableRows(stdout)
	if code != 1 || len(rows) != 4 || strings.Contains(stdout, "Request succeed") {
		t.Fatalf("delete-offsets live: exit %d, stdout:\n%s", code, stdout)
	}
	for _, r := range rows[1:] {
		if len(r) < 4 || r[2] != "Error:" || r[3] != "GROUP_SUBSCRIBED_TO_TOPIC:" {
			t.Errorf("live row %q, want Error: GROUP_SUBSCRIBED_TO_TOPIC", r)
		}
	}

	code, stdout, stderr = deleteOffsets("ghost", groupsTopic+":0")
	if code != 1 || stdout != "" || stderr != "weir groups: consumer group 'ghost' does not exist\n" {
		t.Errorf("delete-offsets of a group that does not exist: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
