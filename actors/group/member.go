package group

import (
	"bytes"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// protocol is one (name, metadata) pair a member supports, in the
// member's order of preference.
type protocol struct {
	name     string
	metadata []byte
}

// parked is a request waiting in the group for its answer.
type parked struct {
	id      uint64
	version int16
}

// member is Kafka's MemberMetadata.
type member struct {
	id         string
	instanceID *string
	clientID   string
	clientHost string

	rebalanceTimeoutMs int32
	sessionTimeoutMs   int32
	protocolType       string
	protocols          []protocol
	assignment         []byte

	// join is the parked JoinGroup (awaiting join), sync the parked
	// SyncGroup (awaiting sync).
	join *parked
	sync *parked
	// isNew marks a member added by the current rebalance: its session
	// timer is NewMemberJoinTimeoutMs until the join completes.
	isNew bool
	// heartbeatDeadlineMs is when the member expires without a heartbeat
	// (0: no expectation scheduled).
	heartbeatDeadlineMs int64
}

// protocolsOf copies a JoinGroup's protocols.
func protocolsOf(ps []kmsg.JoinGroupRequestProtocol) []protocol {
	out := make([]protocol, len(ps))
	for i, p := range ps {
		out[i] = protocol{name: p.Name, metadata: p.Metadata}
	}
	return out
}

// metadata returns the member's metadata for the protocol name.
func (m *member) metadata(name string) []byte {
	for _, p := range m.protocols {
		if p.name == name {
			return p.metadata
		}
	}
	return nil
}

// matches reports whether ps equals the member's protocols, order and
// metadata included.
func (m *member) matches(ps []protocol) bool {
	if len(ps) != len(m.protocols) {
		return false
	}
	for i := range ps {
		if ps[i].name != m.protocols[i].name || !bytes.Equal(ps[i].metadata, m.protocols[i].metadata) {
			return false
		}
	}
	return true
}

// vote returns the member's most preferred protocol among candidates.
func (m *member) vote(candidates map[string]bool) string {
	for _, p := range m.protocols {
		if candidates[p.name] {
			return p.name
		}
	}
	return ""
}

// expiresAtDeadline is Kafka's hasSatisfiedHeartbeat rule, negated, at a session deadline: a new
// member must have been heard from; a member parked in a join or a sync
// counts as alive; any other member must have heartbeated.
func (m *member) expiresAtDeadline() bool {
	if m.isNew {
		return true
	}
	return m.join == nil && m.sync == nil
}

// protocolNames returns the set of the member's protocol names.
func protocolNames(ps []protocol) map[string]bool {
	set := make(map[string]bool, len(ps))
	for _, p := range ps {
		set[p.name] = true
	}
	return set
}
