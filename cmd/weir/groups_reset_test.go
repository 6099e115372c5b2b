package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// idleCommitted returns the idle group's committed offsets of orders'
// partitions (-1 for none).
func (f *groupsFixture) idleCommitted(t *testing.T) []int64 {
	t.Helper()
	resp, err := f.adm.FetchOffsets(t.Context(), "idle")
	if err != nil {
		t.Fatal(err)
	}
	var at []int64
	for p := range int32(len(groupsEnds)) {
		o, ok := resp.Lookup(groupsTopic, p)
		if !ok {
			o.At = -1
		}
		at = append(at, o.At)
	}
	return at
}

// planOffsets returns the NEW-OFFSET column of the idle group's plan.
func planOffsets(t *testing.T, out string) []int64 {
	t.Helper()
	rows := tableRows(out)
	if len(rows) == 0 || !slices.Equal(rows[0], []string{"GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"}) {
		t.Fatalf("plan:\n%s", out)
	}
	var at []int64
	for _, r := range rows[1:] {
		if len(r) != 4 || r[0] != "idle" || r[1] != groupsTopic {
			t.Fatalf("plan row %q", r)
		}
		at = append(at, mustInt(t, r[3]))
	}
	return at
}

// warnings returns the WARN: lines of stderr but the one for a missing
// --execute.
func warnings(stderr string) []string {
	var w []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "WARN: ") && !strings.Contains(l, "--execute") {
			w = append(w, strings.TrimPrefix(l, "WARN: "))
		}
	}
	return w
}

func TestGroupsResetOffsetsByTime(t *testing.T) {
	f := newGroupsFixture(t)
	reset := func(args ...string) (string, []string) {
		t.Helper()
		code, stdout, stderr := runCmd(t, append([]string{"groups", "reset-offsets", "--bootstrap-server", f.brokers, "--group", "idle", "--topic", groupsTopic}, args...)...)
		if code != 0 {
			t.Fatalf("reset %q: exit %d, stderr %q", args, code, stderr)
		}
		return stdout, warnings(stderr)
	}
	const kafkaDatetime = "2006-01-02T15:04:05.000"
	// Record i of each partition is stamped t0 + i*10m: 25 minutes after t0
	// the first record at or after it is offset 3, in any zone.
	at := f.t0.Add(25 * time.Minute)
	for _, s := range []string{
		at.UTC().Format(kafkaDatetime),
		at.UTC().Format(kafkaDatetime) + "Z",
		at.In(time.FixedZone("", 5*3600+1800)).Format(kafkaDatetime + "-07:00"),
		at.In(time.FixedZone("", -8*3600)).Format(kafkaDatetime + "-0700"),
		at.In(time.FixedZone("", 2*3600)).Format(kafkaDatetime + "-07"),
	} {
		out, warn := reset("--to-datetime", s)
		if got := planOffsets(t, out); !slices.Equal(got, []int64{3, 3, 3}) || warn != nil {
			t.Errorf("--to-datetime %s: plan %v, warnings %q; want 3 3 3 and none", s, got, warn)
		}
	}
	// Past the last record of partitions 0 and 1: their log end, as Kafka
	// says.
	out, warn := reset("--to-datetime", f.t0.Add(65*time.Minute).UTC().Format(kafkaDatetime))
	wantWarn := []string{
		"Partition 0 from topic orders is empty. Falling back to latest known offset.",
		"Partition 1 from topic orders is empty. Falling back to latest known offset.",
	}
	if got := planOffsets(t, out); !slices.Equal(got, []int64{4, 6, 7}) || !slices.Equal(warn, wantWarn) {
		t.Errorf("--to-datetime t0+65m: plan %v, warnings %q; want 4 6 7 and %q", got, warn, wantWarn)
	}
	if got := f.idleCommitted(t); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("dry runs changed the offsets to %v", got)
	}

	// t0 is two hours ago: 85 minutes ago is t0+35m (the run takes far less
	// than the 5 minutes to the next record), so offset 4.
	out, warn = reset("--by-duration", "PT85M", "--execute")
	if got := planOffsets(t, out); !slices.Equal(got, []int64{4, 4, 4}) || !slices.Equal(warn, wantWarn[:1]) {
		t.Errorf("--by-duration PT85M: plan %v, warnings %q", got, warn)
	}
	if got := f.idleCommitted(t); !slices.Equal(got, []int64{4, 4, 4}) {
		t.Errorf("after --by-duration PT85M --execute the offsets are %v, want 4 4 4", got)
	}
	if out, _ := reset("--by-duration", "P1DT0.5S"); !slices.Equal(planOffsets(t, out), []int64{0, 0, 0}) {
		t.Errorf("--by-duration P1DT0.5S planned:\n%s", out)
	}

	for _, bad := range [][]string{
		{"--to-datetime", "2026-11-10T16:51:38"},
		{"--to-datetime", "2026-11-10 16:51:38.000"},
		{"--to-datetime", "2026-02-30T16:51:38.000"},
		{"--to-datetime", "2026-11-10T16:51:38.000+25:00"},
		{"--by-duration", "30m"},
		{"--by-duration", "PT"},
		{"--by-duration", "P"},
		{"--by-duration", "P1M"}, // months are not a Duration in Java either
		{"--to-datetime", "2026-11-10T16:51:38.000", "--by-duration", "PT1M"},
	} {
		code, stdout, stderr := runCmd(t, append([]string{"groups", "reset-offsets", "--bootstrap-server", f.brokers, "--group", "idle", "--topic", groupsTopic}, bad...)...)
		if code != 2 || stdout != "" {
			t.Errorf("reset %q: exit %d, stdout %q, stderr %q; want a usage error", bad, code, stdout, stderr)
		}
	}
}

