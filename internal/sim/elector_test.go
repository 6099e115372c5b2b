package sim

import "github.com/weirmq/weir/cluster/metadata"

// elector is cluster/elections.go's (unexported there, so its shell is
// restated here; its rule is metadata.Candidates, the controller's own):
// the candidates of a leaderless partition's first open election
// (unfenced ISR members; once none is left, unfenced eligible leader
// replicas, KIP-966; once ISR and ELR are empty, the last known ELR; in
// assignment order) propose in preference order, the first at once, each
// next one staggerTicks later, and keep proposing until the image shows a
// leader. Unclean elections are off (the default), so out-of-sync
// replicas never propose.
type elector struct {
	// since is the tick each partition was first seen leaderless with
	// this node eligible (-1: not).
	since        []int64
	staggerTicks int64
}

func newElector(partitions int, staggerTicks int64) *elector {
	e := &elector{since: make([]int64, partitions), staggerTicks: staggerTicks}
	for i := range e.since {
		e.since[i] = -1
	}
	return e
}

// proposals returns node's proposals at tick.
func (e *elector) proposals(img *metadata.Image, topic metadata.UUID, node int32, epoch int64, tick int64) []metadata.LeaderProposal {
	t, ok := img.TopicByID(topic)
	if !ok {
		return nil
	}
	var out []metadata.LeaderProposal
	for i := range t.NumPartitions() {
		p, _ := t.Partition(i)
		rank := candidateRank(img, p, node)
		if p.HasLeader() || rank < 0 {
			e.since[i] = -1
			continue
		}
		if e.since[i] < 0 {
			e.since[i] = tick
		}
		if tick-e.since[i] < int64(rank)*e.staggerTicks {
			continue
		}
		out = append(out, metadata.LeaderProposal{
			TopicID: topic, Partition: i, Candidate: node, BrokerEpoch: epoch, PartitionEpoch: p.PartitionEpoch,
		})
	}
	return out
}

// candidateRank is node's place among p's candidates, -1 if it is not
// one.
func candidateRank(img *metadata.Image, p metadata.Partition, node int32) int {
	_, cands := metadata.Candidates(img, p, false)
	for i, c := range cands {
		if c == node {
			return i
		}
	}
	return -1
}
