package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirmq/weir/internal/harness"
)

// groupsFixture is a `weir serve` process with topic "orders" of three
// partitions holding 4, 6 and 8 records, record i of each partition
// stamped t0 + i*10 minutes (t0 is two hours ago); group "idle" has
// offsets 1, 2 and 3 committed and no members; group "live" has one
// member, client id "weir-groups-test", assigned every partition, with
// offsets 2 (partition 0) and 5 (partition 1) committed and none for
// partition 2.
type groupsFixture struct {
	brokers  string
	adm      *kadm.Client
	memberID string
	t0       time.Time
}

const groupsTopic = "orders"

var groupsEnds = []int64{4, 6, 8}

// groupsRecordGap is the time between the records of a partition.
const groupsRecordGap = 10 * time.Minute

func newGroupsFixture(t *testing.T) *groupsFixture {
	t.Helper()
	addr := harness.FreeAddr(t)
	// The live group's first join need not wait out Kafka's 3 s delay.
	props := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(props, []byte("group.initial.rebalance.delay.ms=0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	startServe(t, "--data", t.TempDir(), "--listen", addr, "--config", props)
	f := &groupsFixture{brokers: addr, t0: time.Now().Add(-2 * time.Hour).Truncate(time.Millisecond)}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	producer := newTestClient(t, f.brokers, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	f.adm = kadm.NewClient(producer)
	if _, err := f.adm.CreateTopic(ctx, int32(len(groupsEnds)), 1, nil, groupsTopic); err != nil {
		t.Fatal(err)
	}
	for p, n := range groupsEnds {
		for i := range n {
			ts := f.t0.Add(time.Duration(i) * groupsRecordGap)
			r := &kgo.Record{Topic: groupsTopic, Partition: int32(p), Value: []byte("v"), Timestamp: ts}
			if err := producer.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	idle := make(kadm.Offsets)
	for p := range 3 {
		idle.Add(kadm.Offset{Topic: groupsTopic, Partition: int32(p), At: int64(p + 1), LeaderEpoch: -1})
	}
	if err := f.adm.CommitAllOffsets(ctx, "idle", idle); err != nil {
		t.Fatal(err)
	}

	assigned := make(chan struct{}, 1)
	member := newTestClient(t, f.brokers,
		kgo.ConsumerGroup("live"), kgo.ConsumeTopics(groupsTopic), kgo.ClientID("weir-groups-test"),
		kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			select {
			case assigned <- struct{}{}:
			default:
			}
		}))
	go func() { // polling drives the group's heartbeats and assignment
		for ctx := t.Context(); ctx.Err() == nil && !member.PollFetches(ctx).IsClientClosed(); {
		}
	}()
	select {
	case <-assigned:
	case <-ctx.Done():
		t.Fatal("the live group's member was never assigned partitions")
	}
	f.memberID, _ = member.GroupMetadata()
	live := map[string]map[int32]kgo.EpochOffset{groupsTopic: {0: {Epoch: -1, Offset: 2}, 1: {Epoch: -1, Offset: 5}}}
	var commitErr error
	member.CommitOffsetsSync(ctx, live, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		commitErr = err
		if err == nil {
			commitErr = offsetCommitError(resp)
		}
	})
	if commitErr != nil {
		t.Fatalf("commit the live group's offsets: %v", commitErr)
	}
	return f
}

// offsetCommitError returns the first partition error of resp.
func offsetCommitError(resp *kmsg.OffsetCommitResponse) error {
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("%s-%d: %w", t.Topic, p.Partition, err)
			}
		}
	}
	return nil
}

// mustInt parses a decimal int64.
func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}

// newTestClient returns a kgo client of brokers, closed when t ends.
func newTestClient(t *testing.T, brokers string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(brokers, ",")...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// tableRows splits a tab-aligned table into its rows' fields, header
// first.
func tableRows(out string) [][]string {
	var rows [][]string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		rows = append(rows, strings.Fields(l))
	}
	return rows
}

