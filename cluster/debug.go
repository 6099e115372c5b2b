package cluster

import (
	"fmt"
	"sort"
	"strings"
)

// ReplicationState describes, as text for logs and test failures, what
// this node's replicas and replica fetchers hold: per partition its role,
// epochs, offsets and ISR, and per followed partition the fetcher's
// position and last error.
func (n *Node) ReplicationState() string {
	var b strings.Builder
	img := n.Image()
	fmt.Fprintf(&b, "node %d (broker epoch %d, lease %v, image offset %d)\n", n.id, n.BrokerEpoch(), n.LeaseValid(), img.Offset())
	for _, t := range img.Topics() {
		for i := range t.NumPartitions() {
			p, _ := t.Partition(i)
			c := n.replicas.get(t.ID(), i)
			if c == nil {
				continue
			}
			st := c.Status()
			fmt.Fprintf(&b, "  %s-%d: image leader %d epoch %d/%d ISR %v ELR %v last known ELR %v; replica %s leader %d epoch %d/%d leo %d hw %d ISR %v\n",
				t.Name(), i, p.Leader, p.LeaderEpoch, p.PartitionEpoch, p.ISR, p.ELR, p.LastKnownELR, st.Role, st.Leader, st.LeaderEpoch, st.PartitionEpoch,
				st.LogEndOffset, st.HighWatermark, st.ISR)
		}
	}
	n.replicas.fetchers.mu.Lock()
	leaders := make([]int32, 0, len(n.replicas.fetchers.fetchers))
	for l := range n.replicas.fetchers.fetchers {
		leaders = append(leaders, l)
	}
	sort.Slice(leaders, func(i, j int) bool { return leaders[i] < leaders[j] })
	for _, l := range leaders {
		for _, p := range n.replicas.fetchers.fetchers[l].Positions() {
			fmt.Fprintf(&b, "  fetcher from %d: %s/%d at %d (last epoch %d, leader epoch %d) paused %v err %q\n",
				l, p.TopicID, p.Partition, p.FetchOffset, p.LastFetchedEpoch, p.LeaderEpoch, p.Paused, p.LastError)
		}
	}
	n.replicas.fetchers.mu.Unlock()
	return b.String()
}
