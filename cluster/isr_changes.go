package cluster

import (
	"sync"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster/metadata"
)

// isrChanges collects the ISR changes this node's partition leaders
// propose (partition.ActorConfig.ProposeISR, called from their actors) so
// that the metadata actor sends them to the controller as one
// AlterPartition request per tick. A partition's later proposal replaces
// its earlier one not yet sent.
type isrChanges struct {
	mu      sync.Mutex
	pending map[replicaKey]partition.ISRChange
}

func newISRChanges() *isrChanges { return &isrChanges{pending: map[replicaKey]partition.ISRChange{}} }

// propose records a leader's proposal; it never blocks.
func (c *isrChanges) propose(topic metadata.UUID, index int32, ch partition.ISRChange) {
	c.mu.Lock()
	c.pending[replicaKey{topic, index}] = ch
	c.mu.Unlock()
}

// take returns and forgets the pending proposals as ISRProposals of node
// at epoch.
func (c *isrChanges) take(node int32, epoch int64) []metadata.ISRProposal {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) == 0 {
		return nil
	}
	out := make([]metadata.ISRProposal, 0, len(c.pending))
	for k, ch := range c.pending {
		out = append(out, metadata.ISRProposal{
			TopicID: k.topic, Partition: k.index, Leader: node, BrokerEpoch: epoch,
			LeaderEpoch: ch.LeaderEpoch, PartitionEpoch: ch.PartitionEpoch, ISR: ch.ISR,
		})
	}
	clear(c.pending)
	return out
}
