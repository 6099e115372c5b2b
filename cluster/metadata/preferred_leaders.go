package metadata

// Preferred leaders (Kafka's auto.leader.rebalance.enable). A partition's
// preferred leader is the first replica of its assignment; placement
// spreads those evenly, so leadership is balanced while every partition
// is led by its preferred replica. Failures move leaderships elsewhere and
// elections never move them back, so each leader node periodically hands
// back those that Kafka's rule picks: a broker's imbalance is the share
// of the partitions it is preferred for that another node leads, and once
// it is above leader.imbalance.per.broker.percentage, every such partition
// whose preferred replica is unfenced and in the ISR is moved to it.
//
// A broker just back gets its leaderships only once it has been unfenced,
// in the same registration, since the previous check (settled): moved at
// once, clients with a grown reconnect backoff towards it (librdkafka's
// doubles up to reconnect.backoff.max.ms, 10 s, and starts again only
// after that long without an attempt) would stall for the backoff.

// PreferredMove is a partition to hand back to its preferred replica To.
type PreferredMove struct {
	TopicID   UUID
	Partition int32
	To        int32
}

// UnfencedEpochs returns the broker epoch of every unfenced broker of img:
// a check's record for the next one's settled.
func UnfencedEpochs(img *Image) map[int32]int64 {
	out := map[int32]int64{}
	for _, b := range img.Brokers() {
		if !b.Fenced {
			out[b.NodeID] = b.Epoch
		}
	}
	return out
}

// PreferredMoves returns, in topic and partition order, the partitions
// node leads that go back to their preferred replica when a broker's
// imbalance above imbalancePercent calls for it, to brokers unfenced at
// the epoch settled records for them (UnfencedEpochs at the previous
// check).
func PreferredMoves(img *Image, node int32, imbalancePercent int, settled map[int32]int64) []PreferredMove {
	type count struct{ preferred, elsewhere int }
	counts := map[int32]*count{}
	for _, t := range img.Topics() {
		for i := range t.NumPartitions() {
			p, _ := t.Partition(i)
			if len(p.Replicas) == 0 {
				continue
			}
			c := counts[p.Replicas[0]]
			if c == nil {
				c = &count{}
				counts[p.Replicas[0]] = c
			}
			c.preferred++
			if p.Leader != p.Replicas[0] {
				c.elsewhere++
			}
		}
	}
	imbalanced := func(id int32) bool {
		c := counts[id]
		return c != nil && c.elsewhere*100 > imbalancePercent*c.preferred
	}
	var out []PreferredMove
	for _, t := range img.Topics() {
		for i := range t.NumPartitions() {
			p, _ := t.Partition(i)
			if p.Leader != node || len(p.Replicas) == 0 {
				continue
			}
			to := p.Replicas[0]
			if to == node || !p.InISR(to) || !imbalanced(to) {
				continue
			}
			if b, ok := img.Broker(to); !ok || b.Fenced || settled[to] != b.Epoch {
				continue
			}
			out = append(out, PreferredMove{TopicID: p.TopicID, Partition: p.Index, To: to})
		}
	}
	return out
}
