package wire

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
)

// A Produce partition answered NOT_LEADER_OR_FOLLOWER whose leader hint
// (KIP-951) names no leader, or a leader whose process this node just saw
// go, is about to get a new leader: an election is under way, or starts
// once the controller fences the dead node. A hint that is not newer than
// what the client knows is no use to it: franz-go then waits for its next
// metadata refresh, up to MetadataMinAge (5 s) after the last one. Such an
// answer waits, like Metadata's (metadata_elections.go), up to
// electionWait for the image to name a newer live leader, and hints that
// one, so the client moves at once (docs/DESIGN.md "Leader election").
// This is the window a follower sees between a leader's death and its own
// image applying the election that makes it, or another node, leader.

// staleHint is a partition of a Produce answer waiting for a new leader.
type staleHint struct {
	topic string
	rp    *kmsg.ProduceResponseTopicPartition
}

// staleHints returns the partitions of resp answered NOT_LEADER_OR_FOLLOWER
// whose hint is about to be outdated in img: no leader while a clean
// candidate is unfenced, or a leader down says this node saw go, with the
// image not naming a newer leader yet.
func staleHints(img *metadata.Image, resp *kmsg.ProduceResponse, down func(int32) bool) []staleHint {
	var out []staleHint
	for ti := range resp.Topics {
		rt := &resp.Topics[ti]
		for pi := range rt.Partitions {
			rp := &rt.Partitions[pi]
			if rp.ErrorCode != kerr.NotLeaderForPartition.Code {
				continue
			}
			p, ok := partitionNamed(img, rt.Topic, rp.Partition)
			if !ok {
				continue
			}
			if newerLeader(p, rp.CurrentLeader, down) {
				// The image already knows better: hint that.
				rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = p.Leader, p.LeaderEpoch
				continue
			}
			switch {
			case !p.HasLeader() && eligibleLeft(img, p):
			case p.HasLeader() && down(p.Leader):
			default:
				continue
			}
			out = append(out, staleHint{topic: rt.Topic, rp: rp})
		}
	}
	return out
}

// newerLeader reports whether p names a live leader at a newer epoch than
// hint.
func newerLeader(p metadata.Partition, hint kmsg.ProduceResponseTopicPartitionCurrentLeader, down func(int32) bool) bool {
	return p.HasLeader() && p.LeaderEpoch > hint.LeaderEpoch && !down(p.Leader)
}

// awaitNewLeaders waits, up to electionWait or until ctx ends, until the
// image names a newer live leader for every partition of stale, updating
// each one's hint as its leader shows up, and returns the latest image.
func (h *BrokerHandler) awaitNewLeaders(ctx context.Context, stale []staleHint) *metadata.Image {
	ctx, cancel := context.WithTimeout(ctx, electionWait)
	defer cancel()
	t := time.NewTicker(electionPoll)
	defer t.Stop()
	for {
		img := h.broker.Image()
		down := memoDown(h.broker.PeerDown)
		stale = deleteSettled(img, stale, down)
		if len(stale) == 0 {
			return img
		}
		select {
		case <-ctx.Done():
			return h.broker.Image()
		case <-t.C:
		}
	}
}

// deleteSettled hints the new leader of each partition of stale whose
// image names one, and returns the others.
func deleteSettled(img *metadata.Image, stale []staleHint, down func(int32) bool) []staleHint {
	kept := stale[:0]
	for _, s := range stale {
		p, ok := partitionNamed(img, s.topic, s.rp.Partition)
		if !ok {
			continue
		}
		if newerLeader(p, s.rp.CurrentLeader, down) {
			s.rp.CurrentLeader.LeaderID, s.rp.CurrentLeader.LeaderEpoch = p.Leader, p.LeaderEpoch
			continue
		}
		kept = append(kept, s)
	}
	return kept
}

// memoDown asks down once per node: it may look at a socket.
func memoDown(down func(int32) bool) func(int32) bool {
	seen := map[int32]bool{}
	return func(node int32) bool {
		d, ok := seen[node]
		if !ok {
			d = down(node)
			seen[node] = d
		}
		return d
	}
}

// partitionNamed returns partition idx of the topic named topic in img.
func partitionNamed(img *metadata.Image, topic string, idx int32) (metadata.Partition, bool) {
	t, ok := img.Topic(topic)
	if !ok {
		return metadata.Partition{}, false
	}
	return t.Partition(idx)
}