func TestGroupsDescribeOffsetsAndLag(t *testing.T) {
	f := newGroupsFixture(t)

	out := mustRun(t, "groups", "describe", "--brokers", f.brokers, "--group", "live")
	rows := tableRows(out)
	wantHead := []string{"GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"}
	if len(rows) != 4 || !slices.Equal(rows[0], wantHead) {
		t.Fatalf("describe live printed:\n%s", out)
	}
	want := [][]string{
		{"live", groupsTopic, "0", "2", "4", "2"},
		{"live", groupsTopic, "1", "5", "6", "1"},
		{"live", groupsTopic, "2", "-", "8", "-"},
	}
	for i, w := range want {
		r := rows[i+1]
		if len(r) != 9 || !slices.Equal(r[:6], w) || r[6] != f.memberID || r[7] == "-" || r[8] != "weir-groups-test" {
			t.Errorf("row %d: %q, want %q then member %s, a host and weir-groups-test", i, r, w, f.memberID)
		}
	}
	// Columns are aligned: every line has CONSUMER-ID at the same column.
	lines := strings.Split(out, "\n")
	col := strings.Index(lines[0], "CONSUMER-ID")
	for _, l := range lines[1:4] {
		if !strings.HasPrefix(l[col:], f.memberID) {
			t.Errorf("line %q: CONSUMER-ID not at column %d", l, col)
		}
	}

	code, out, stderr := runCmd(t, "groups", "describe", "--brokers", f.brokers, "--group", "idle")
	if code != 0 || stderr != "Consumer group 'idle' has no active members.\n" {
		t.Fatalf("describe idle: exit %d, stderr %q", code, stderr)
	}
	rows = tableRows(out)
	want = [][]string{
		{"idle", groupsTopic, "0", "1", "4", "3", "-", "-", "-"},
		{"idle", groupsTopic, "1", "2", "6", "4", "-", "-", "-"},
		{"idle", groupsTopic, "2", "3", "8", "5", "-", "-", "-"},
	}
	if len(rows) != 4 || !slices.Equal(rows[0], wantHead) {
		t.Fatalf("describe idle printed:\n%s", out)
	}
	for i, w := range want {
		if !slices.Equal(rows[i+1], w) {
			t.Errorf("idle row %d: %q, want %q", i, rows[i+1], w)
		}
	}
}

func TestGroupsDescribeMembersAndState(t *testing.T) {
	f := newGroupsFixture(t)

	out := mustRun(t, "groups", "describe", "--brokers", f.brokers, "--group", "live", "--members", "--verbose")
	rows := tableRows(out)
	if len(rows) != 2 || !slices.Equal(rows[0], []string{"GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT"}) {
		t.Fatalf("describe --members printed:\n%s", out)
	}
	if r := rows[1]; len(r) != 6 || r[0] != "live" || r[1] != f.memberID || r[3] != "weir-groups-test" || r[4] != "3" || r[5] != "orders(0,1,2)" {
		t.Errorf("member row %q", r)
	}
	out = mustRun(t, "groups", "describe", "--brokers", f.brokers, "--group", "live", "--members")
	if rows := tableRows(out); len(rows) != 2 || len(rows[1]) != 5 {
		t.Errorf("describe --members without --verbose printed:\n%s", out)
	}

	out = mustRun(t, "groups", "describe", "--brokers", f.brokers, "--group", "live", "--group", "idle", "--state")
	re := regexp.MustCompile(`^GROUP +COORDINATOR \(ID\) +ASSIGNMENT-STRATEGY +STATE +#MEMBERS\n` +
		`live +127\.0\.0\.1:\d+ \(\d+\) +cooperative-sticky +Stable +1\n\n` +
		`GROUP +COORDINATOR \(ID\) +ASSIGNMENT-STRATEGY +STATE +#MEMBERS\n` +
		`idle +127\.0\.0\.1:\d+ \(\d+\) +- +Empty +0\n$`)
	if !re.MatchString(out) {
		t.Errorf("describe --state printed:\n%s", out)
	}
}

