package wire

import (
	"context"
	"time"

	"github.com/weirmq/weir/cluster/metadata"
)

// A Metadata request that finds a partition leaderless while an election
// is under way (a clean candidate is unfenced: an ISR member, or an
// eligible leader replica or last known one once the ISR is empty, so one
// will win within a few hundred milliseconds) waits for the election, up to electionWait,
// rather than answering LEADER_NOT_AVAILABLE at once: clients at their
// defaults wait long before they ask again after that answer (franz-go
// several seconds), so the wait shortens their stall (docs/DESIGN.md
// "Leader election").
const (
	electionWait = time.Second
	electionPoll = 10 * time.Millisecond
)

// electing reports whether a partition of the queried topics (every topic
// when queries is nil) is leaderless with a clean candidate unfenced, or
// led by a node whose process this node just saw go (down: its connection
// to the node's listener ended, and the controller fences it within a
// round trip if it is gone, see cluster's peer watches), so that an
// election is about to start: answering the dead leader would send a
// client that asks at once (franz-go after a reset connection) to wait its
// whole metadata age before it asks again.
func electing(img *metadata.Image, queries []metadataQuery, down func(int32) bool) bool {
	// down may look at a socket: asked once per node, not per partition.
	isDown := memoDown(down)
	check := func(t *metadata.Topic) bool {
		for i := range t.NumPartitions() {
			p, _ := t.Partition(i)
			if !p.HasLeader() && eligibleLeft(img, p) {
				return true
			}
			if p.HasLeader() && isDown(p.Leader) {
				return true
			}
		}
		return false
	}
	if queries == nil {
		for _, t := range img.Topics() {
			if check(t) {
				return true
			}
		}
		return false
	}
	for _, q := range queries {
		var t *metadata.Topic
		var ok bool
		if q.byID {
			t, ok = img.TopicByID(q.id)
		} else {
			t, ok = img.Topic(q.name)
		}
		if ok && check(t) {
			return true
		}
	}
	return false
}

// eligibleLeft reports whether p has a candidate for a clean election
// (metadata.Candidates without unclean elections, which wait a second
// anyway), so that an election can succeed.
func eligibleLeft(img *metadata.Image, p metadata.Partition) bool {
	kind, _ := metadata.Candidates(img, p, false)
	return kind != metadata.NoElection
}

// awaitElections returns the first image in which no queried partition
// awaits an election, or the latest once electionWait passed or ctx ended.
func (h *BrokerHandler) awaitElections(ctx context.Context, queries []metadataQuery) *metadata.Image {
	ctx, cancel := context.WithTimeout(ctx, electionWait)
	defer cancel()
	t := time.NewTicker(electionPoll)
	defer t.Stop()
	for {
		img := h.broker.Image()
		if !electing(img, queries, h.broker.PeerDown) {
			return img
		}
		select {
		case <-ctx.Done():
			return h.broker.Image()
		case <-t.C:
		}
	}
}
