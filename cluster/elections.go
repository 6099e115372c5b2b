package cluster

import (
	"github.com/weirmq/weir/cluster/metadata"
)

// elector decides which leaderless partitions this node proposes itself
// for, and when (docs/DESIGN.md "Leader election"). The eligible replicas
// of a partition (unfenced ISR members) propose in preference order: the
// first at once, the next staggerTicks later, and so on, so that the
// preferred replica usually wins and leadership stays balanced; all keep
// proposing until the image shows a leader, since a proposal may be lost.
// With unclean.leader.election.enable and no eligible ISR member, an
// unfenced replica outside the ISR proposes an unclean election after
// uncleanTicks. It reads no clock: time is the metadata actor's tick.
type elector struct {
	// since is the tick each leaderless partition this node may lead was
	// first seen leaderless.
	since map[replicaKey]int64
	// staggerTicks and uncleanTicks are the delays above, in ticks.
	staggerTicks int64
	uncleanTicks int64
	// maxProposals bounds one request (the controller bounds one batch).
	maxProposals int
}

func newElector(staggerTicks, uncleanTicks int64) *elector {
	return &elector{since: map[replicaKey]int64{}, staggerTicks: staggerTicks, uncleanTicks: uncleanTicks, maxProposals: 2000}
}

// proposals returns this node's proposals at tick: node is registered
// with epoch and unfenced in img; unclean tells whether a topic allows
// unclean elections.
func (e *elector) proposals(img *metadata.Image, node int32, epoch int64, tick int64, unclean func(*metadata.Topic) bool) []metadata.LeaderProposal {
	var out []metadata.LeaderProposal
	seen := make(map[replicaKey]bool, len(e.since))
	for _, t := range img.Topics() {
		var allowUnclean, checked bool
		for i := range t.NumPartitions() {
			p, _ := t.Partition(i)
			if p.HasLeader() || !p.IsReplica(node) {
				continue
			}
			rank, inISR := candidateRank(img, p, node)
			isUnclean := false
			if rank < 0 {
				if !checked {
					allowUnclean, checked = unclean(t), true
				}
				if !allowUnclean || inISR {
					continue
				}
				// No eligible ISR member is left: rank among the unfenced
				// out-of-sync replicas.
				if rank = uncleanRank(img, p, node); rank < 0 {
					continue
				}
				isUnclean = true
			}
			k := replicaKey{t.ID(), i}
			seen[k] = true
			first, ok := e.since[k]
			if !ok {
				first = tick
				e.since[k] = tick
			}
			wait := int64(rank) * e.staggerTicks
			if isUnclean {
				wait += e.uncleanTicks
			}
			if tick-first < wait || len(out) >= e.maxProposals {
				continue
			}
			out = append(out, metadata.LeaderProposal{
				TopicID: t.ID(), Partition: i, Candidate: node, BrokerEpoch: epoch,
				PartitionEpoch: p.PartitionEpoch, Unclean: isUnclean,
			})
		}
	}
	for k := range e.since {
		if !seen[k] {
			delete(e.since, k)
		}
	}
	return out
}

// waiting reports whether this node is the preferred candidate (rank 0)
// of a leaderless partition: a node is not ready while one is left.
func (e *elector) waiting(img *metadata.Image, node int32) bool {
	for _, t := range img.Topics() {
		for i := range t.NumPartitions() {
			p, _ := t.Partition(i)
			if p.HasLeader() || !p.InISR(node) {
				continue
			}
			if rank, _ := candidateRank(img, p, node); rank == 0 {
				return true
			}
		}
	}
	return false
}

// candidateRank is node's place among p's eligible replicas (unfenced,
// registered ISR members in assignment order), -1 if it is not one;
// inISR tells whether any ISR member is eligible.
func candidateRank(img *metadata.Image, p metadata.Partition, node int32) (rank int, anyEligible bool) {
	rank = -1
	n := 0
	for _, r := range p.Replicas {
		if !p.InISR(r) || !unfenced(img, r) {
			continue
		}
		if r == node {
			rank = n
		}
		n++
	}
	return rank, n > 0
}

// uncleanRank is node's place among p's unfenced replicas outside the
// ISR, in assignment order, -1 if it is not one.
func uncleanRank(img *metadata.Image, p metadata.Partition, node int32) int {
	n := 0
	for _, r := range p.Replicas {
		if p.InISR(r) || !unfenced(img, r) {
			continue
		}
		if r == node {
			return n
		}
		n++
	}
	return -1
}

// unfenced reports whether node is registered and unfenced in img.
func unfenced(img *metadata.Image, node int32) bool {
	b, ok := img.Broker(node)
	return ok && !b.Fenced
}
