package main

import (
	"slices"
	"testing"
)

// decodeJSON decodes out, which must be one JSON document, into v.
func TestGroupsListJSON(t *testing.T) {
	f := newGroupsFixture(t)
	var listed []struct {
		Group        string `json:"group"`
		State        string `json:"state"`
		ProtocolType string `json:"protocol_type"`
	}
	decodeJSON(t, mustRun(t, "groups", "list", "--bootstrap-server", f.brokers, "--format", "json"), &listed)
	if len(listed) != 2 || listed[0].Group != "idle" || listed[0].State != "Empty" ||
		listed[1].Group != "live" || listed[1].State != "Stable" || listed[1].ProtocolType != "consumer" {
		t.Errorf("list --format json: %+v", listed)
	}
	decodeJSON(t, mustRun(t, "groups", "list", "--bootstrap-server", f.brokers, "--format", "json", "--state", "stable"), &listed)
	if len(listed) != 1 || listed[0].Group != "live" {
		t.Errorf("list --state stable --format json: %+v", listed)
	}
}

// describedGroup is what the tests read of `groups describe --format json`.
type describedGroup struct {
	Group              string `json:"group"`
	State              string `json:"state"`
	AssignmentStrategy string `json:"assignment_strategy"`
	Coordinator        struct {
		NodeID int32  `json:"node_id"`
		Host   string `json:"host"`
		Port   int32  `json:"port"`
	} `json:"coordinator"`
	NumMembers int `json:"num_members"`
	Offsets    []struct {
		Topic         string `json:"topic"`
		Partition     int32  `json:"partition"`
		CurrentOffset *int64 `json:"current_offset"`
		LogEndOffset  *int64 `json:"log_end_offset"`
		Lag           *int64 `json:"lag"`
		ConsumerID    string `json:"consumer_id"`
		ClientID      string `json:"client_id"`
	} `json:"offsets"`
	Members []struct {
		ConsumerID    string `json:"consumer_id"`
		ClientID      string `json:"client_id"`
		NumPartitions int    `json:"num_partitions"`
		Assignment    []struct {
			Topic      string  `json:"topic"`
			Partitions []int32 `json:"partitions"`
		} `json:"assignment"`
	} `json:"members"`
}

// orNone is *p, or -1 for nil.
func orNone(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

func TestGroupsDescribeJSON(t *testing.T) {
	f := newGroupsFixture(t)
	describe := func(args ...string) []describedGroup {
		t.Helper()
		var out []describedGroup
		decodeJSON(t, mustRun(t, append([]string{"groups", "describe", "--bootstrap-server", f.brokers, "--format", "json"}, args...)...), &out)
		return out
	}

	got := describe("--group", "live", "--group", "idle")
	if len(got) != 2 || got[0].Group != "live" || got[1].Group != "idle" {
		t.Fatalf("describe live idle: %+v", got)
	}
	live := got[0]
	if live.State != "Stable" || live.NumMembers != 1 || live.AssignmentStrategy != "cooperative-sticky" || live.Coordinator.Host != "127.0.0.1" || live.Members != nil {
		t.Errorf("live: %+v", live)
	}
	want := [][3]int64{{2, 4, 2}, {5, 6, 1}, {-1, 8, -1}} // current, end, lag; -1 for null
	if len(live.Offsets) != 3 {
		t.Fatalf("live offsets: %+v", live.Offsets)
	}
	for i, o := range live.Offsets {
		row := [3]int64{orNone(o.CurrentOffset), orNone(o.LogEndOffset), orNone(o.Lag)}
		if o.Topic != groupsTopic || o.Partition != int32(i) || row != want[i] || o.ConsumerID != f.memberID || o.ClientID != "weir-groups-test" {
			t.Errorf("live partition %d: %+v, want current/end/lag %v", i, o, want[i])
		}
	}
	if idle := got[1]; idle.State != "Empty" || idle.NumMembers != 0 || len(idle.Offsets) != 3 || orNone(idle.Offsets[2].Lag) != 5 || idle.Offsets[2].ConsumerID != "" {
		t.Errorf("idle: %+v", idle)
	}

	got = describe("--group", "live", "--members")
	if len(got) != 1 || got[0].Offsets != nil || len(got[0].Members) != 1 {
		t.Fatalf("describe --members: %+v", got)
	}
	m := got[0].Members[0]
	if m.ConsumerID != f.memberID || m.ClientID != "weir-groups-test" || m.NumPartitions != 3 ||
		len(m.Assignment) != 1 || m.Assignment[0].Topic != groupsTopic || !slices.Equal(m.Assignment[0].Partitions, []int32{0, 1, 2}) {
		t.Errorf("member: %+v", m)
	}

	got = describe("--all-groups", "--state")
	if len(got) != 2 || got[0].Group != "idle" || got[1].Group != "live" || got[0].Offsets != nil || got[0].Members != nil || got[1].State != "Stable" {
		t.Errorf("describe --all-groups --state: %+v", got)
	}

	if code, stdout, _ := runCmd(t, "groups", "describe", "--bootstrap-server", f.brokers, "--group", "live", "--format", "yaml"); code != 2 || stdout != "" {
		t.Errorf("--format yaml: exit %d, stdout %q; want 2 and nothing", code, stdout)
	}
}