func TestGroupsListAndDelete(t *testing.T) {
	f := newGroupsFixture(t)

	if out := mustRun(t, "groups", "list", "--brokers", f.brokers); out != "idle\nlive\n" {
		t.Errorf("list printed %q", out)
	}
	out := mustRun(t, "groups", "list", "--brokers", f.brokers, "--state", "empty")
	if rows := tableRows(out); !slices.Equal(slices.Concat(rows...), []string{"GROUP", "STATE", "idle", "Empty"}) {
		t.Errorf("list --state empty printed %q", out)
	}
	out = mustRun(t, "groups", "list", "--brokers", f.brokers, "--state", "Stable,Empty")
	if rows := tableRows(out); !slices.Equal(slices.Concat(rows...), []string{"GROUP", "STATE", "idle", "Empty", "live", "Stable"}) {
		t.Errorf("list --state Stable,Empty printed %q", out)
	}

	code, stdout, stderr := runCmd(t, "groups", "delete", "--brokers", f.brokers, "--group", "live")
	if code != 1 || !strings.Contains(stdout, "* Group 'live' could not be deleted due to: NON_EMPTY_GROUP") ||
		!strings.Contains(stderr, `delete group "live": NON_EMPTY_GROUP`) {
		t.Errorf("delete live: exit %d, stdout %q, stderr %q; want 1 and NON_EMPTY_GROUP", code, stdout, stderr)
	}
	out = mustRun(t, "groups", "delete", "--brokers", f.brokers, "--group", "idle")
	if out != "Deletion of requested consumer groups ('idle') was successful.\n" {
		t.Errorf("delete idle printed %q", out)
	}
	if out := mustRun(t, "groups", "list", "--brokers", f.brokers); out != "live\n" {
		t.Errorf("list after delete printed %q", out)
	}
	code, _, stderr = runCmd(t, "groups", "describe", "--brokers", f.brokers, "--group", "idle")
	if code != 1 || stderr != "weir groups: consumer group 'idle' does not exist\n" {
		t.Errorf("describe deleted group: exit %d, stderr %q", code, stderr)
	}
}

func TestGroupsResetOffsets(t *testing.T) {
	f := newGroupsFixture(t)
	reset := func(args ...string) string {
		return mustRun(t, append([]string{"groups", "reset-offsets", "--brokers", f.brokers, "--group", "idle"}, args...)...)
	}
	committed := func() []int64 {
		t.Helper()
		resp, err := f.adm.FetchOffsets(t.Context(), "idle")
		if err != nil {
			t.Fatal(err)
		}
		var at []int64
		for p := range 3 {
			o, _ := resp.Lookup(groupsTopic, int32(p))
			at = append(at, o.At)
		}
		return at
	}
	plan := func(out string) []int64 {
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

	// A dry run prints the plan and changes nothing.
	if got := plan(reset("--topic", groupsTopic, "--to-earliest")); !slices.Equal(got, []int64{0, 0, 0}) {
		t.Errorf("dry-run plan %v, want 0 0 0", got)
	}
	if got := committed(); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("after a dry run the offsets are %v, want 1 2 3 unchanged", got)
	}
	steps := []struct {
		args []string
		want []int64
	}{
		{[]string{"--topic", groupsTopic, "--shift-by", "2"}, []int64{3, 4, 5}},
		{[]string{"--all-topics", "--shift-by", "-4"}, []int64{0, 0, 1}},
		{[]string{"--topic", groupsTopic, "--to-offset", "5"}, []int64{4, 5, 5}}, // held at each log end
		{[]string{"--topic", groupsTopic + ":1,2", "--to-earliest"}, []int64{4, 0, 0}},
		{[]string{"--topic", groupsTopic, "--to-latest"}, []int64{4, 6, 8}},
	}
	for _, s := range steps {
		out := reset(append(s.args, "--execute")...)
		if got := committed(); !slices.Equal(got, s.want) {
			t.Errorf("reset %q: committed %v, want %v; it printed:\n%s", s.args, got, s.want, out)
		}
	}

	// A group with members cannot be reset.
	code, _, stderr := runCmd(t, "groups", "reset-offsets", "--brokers", f.brokers, "--group", "live", "--topic", groupsTopic, "--to-earliest", "--execute")
	if code != 1 || !strings.Contains(stderr, "the current state is Stable") {
		t.Errorf("reset of a live group: exit %d, stderr %q", code, stderr)
	}
}

