package metadata

import (
	"slices"
	"strconv"
	"strings"
)

// Eligible leader replicas (KIP-966; docs/DESIGN.md "Leader election").
//
// A partition leader advances the high watermark only while the committed
// ISR has at least min.insync.replicas members. So when a change leaves the
// ISR smaller than that, the replicas it takes out of the ISR hold every
// committed record: the high watermark cannot have passed what they have,
// and it stands still from then on. They join the partition's ELR, and an
// election may pick one of them cleanly once no ISR member is left. The
// rules, applied by every change the controller makes:
//
//   - A change that leaves the ISR with min.insync.replicas members or more
//     empties the ELR and the LastKnownELR.
//   - Otherwise the ELR becomes every replica that was in the ISR or the ELR
//     and is not in the new ISR, except those known to have come back from
//     an unclean shutdown (they may have lost unflushed records); those, and
//     the LastKnownELR members not in the new ISR, make the LastKnownELR.
//
// So ISR, ELR and LastKnownELR never share a node, and fencing the last ISR
// member of a partition moves it to the ELR, leaving the ISR empty.

// Election is the kind of election a leaderless partition is open to.
// Candidates tries them in this order and the controller accepts a
// proposal only for the first one open.
type Election uint8

const (
	// NoElection: no replica may be elected now; the partition waits for
	// a candidate to be unfenced.
	NoElection Election = iota
	// ElectFromISR elects an unfenced ISR member, the ISR unchanged.
	ElectFromISR
	// ElectFromELR elects an unfenced ELR member once no ISR member is
	// unfenced: a clean election (it holds every committed record), with
	// the ISR [it] and the ELR rules applied to that change.
	ElectFromELR
	// ElectLastKnown elects an unfenced LastKnownELR member once ISR and
	// ELR are both empty: every replica known to hold the committed
	// records came back from an unclean shutdown, and none is known to
	// hold more than the others. It takes no
	// unclean.leader.election.enable (Apache Kafka 4 likewise elects its
	// last known leader then), sets the ISR to [it] and empties ELR and
	// LastKnownELR.
	ElectLastKnown
	// ElectUnclean elects any unfenced replica (LastKnownELR members
	// first) when unclean.leader.election.enable is set and none of the
	// above is open: it may lose committed records. The ISR becomes [it],
	// ELR and LastKnownELR empty.
	ElectUnclean
)

// String names the election for logs and errors.
func (e Election) String() string {
	switch e {
	case NoElection:
		return "none"
	case ElectFromISR:
		return "ISR"
	case ElectFromELR:
		return "ELR"
	case ElectLastKnown:
		return "last-known-ELR"
	case ElectUnclean:
		return "unclean"
	}
	return "election-" + strconv.Itoa(int(e))
}

// Candidates returns the election p, a partition of img, is open to, and
// its candidates in preference order (the order in which they propose):
// unfenced registered brokers in assignment order. unclean is the topic's
// unclean.leader.election.enable. A partition with a leader is open to
// none.
func Candidates(img *Image, p Partition, unclean bool) (Election, []int32) {
	if p.HasLeader() {
		return NoElection, nil
	}
	live := func(in func(int32) bool) []int32 {
		var out []int32
		for _, r := range p.Replicas {
			if in(r) && unfenced(img, r) {
				out = append(out, r)
			}
		}
		return out
	}
	if c := live(p.InISR); len(c) > 0 {
		return ElectFromISR, c
	}
	if c := live(p.InELR); len(c) > 0 {
		return ElectFromELR, c
	}
	lastKnown := live(p.InLastKnownELR)
	if len(p.ISR) == 0 && len(p.ELR) == 0 && len(lastKnown) > 0 {
		return ElectLastKnown, lastKnown
	}
	if !unclean {
		return NoElection, nil
	}
	others := live(func(r int32) bool { return !p.InLastKnownELR(r) })
	if c := append(lastKnown, others...); len(c) > 0 {
		return ElectUnclean, c
	}
	return NoElection, nil
}

// unfenced reports whether node is registered and unfenced in img.
func unfenced(img *Image, node int32) bool {
	br, ok := img.brokers.get(node)
	return ok && !br.Fenced
}

// eligibleAfter returns the ELR and LastKnownELR of p after a change that
// leaves the ISR isr, for min.insync.replicas minISR; uncleanNode (-1:
// none) came back from an unclean shutdown. Both lists are in assignment
// order, nil when empty.
func eligibleAfter(p Partition, isr []int32, minISR int, uncleanNode int32) (elr, lastKnown []int32) {
	if len(isr) >= minISR {
		return nil, nil
	}
	for _, r := range p.Replicas {
		if slices.Contains(isr, r) {
			continue
		}
		held := p.InISR(r) || p.InELR(r)
		switch {
		case held && r != uncleanNode:
			elr = append(elr, r)
		case held || p.InLastKnownELR(r):
			lastKnown = append(lastKnown, r)
		}
	}
	return elr, lastKnown
}

// changeTo returns the record that gives p the leader (LeaderNoChange:
// keep it) and the ISR isr (nil: keep it), with the ELR rules above for
// minISR; uncleanNode (-1: none) came back from an unclean shutdown and
// leaves the ELR. It reports false when nothing would change.
func changeTo(p Partition, leader int32, isr []int32, minISR int, uncleanNode int32) (PartitionChangeRecord, bool) {
	rec := PartitionChangeRecord{TopicID: p.TopicID, Partition: p.Index, Leader: leader}
	target := p.ISR
	if isr != nil && !slices.Equal(isr, p.ISR) {
		rec.ISR = append([]int32{}, isr...) // non-nil: an empty ISR is a change
		target = isr
	}
	elr, lastKnown := eligibleAfter(p, target, minISR, uncleanNode)
	rec.ELR = changedIDs(p.ELR, elr)
	rec.LastKnownELR = changedIDs(p.LastKnownELR, lastKnown)
	return rec, rec.Leader != LeaderNoChange || rec.ISR != nil || rec.ELR != nil || rec.LastKnownELR != nil
}

// changedIDs is a record's field for a list that goes from cur to next:
// nil if it does not change, else next (non-nil, so that an empty list
// is recorded as a change).
func changedIDs(cur, next []int32) []int32 {
	if slices.Equal(cur, next) {
		return nil
	}
	if next == nil {
		return []int32{}
	}
	return next
}

// minInSync is topic's min.insync.replicas: its override, else def, and
// never below 1.
func minInSync(img *Image, topic string, def int) int {
	n := def
	if v, ok := img.ConfigValue(TopicResource(topic), "min.insync.replicas"); ok {
		if o, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
			n = o
		}
	}
	return max(n, 1)
}

// partitionMinISR is min.insync.replicas of p's topic in img.
func partitionMinISR(img *Image, p Partition, def int) int {
	t, ok := img.topics.get(p.TopicID)
	if !ok {
		return max(def, 1)
	}
	return minInSync(img, t.name, def)
}

// defaultMinISR is the min.insync.replicas of a topic without an override
// for the functions that take no Controller: Kafka's default, 1.
const defaultMinISR = 1

// minISRDefault is the controller's broker default of
// min.insync.replicas, the value of a topic without an override.
func (c *Controller) minISRDefault() int {
	if c == nil || c.Config == nil {
		return defaultMinISR
	}
	return int(c.Config.Int("min.insync.replicas"))
}
