package cluster

import (
	"github.com/weirmq/weir/cluster/metadata"
)

// elector decides which leaderless partitions this node proposes itself
// for, and when (docs/DESIGN.md "Leader election"). A partition's
// candidates are those of the first election it is open to
// (metadata.Candidates: unfenced ISR members; once none is left, unfenced
// eligible leader replicas, KIP-966; once ISR and ELR are empty, the last
// known ELR; with unclean.leader.election.enable, any unfenced replica).
// They propose in preference order: the first at once, the next
// staggerTicks later, and so on, so that the preferred replica usually
// wins and leadership stays balanced; all keep proposing until the image
// shows a leader, since a proposal may be lost. An unclean candidate waits
// uncleanTicks more, so that a clean one coming back wins. It reads no
// clock: time is the metadata actor's tick.
type elector struct {
	// since is the tick each leaderless partition this node may lead was
	// first seen leaderless.
	since map[replicaKey]int64
	// staggerTicks and uncleanTicks are the delays above, in ticks.
	staggerTicks int64
	uncleanTicks int64
	// maxProposals bounds one request (the controller bounds one batch).
	maxProposals int
	// idle is the image of the last scan when it found no partition this
	// node may lead: scanning it again would find none either (images
	// are immutable), so proposals skips the scan until the image changes.
	idle *metadata.Image
}

func newElector(staggerTicks, uncleanTicks int64) *elector {
	return &elector{since: map[replicaKey]int64{}, staggerTicks: staggerTicks, uncleanTicks: uncleanTicks, maxProposals: 2000}
}

// proposals returns this node's proposals at tick: node is registered
// with epoch and unfenced in img; unclean tells whether a topic allows
// unclean elections.
func (e *elector) proposals(img *metadata.Image, node int32, epoch int64, tick int64, unclean func(*metadata.Topic) bool) []metadata.LeaderProposal {
	if img == e.idle && len(e.since) == 0 {
		return nil
	}
	e.idle = nil
	var out []metadata.LeaderProposal
	seen := make(map[replicaKey]bool, len(e.since))
	for _, t := range img.Topics() {
		var allowUnclean, checked bool
		for i := range t.NumPartitions() {
			p, _ := t.Partition(i)
			if p.HasLeader() || !p.IsReplica(node) {
				continue
			}
			kind, rank := candidateRank(img, p, node, false)
			if kind == metadata.NoElection {
				if !checked {
					allowUnclean, checked = unclean(t), true
				}
				if !allowUnclean {
					continue
				}
				if kind, rank = candidateRank(img, p, node, true); kind != metadata.ElectUnclean {
					continue
				}
			}
			k := replicaKey{t.ID(), i}
			seen[k] = true
			first, ok := e.since[k]
			if !ok {
				first = tick
				e.since[k] = tick
			}
			wait := int64(rank) * e.staggerTicks
			if kind == metadata.ElectUnclean {
				wait += e.uncleanTicks
			}
			if tick-first < wait || len(out) >= e.maxProposals {
				continue
			}
			out = append(out, metadata.LeaderProposal{
				TopicID: t.ID(), Partition: i, Candidate: node, BrokerEpoch: epoch,
				PartitionEpoch: p.PartitionEpoch, Unclean: kind == metadata.ElectUnclean,
			})
		}
	}
	for k := range e.since {
		if !seen[k] {
			delete(e.since, k)
		}
	}
	if len(e.since) == 0 {
		e.idle = img
	}
	return out
}

// waiting reports whether this node is the preferred candidate (rank 0)
// of a leaderless partition's clean election: a node is not ready while
// one is left.
func (e *elector) waiting(img *metadata.Image, node int32) bool {
	for _, t := range img.Topics() {
		for i := range t.NumPartitions() {
			p, _ := t.Partition(i)
			if p.HasLeader() || !p.IsReplica(node) {
				continue
			}
			if kind, rank := candidateRank(img, p, node, false); kind != metadata.NoElection && rank == 0 {
				return true
			}
		}
	}
	return false
}

// candidateRank is the election p is open to and node's place among its
// candidates, or NoElection and -1 if node is not one of them (unclean:
// unclean.leader.election.enable).
func candidateRank(img *metadata.Image, p metadata.Partition, node int32, unclean bool) (metadata.Election, int) {
	kind, cands := metadata.Candidates(img, p, unclean)
	for i, c := range cands {
		if c == node {
			return kind, i
		}
	}
	return metadata.NoElection, -1
}