func TestPlanReset(t *testing.T) {
	parts := []partitionOffsets{
		{topic: "b", partition: 0, committed: 5, start: 2, end: 10, atTime: 7, requested: 1},
		{topic: "a", partition: 1, committed: -1, start: 0, end: 3, atTime: 3, requested: 2},
		{topic: "a", partition: 0, committed: 1, start: 1, end: 1, atTime: -1, requested: 1},
	}
	cases := []struct {
		spec     resetSpec
		want     []int64 // a-0, a-1, b-0
		warnings []string
	}{
		{resetSpec{kind: resetEarliest}, []int64{1, 0, 2}, nil},
		{resetSpec{kind: resetLatest}, []int64{1, 3, 10}, nil},
		{resetSpec{kind: resetToOffset, n: 4}, []int64{1, 3, 4}, []string{
			"New offset (4) is higher than latest offset for topic partition a-1. Value will be set to 3",
			"New offset (4) is higher than latest offset for topic partition a-0. Value will be set to 1",
		}},
		{resetSpec{kind: resetToOffset, n: 0}, []int64{1, 0, 2}, []string{
			"New offset (0) is lower than earliest offset for topic partition b-0. Value will be set to 2",
			"New offset (0) is lower than earliest offset for topic partition a-0. Value will be set to 1",
		}},
		{resetSpec{kind: resetToCurrent}, []int64{1, 3, 5}, nil},
		{resetSpec{kind: resetToTime, n: 1}, []int64{1, 3, 7}, []string{
			"Partition 1 from topic a is empty. Falling back to latest known offset.",
			"Partition 0 from topic a is empty. Falling back to latest known offset.",
		}},
		{resetSpec{kind: resetFromFile}, []int64{1, 2, 2}, []string{
			"New offset (1) is lower than earliest offset for topic partition b-0. Value will be set to 2",
		}},
	}
	for _, c := range cases {
		plan, err := planReset(c.spec, parts)
		if err != nil {
			t.Fatalf("%+v: %v", c.spec, err)
		}
		var got []int64
		for _, p := range plan.offsets {
			got = append(got, p.offset)
		}
		if !slices.Equal(got, c.want) || plan.offsets[0].topic != "a" || plan.offsets[0].partition != 0 || plan.offsets[2].topic != "b" {
			t.Errorf("%+v: plan %+v, want offsets %v in topic/partition order", c.spec, plan, c.want)
		}
		if !slices.Equal(plan.warnings, c.warnings) {
			t.Errorf("%+v: warnings %q, want %q", c.spec, plan.warnings, c.warnings)
		}
	}
	if _, err := planReset(resetSpec{kind: resetShiftBy, n: 1}, parts); err == nil || !strings.Contains(err.Error(), "a-1") {
		t.Errorf("shift-by without a commit: %v, want an error naming a-1", err)
	}
	plan, err := planReset(resetSpec{kind: resetShiftBy, n: -1 << 62}, parts[:1])
	if err != nil || plan.offsets[0].offset != 2 || len(plan.warnings) != 1 {
		t.Errorf("shift far back: %+v %v, want the log start 2 and a warning", plan, err)
	}
}

func TestGroupsUsageErrorsExitTwo(t *testing.T) {
	cases := [][]string{
		{},
		{"no-such-command"},
		{"list", "--state", "Sleeping"},
		{"list", "extra"},
		{"describe"},
		{"describe", "--group", "g", "--members", "--state"},
		{"describe", "--group", "g", "--verbose"},
		{"delete"},
		{"reset-offsets", "--group", "g", "--topic", "t"},
		{"reset-offsets", "--group", "g", "--to-earliest"},
		{"reset-offsets", "--topic", "t", "--to-earliest"},
		{"reset-offsets", "--group", "g", "--topic", "t", "--to-earliest", "--to-latest"},
		{"reset-offsets", "--group", "g", "--topic", "t", "--all-topics", "--to-earliest"},
		{"reset-offsets", "--group", "g", "--topic", "t", "--to-offset", "-1"},
		{"reset-offsets", "--group", "g", "--topic", "t", "--shift-by", "x"},
		{"reset-offsets", "--group", "g", "--topic", "t:x", "--to-earliest"},
		{"reset-offsets", "--group", "g", "--topic", "t", "--to-earliest", "--execute", "--dry-run"},
		{"delete", "--group", "g", "--all-groups"},
		{"delete-offsets", "--group", "g"},
		{"delete-offsets", "--topic", "t"},
		{"delete-offsets", "--group", "g", "--topic", "t:x"},
		{"describe", "--all-groups", "--group", "g"},
		{"list", "--format", "xml"},
		{"reset-offsets", "--all-groups", "--group", "g", "--topic", "t", "--to-earliest"},
		{"reset-offsets", "--group", "g", "--topic", "t", "--to-current", "--to-latest"},
		{"reset-offsets", "--group", "g", "--from-file", "f.csv", "--topic", "t"},
		{"reset-offsets", "--group", "g", "--to-current"},
	}
	for _, args := range cases {
		code, stdout, _ := runCmd(t, append([]string{"groups"}, args...)...)
		if code != 2 || stdout != "" {
			t.Errorf("weir groups %q: exit %d, stdout %q; want 2 and nothing", args, code, stdout)
		}
	}
}