func TestGroupsResetOffsetsExportAndFromFile(t *testing.T) {
	f := newGroupsFixture(t)
	run := func(args ...string) (int, string, string) {
		return runCmd(t, append([]string{"groups", "reset-offsets", "--bootstrap-server", f.brokers}, args...)...)
	}

	// --to-current --export: the committed offsets as Kafka's CSV.
	code, stdout, stderr := run("--group", "idle", "--all-topics", "--to-current", "--export")
	if code != 0 || stdout != "orders,0,1\norders,1,2\norders,2,3\n" {
		t.Fatalf("--to-current --export: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}

	// --shift-by past the log end warns in Kafka's words and holds there.
	code, stdout, stderr = run("--group", "idle", "--topic", groupsTopic, "--shift-by", "4", "--export")
	wantWarn := []string{"New offset (5) is higher than latest offset for topic partition orders-0. Value will be set to 4"}
	if code != 0 || stdout != "orders,0,4\norders,1,6\norders,2,7\n" || !slices.Equal(warnings(stderr), wantWarn) {
		t.Fatalf("--shift-by 4 --export: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	plan := filepath.Join(t.TempDir(), "plan.csv")
	if err := os.WriteFile(plan, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run("--group", "idle", "--from-file", plan, "--execute")
	if got := f.idleCommitted(t); code != 0 || !slices.Equal(got, []int64{4, 6, 7}) || !slices.Equal(planOffsets(t, stdout), got) {
		t.Fatalf("--from-file the export --execute: exit %d, committed %v, stderr %q, stdout:\n%s", code, got, stderr, stdout)
	}

	// A hand-written file: only its partitions move, held within the log.
	if err := os.WriteFile(plan, []byte("orders,0,0\n\norders,2,99\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run("--group", "idle", "--from-file", plan, "--execute")
	wantWarn = []string{"New offset (99) is higher than latest offset for topic partition orders-2. Value will be set to 8"}
	if got := f.idleCommitted(t); code != 0 || !slices.Equal(got, []int64{0, 6, 8}) || !slices.Equal(warnings(stderr), wantWarn) {
		t.Errorf("--from-file 0,-,99: exit %d, committed %v, stderr %q", code, got, stderr)
	}
	// --shift-by before the log start.
	code, stdout, stderr = run("--group", "idle", "--topic", groupsTopic+":1", "--shift-by", "-10", "--dry-run")
	wantWarn = []string{"New offset (-4) is lower than earliest offset for topic partition orders-1. Value will be set to 0"}
	if code != 0 || !slices.Equal(planOffsets(t, stdout), []int64{0}) || !slices.Equal(warnings(stderr), wantWarn) {
		t.Errorf("--shift-by -10: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}

	// Several groups: CSV lines start with the group; a group with members
	// is refused, the others are planned.
	code, stdout, stderr = run("--all-groups", "--topic", groupsTopic, "--to-earliest", "--export")
	if code != 1 || stdout != "idle,orders,0,0\nidle,orders,1,0\nidle,orders,2,0\n" ||
		!strings.Contains(stderr, "assignments can only be reset if the group 'live' is inactive, but the current state is Stable") {
		t.Errorf("--all-groups --export: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	if err := os.WriteFile(plan, []byte("idle,orders,1,3\nother,orders,1,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run("--group", "idle", "--from-file", plan, "--execute")
	if got := f.idleCommitted(t); code != 0 || !slices.Equal(got, []int64{0, 3, 8}) {
		t.Errorf("--from-file with a group column: exit %d, committed %v, stderr %q", code, got, stderr)
	}
	// Lines without a group need exactly one --group.
	if err := os.WriteFile(plan, []byte("orders,1,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run("--all-groups", "--from-file", plan, "--execute")
	if got := f.idleCommitted(t); code != 1 || !strings.Contains(stderr, "need exactly one --group") || !slices.Equal(got, []int64{0, 3, 8}) {
		t.Errorf("--from-file without groups for --all-groups: exit %d, committed %v, stderr %q", code, got, stderr)
	}
	if code, stdout, _ := run("--group", "idle", "--from-file", plan, "--all-topics"); code != 2 || stdout != "" {
		t.Errorf("--from-file with --all-topics: exit %d, stdout %q; want a usage error", code, stdout)
	}
}
