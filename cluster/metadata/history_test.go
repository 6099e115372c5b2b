package metadata

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// history generates a deterministic, valid record history from seed: the
// proposal helpers pick the records, so it exercises them too. Every
// element is one log entry (a batch of records).
func history(t testing.TB, seed uint64, steps int) [][]Record {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	img := Empty()
	var entries [][]Record
	add := func(recs ...Record) {
		if len(recs) == 0 {
			return
		}
		img = applyAll(t, img, recs...)
		// applyAll uses one offset per record; entries get one per batch,
		// which is fine for offsets: both only grow.
		entries = append(entries, recs)
	}
	add(ClusterCreatedRecord{ClusterID: clusterIDForTest()}, ControllerChangedRecord{ControllerID: 1, Term: 1})
	for node := int32(1); node <= 5; node++ {
		recs, epoch, err := RegisterBrokerRecords(img, registration(node, 0))
		if err != nil {
			t.Fatal(err)
		}
		add(append(recs, BrokerUnfencedRecord{NodeID: node, BrokerEpoch: epoch})...)
	}
	for i := 0; i < steps; i++ {
		add(randomStep(t, rng, img, i)...)
	}
	return entries
}

func randomStep(t testing.TB, rng *rand.Rand, img *Image, i int) []Record {
	topics := img.Topics()
	switch k := rng.IntN(10); {
	case k < 3 || len(topics) == 0:
		recs, err := NewTopicRecords(img, fmt.Sprintf("topic-%d", i), int32(1+rng.IntN(8)), int16(1+rng.IntN(3)),
			map[string]string{"retention.ms": fmt.Sprint(rng.IntN(1000))}, nil, uuidN(1000+i))
		if err != nil {
			return nil // too few unfenced brokers for the replication factor
		}
		return recs
	case k == 3:
		node := int32(1 + rng.IntN(5))
		br, ok := img.Broker(node)
		if !ok {
			return nil
		}
		if br.Fenced {
			return []Record{BrokerUnfencedRecord{NodeID: node, BrokerEpoch: br.Epoch}}
		}
		recs, err := FenceBrokerRecords(img, node, br.Epoch)
		if err != nil {
			t.Fatal(err)
		}
		return recs
	case k == 4:
		node := int32(1 + rng.IntN(5))
		recs, _, err := RegisterBrokerRecords(img, registration(node, 0))
		if err != nil {
			t.Fatal(err)
		}
		return recs
	case k == 5:
		br := img.Brokers()[rng.IntN(len(img.Brokers()))]
		rec, err := AllocateProducerIDs(img, br.NodeID, br.Epoch, DefaultProducerIDBlockSize)
		if err != nil {
			t.Fatal(err)
		}
		return []Record{rec}
	case k == 6 && rng.IntN(4) == 0:
		recs, err := DeleteTopicRecords(img, topics[rng.IntN(len(topics))].Name())
		if err != nil {
			t.Fatal(err)
		}
		return recs
	case k == 7:
		tp := topics[rng.IntN(len(topics))]
		recs, err := AddPartitionRecords(img, tp.Name(), tp.NumPartitions()+1, nil)
		if err != nil {
			return nil
		}
		return recs
	default:
		return electOrShrink(img, rng, topics[rng.IntN(len(topics))])
	}
}

// electOrShrink elects a leader for a leaderless partition (from the ISR,
// the ELR or the last known ELR, as Candidates says), or has the leader
// drop a follower from the ISR.
func electOrShrink(img *Image, rng *rand.Rand, tp *Topic) []Record {
	p, _ := tp.Partition(int32(rng.IntN(int(tp.NumPartitions()))))
	if !p.HasLeader() {
		_, cands := Candidates(img, p, false)
		for _, r := range cands {
			br, _ := img.Broker(r)
			rec, err := ElectLeader(img, LeaderProposal{TopicID: p.TopicID, Partition: p.Index,
				Candidate: r, BrokerEpoch: br.Epoch, PartitionEpoch: p.PartitionEpoch})
			if err == nil {
				return []Record{rec}
			}
		}
		return nil
	}
	if len(p.ISR) < 2 {
		return nil
	}
	br, _ := img.Broker(p.Leader)
	isr := []int32{p.Leader}
	recs, err := ChangeISR(img, ISRProposal{TopicID: p.TopicID, Partition: p.Index, Leader: p.Leader,
		BrokerEpoch: br.Epoch, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: isr})
	if err != nil {
		return nil
	}
	return recs
}

// replay applies entries to Empty, one Apply per record, every entry at
// its own offset.
func replay(t testing.TB, entries [][]Record) *Image {
	t.Helper()
	img := Empty()
	for i, entry := range entries {
		for _, rec := range entry {
			next, err := img.Apply(rec, int64(i))
			if err != nil {
				t.Fatal(err)
			}
			img = next
		}
	}
	return img
}
