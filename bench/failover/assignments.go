package failover

import (
	"sync"
	"time"
)

// topicPartition names a partition by topic name.
type topicPartition struct {
	topic     string
	partition int32
}

// assignments follows which member of the consumer group owns which
// partition, from the members' assigned, revoked and lost callbacks, and
// times the group's rebalances: from a member's revoke or loss while no
// rebalance is under way until every partition is owned again. It reads
// no clock: callers pass the times (Unix ns).
type assignments struct {
	mu     sync.Mutex
	parts  int
	owned  map[int]map[topicPartition]bool // by member
	openAt int64                           // of the rebalance under way, 0 when none
	spans  []span
}

func newAssignments(parts int) *assignments {
	return &assignments{parts: parts, owned: map[int]map[topicPartition]bool{}}
}

// assigned notes partitions given to member at now.
func (a *assignments) assigned(member int, ps map[string][]int32, now int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := a.owned[member]
	if m == nil {
		m = map[topicPartition]bool{}
		a.owned[member] = m
	}
	for t, parts := range ps {
		for _, p := range parts {
			m[topicPartition{t, p}] = true
		}
	}
	if a.openAt != 0 && a.ownedCount() >= a.parts {
		a.spans = append(a.spans, span{a.openAt, now})
		a.openAt = 0
	}
}

// removed notes partitions member was revoked or lost at now; an empty
// list changes nothing.
func (a *assignments) removed(member int, ps map[string][]int32, now int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for t, parts := range ps {
		for _, p := range parts {
			delete(a.owned[member], topicPartition{t, p})
			n++
		}
	}
	if n > 0 && a.openAt == 0 {
		a.openAt = now
	}
}

// ownedCount counts the partitions some member owns; a.mu is held.
func (a *assignments) ownedCount() int {
	all := map[topicPartition]bool{}
	for _, m := range a.owned {
		for tp := range m {
			all[tp] = true
		}
	}
	return len(all)
}

// complete reports whether every partition is owned and no rebalance is
// under way.
func (a *assignments) complete() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.openAt == 0 && a.ownedCount() >= a.parts
}

// rebalanceIn returns the longest rebalance that started within [from,
// to], and whether one did; one still under way counts up to to.
func (a *assignments) rebalanceIn(from, to int64) (time.Duration, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var longest int64
	found := false
	for _, s := range a.spans {
		if s.from >= from && s.from <= to {
			longest, found = max(longest, s.to-s.from), true
		}
	}
	if a.openAt != 0 && a.openAt >= from && a.openAt <= to {
		longest, found = max(longest, to-a.openAt), true
	}
	return time.Duration(longest), found
}
