package group

import (
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerProtocolType is the protocol type of Kafka consumers.
const consumerProtocolType = "consumer"

// isConsumerGroup reports a group of protocol type "consumer".
func (g *Group) isConsumerGroup() bool {
	return g.protocolType != nil && *g.protocolType == consumerProtocolType
}

// isSubscribedToTopic reports whether a member subscribes to topic; true
// when the group does not know (Kafka's safe default).
func (g *Group) isSubscribedToTopic(topic string) bool {
	if g.subscribed == nil {
		return true
	}
	return g.subscribed[topic]
}

// computeSubscribedTopics is the union of the members' subscribed topics,
// read from their metadata for the selected protocol with version 0 of
// the consumer protocol (the prefix of every version); nil if the group
// is not a consumer group, has no protocol yet, or a member's metadata
// does not parse.
func (g *Group) computeSubscribedTopics() map[string]bool {
	if !g.isConsumerGroup() {
		return nil
	}
	if len(g.members) == 0 {
		return map[string]bool{}
	}
	if g.protocolName == nil {
		return nil
	}
	topics := map[string]bool{}
	for _, id := range g.order {
		ts, err := subscribedTopics(g.members[id].metadata(*g.protocolName))
		if err != nil {
			g.logf("group %s: cannot parse the consumer protocol metadata of member %s: %v", g.id, id, err)
			return nil
		}
		for _, t := range ts {
			topics[t] = true
		}
	}
	return topics
}

// subscribedTopics parses a consumer subscription as version 0.
func subscribedTopics(metadata []byte) ([]string, error) {
	if len(metadata) < 2 {
		return nil, fmt.Errorf("subscription of %d bytes", len(metadata))
	}
	b := slices.Clone(metadata)
	b[0], b[1] = 0, 0
	var s kmsg.ConsumerMemberMetadata
	if err := s.ReadFrom(b); err != nil {
		return nil, fmt.Errorf("subscription: %w", err)
	}
	return s.Topics, nil
}

// Describe answers this group's part of a DescribeGroups request of the
// given version (Kafka's GroupMetadata.summary): members always, their
// metadata and assignment only when Stable. A group Kafka does not hold
// is Dead, with GROUP_ID_NOT_FOUND from v6. AuthorizedOperations is left
// at its default for the shell to fill.
func (g *Group) Describe(version int16) kmsg.DescribeGroupsResponseGroup {
	if code := ValidateGroupID(kmsg.DescribeGroups.Int16(), g.id); code != 0 {
		return DescribeError(g.id, code)
	}
	d := kmsg.NewDescribeGroupsResponseGroup()
	d.Group = g.id
	d.State = g.state.String()
	if g.absent {
		d.State = Dead.String()
		if version >= 6 {
			d.ErrorCode = kerr.GroupIDNotFound.Code
			msg := fmt.Sprintf("Group %s not found.", g.id)
			d.ErrorMessage = &msg
		}
		return d
	}
	d.ProtocolType = deref(g.protocolType)
	stable := g.state == Stable
	if stable {
		d.Protocol = deref(g.protocolName)
	}
	for _, m := range g.memberList() {
		dm := kmsg.NewDescribeGroupsResponseGroupMember()
		dm.MemberID, dm.InstanceID, dm.ClientID, dm.ClientHost = m.id, cloneString(m.instanceID), m.clientID, m.clientHost
		dm.ProtocolMetadata, dm.MemberAssignment = []byte{}, []byte{}
		if stable {
			dm.ProtocolMetadata = m.metadata(d.Protocol)
			dm.MemberAssignment = m.assignment
		}
		d.Members = append(d.Members, dm)
	}
	return d
}

// Overview is a group as ListGroups shows it.
type Overview struct {
	GroupID      string
	ProtocolType string
	State        State
}

// Overview returns the group's ListGroups entry data.
func (g *Group) Overview() Overview {
	return Overview{GroupID: g.id, ProtocolType: deref(g.protocolType), State: g.state}
}

// Matches applies ListGroups' filters: states (v4+) compared without case
// to the state's name, types (v5+) matching "classic"; an empty filter
// matches everything.
func (o Overview) Matches(states, types []string) bool {
	if len(states) > 0 && !slices.ContainsFunc(states, func(s string) bool { return strings.EqualFold(s, o.State.String()) }) {
		return false
	}
	if len(types) > 0 && !slices.ContainsFunc(types, func(s string) bool { return strings.EqualFold(s, "classic") }) {
		return false
	}
	return true
}

// Listed returns the ListGroups entry.
func (o Overview) Listed() kmsg.ListGroupsResponseGroup {
	l := kmsg.NewListGroupsResponseGroup()
	l.Group, l.ProtocolType, l.GroupState, l.GroupType = o.GroupID, o.ProtocolType, o.State.String(), "classic"
	return l
}

// DeleteGroup steps this group's part of a DeleteGroups request: an Empty
// group becomes Dead and its offsets and metadata are tombstoned; the
// answer waits for that append. A group with members gets
// NON_EMPTY_GROUP, a Dead or unknown one GROUP_ID_NOT_FOUND.
func (g *Group) DeleteGroup(m *DeleteGroup) Output {
	return g.step(m.NowMs, func() {
		respond := func(code int16) { g.reply(m.ID, deleteResponse(m.Version, g.id, code)) }
		switch {
		case ValidateGroupID(kmsg.DeleteGroups.Int16(), g.id) != 0:
			respond(kerr.InvalidGroupID.Code)
		case g.absent || g.state == Dead:
			respond(kerr.GroupIDNotFound.Code)
		case g.state != Empty:
			respond(kerr.NonEmptyGroup.Code)
		default:
			g.toDead()
			removed := g.offsets.remove(g.offsets.sortedCommitted())
			g.logf("group %s deleted; %d offsets removed", g.id, len(removed))
			if !g.cleanup(removed, []uint64{m.ID}, func(code int16) { respond(commitAppendError(code)) }) {
				respond(0)
			}
		}
	})
}

// deleteResponse is a DeleteGroupsResponse holding one group.
func deleteResponse(version int16, id string, code int16) Reply {
	resp := kmsg.NewPtrDeleteGroupsResponse()
	resp.Version = version
	resp.Groups = []kmsg.DeleteGroupsResponseGroup{DeleteError(id, code)}
	return Reply{Response: resp}
}
