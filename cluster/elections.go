package cluster

import "github.com/weirmq/weir/cluster/metadata"

// electionRecords returns the records that make node, registered with
// epoch, the leader of every leaderless partition whose ISR holds it: the
// proposals a replica makes for itself (docs/DESIGN.md "Leader
// election"). Records that would not apply (a stale partition epoch, a
// fenced broker) are left out; the caller proposes the rest as one batch.
// The batch stops at the bounds of one operation (metadata.OpBudget): the
// partitions left over are elected by the next batch, as the caller keeps
// electing until none is left.
func electionRecords(img *metadata.Image, node int32, epoch int64) []metadata.Record {
	var recs []metadata.Record
	var budget metadata.OpBudget
	for _, t := range img.Topics() {
		for i := range t.NumPartitions() {
			p, _ := t.Partition(i)
			if p.HasLeader() || !p.InISR(node) {
				continue
			}
			rec, err := metadata.ElectLeader(img, metadata.LeaderProposal{
				TopicID: t.ID(), Partition: i, Candidate: node,
				BrokerEpoch: epoch, PartitionEpoch: p.PartitionEpoch,
			})
			if err != nil {
				continue
			}
			if !budget.Add([]metadata.Record{rec}) {
				return recs
			}
			recs = append(recs, rec)
		}
	}
	return recs
}
