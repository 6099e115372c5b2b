package main

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// describedGroupJSON is one group of `weir groups describe --format json`:
// its state always, and the partitions (default view) or the members
// (--members) as the text view shows them.
type describedGroupJSON struct {
	Group              string           `json:"group"`
	State              string           `json:"state"`
	ProtocolType       string           `json:"protocol_type"`
	AssignmentStrategy string           `json:"assignment_strategy"`
	Coordinator        coordinatorJSON  `json:"coordinator"`
	NumMembers         int              `json:"num_members"`
	Offsets            *[]offsetRowJSON `json:"offsets,omitempty"`
	Members            *[]memberJSON    `json:"members,omitempty"`
}

// coordinatorJSON is the broker coordinating a group.
type coordinatorJSON struct {
	NodeID int32  `json:"node_id"`
	Host   string `json:"host"`
	Port   int32  `json:"port"`
}

// offsetRowJSON is a partition of a group, or a member without partitions
// (topic empty, partition -1): the CURRENT-OFFSET, LOG-END-OFFSET and LAG
// columns, null where the text prints "-", and the member consuming it.
type offsetRowJSON struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	CurrentOffset *int64 `json:"current_offset"`
	LogEndOffset  *int64 `json:"log_end_offset"`
	Lag           *int64 `json:"lag"`
	ConsumerID    string `json:"consumer_id"`
	Host          string `json:"host"`
	ClientID      string `json:"client_id"`
}

// memberJSON is a member of a group with its assignment.
type memberJSON struct {
	ConsumerID      string               `json:"consumer_id"`
	GroupInstanceID *string              `json:"group_instance_id"`
	Host            string               `json:"host"`
	ClientID        string               `json:"client_id"`
	NumPartitions   int                  `json:"num_partitions"`
	Assignment      []topicPartitionJSON `json:"assignment"`
}

// topicPartitionJSON is a topic and some of its partitions.
type topicPartitionJSON struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// describedJSON returns the JSON document of the groups described.
func describedJSON(groups []kadm.DescribedGroupLag, view describeView) []describedGroupJSON {
	out := []describedGroupJSON{}
	for _, l := range groups {
		g := describedGroupJSON{
			Group:              l.Group,
			State:              l.State,
			ProtocolType:       l.ProtocolType,
			AssignmentStrategy: l.Protocol,
			Coordinator:        coordinatorJSON{NodeID: l.Coordinator.NodeID, Host: l.Coordinator.Host, Port: l.Coordinator.Port},
			NumMembers:         len(l.Members),
		}
		switch view {
		case viewOffsets:
			rows := offsetRows(l)
			g.Offsets = &rows
		case viewMembers:
			members := []memberJSON{}
			for _, m := range sortedMembers(l.Members) {
				assignment := memberTopics(m)
				n := 0
				for _, t := range assignment {
					n += len(t.Partitions)
				}
				members = append(members, memberJSON{
					ConsumerID: m.MemberID, GroupInstanceID: m.InstanceID, Host: m.ClientHost, ClientID: m.ClientID,
					NumPartitions: n, Assignment: assignment,
				})
			}
			g.Members = &members
		}
		out = append(out, g)
	}
	return out
}

// offsetRows returns the rows of the default describe view: one per
// partition the group is assigned or has an offset committed for, sorted
// by topic and partition, then one per member without partitions. LAG is
// the log end offset minus the committed offset; nil stands for what is
// unknown (no commit, no member).
func offsetRows(l kadm.DescribedGroupLag) []offsetRowJSON {
	rows := []offsetRowJSON{}
	withPartitions := make(map[string]bool)
	for _, p := range l.Lag.Sorted() {
		r := offsetRowJSON{Topic: p.Topic, Partition: p.Partition}
		if p.Commit.At >= 0 {
			r.CurrentOffset = &p.Commit.At
		}
		if p.End.Err == nil && p.End.Offset >= 0 {
			r.LogEndOffset = &p.End.Offset
			if p.Commit.At >= 0 {
				lag := p.End.Offset - p.Commit.At
				r.Lag = &lag
			}
		}
		if m := p.Member; m != nil {
			r.ConsumerID, r.Host, r.ClientID = m.MemberID, m.ClientHost, m.ClientID
			withPartitions[m.MemberID] = true
		}
		rows = append(rows, r)
	}
	for _, m := range sortedMembers(l.Members) {
		if !withPartitions[m.MemberID] {
			rows = append(rows, offsetRowJSON{Partition: -1, ConsumerID: m.MemberID, Host: m.ClientHost, ClientID: m.ClientID})
		}
	}
	return rows
}

// memberTopics returns m's assigned partitions by topic, sorted.
func memberTopics(m kadm.DescribedGroupMember) []topicPartitionJSON {
	out := []topicPartitionJSON{}
	c, ok := m.Assigned.AsConsumer()
	if !ok {
		return out
	}
	for _, t := range c.Topics {
		ps := slices.Clone(t.Partitions)
		slices.Sort(ps)
		out = append(out, topicPartitionJSON{Topic: t.Topic, Partitions: ps})
	}
	slices.SortFunc(out, func(a, b topicPartitionJSON) int { return strings.Compare(a.Topic, b.Topic) })
	return out
}
