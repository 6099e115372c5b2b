package group

// State is a classic group's state, Kafka's GroupState.
type State uint8

// States, with Kafka's names (String) as DescribeGroups and ListGroups
// report them.
const (
	// Empty: no members. The group lingers until its offsets expire; a
	// join from a new member moves it to PreparingRebalance.
	Empty State = iota
	// PreparingRebalance: joins are parked until every known member has
	// rejoined or the rebalance timeout passes; heartbeats get
	// REBALANCE_IN_PROGRESS.
	PreparingRebalance
	// CompletingRebalance: join responses are out; syncs are parked until
	// the leader's assignment is written; commits get
	// REBALANCE_IN_PROGRESS.
	CompletingRebalance
	// Stable: members heartbeat; a leader join, a follower join with new
	// metadata, a leave or a failure starts a rebalance.
	Stable
	// Dead: the group was deleted, expired or unloaded; its requests get
	// COORDINATOR_NOT_AVAILABLE so clients look the coordinator up again.
	Dead
)

var stateNames = [...]string{"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}

// String returns Kafka's name of the state.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "Unknown"
}

// validPrevious lists, per target state, the states it may be entered
// from (Kafka's validPreviousStates).
var validPrevious = [...][]State{
	Empty:               {PreparingRebalance},
	PreparingRebalance:  {Stable, CompletingRebalance, Empty},
	CompletingRebalance: {PreparingRebalance},
	Stable:              {CompletingRebalance},
	Dead:                {Stable, PreparingRebalance, CompletingRebalance, Empty, Dead},
}

// canEnter reports whether the group may move from s to target.
func (s State) canEnter(target State) bool {
	for _, p := range validPrevious[target] {
		if p == s {
			return true
		}
	}
	return false
}
