package membership

import "strconv"

// State is a member's state as this node last heard it.
type State uint8

// The states of a member.
const (
	// Alive: memberlist counts the member as up.
	Alive State = iota
	// Suspect: memberlist suspects the member. memberlist v0.7.0 does not
	// tell its delegates about suspicion, so Members reports suspected
	// members as Alive; the value exists for completeness.
	Suspect
	// Dead: the member was declared dead (it failed, or was cut off).
	Dead
	// Left: the member left gracefully (Members.Leave).
	Left
)

// String is "alive", "suspect", "dead" or "left".
func (s State) String() string {
	switch s {
	case Alive:
		return "alive"
	case Suspect:
		return "suspect"
	case Dead:
		return "dead"
	case Left:
		return "left"
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// Member is one node as gossip knows it.
type Member struct {
	// Name is the memberlist node name, unique per process start:
	// "<node id>-<first 6 bytes of the incarnation, hex>".
	Name string
	// Addr is the member's gossip address, host:port.
	Addr string
	// Meta is what the member gossips about itself.
	Meta Meta
	// State is the member's state.
	State State
}

// EventKind says what changed about a member.
type EventKind uint8

// The kinds of event.
const (
	// Joined: a member is new, or is alive again after it was declared
	// dead (a healed partition, a resumed frozen process).
	Joined EventKind = iota
	// Updated: an alive member's meta changed (Members.SetMeta).
	Updated
	// Failed: a member was declared dead.
	Failed
	// Departed: a member left gracefully (its Members.Leave). The
	// contract's name for it, Left, is taken by the State.
	Departed
)

// String is "joined", "updated", "failed" or "left".
func (k EventKind) String() string {
	switch k {
	case Joined:
		return "joined"
	case Updated:
		return "updated"
	case Failed:
		return "failed"
	case Departed:
		return "left"
	}
	return "event(" + strconv.Itoa(int(k)) + ")"
}

// Event is one membership change; Member is the member as it is after the
// change.
type Event struct {
	Kind   EventKind
	Member Member
}
