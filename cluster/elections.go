package cluster

import "github.com/weirmq/weir/cluster/metadata"

// electionRecords returns the records that make node, registered with
// epoch, the leader of every leaderless partition whose ISR holds it: the
// proposals a replica makes for itself (ARCHITECTURE.md, "Leader
// election"). Records that would not apply (a stale partition epoch, a
// fenced broker) are left out; the caller proposes the rest as one batch.
func electionRecords(img *metadata.Image, node int32, epoch int64) []metadata.Record {
	var recs []metadata.Record
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
			if err == nil {
				recs = append(recs, rec)
			}
		}
	}
	return recs
}
