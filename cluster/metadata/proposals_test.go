package metadata

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"
)

func TestRegisterBrokerRecords(t *testing.T) {
	img := Empty()
	recs, epoch, err := RegisterBrokerRecords(img, registration(1, 999))
	if err != nil || epoch != 0 || len(recs) != 1 || recs[0].(BrokerRegistrationRecord).BrokerEpoch != 0 {
		t.Fatalf("first registration: %v, %d, %v", recs, epoch, err)
	}
	img = applyAll(t, img, append(recs, BrokerUnfencedRecord{NodeID: 1, BrokerEpoch: epoch})...)
	img = withTopic(t, img, "orders", 1, 2, 1)

	// A new process of an unfenced node fences the old one first.
	recs, epoch2, err := RegisterBrokerRecords(img, registration(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if epoch2 <= epoch || epoch2 <= img.Offset() {
		t.Errorf("new epoch %d, old %d, offset %d", epoch2, epoch, img.Offset())
	}
	// The sole ISR member leaves the ISR, leaderless; below
	// min.insync.replicas (1) it would join the ELR, but the previous
	// process is taken to have shut down uncleanly, so it goes to the
	// last known ELR (KIP-966).
	wantFence := []Record{
		BrokerFencedRecord{NodeID: 1, BrokerEpoch: epoch},
		PartitionChangeRecord{TopicID: uuidN(1), Partition: 0, Leader: NoLeader, ISR: []int32{}, LastKnownELR: []int32{1}},
		PartitionChangeRecord{TopicID: uuidN(1), Partition: 1, Leader: NoLeader, ISR: []int32{}, LastKnownELR: []int32{1}},
	}
	if !reflect.DeepEqual(recs[:len(recs)-1], wantFence) {
		t.Fatalf("records %v", recs)
	}
	img = applyAll(t, img, recs...)
	if br, _ := img.Broker(1); br.Epoch != epoch2 || !br.Fenced {
		t.Errorf("broker = %+v", br)
	}
	if p := ordersP0(t, img); p.HasLeader() || len(p.ISR) != 0 || len(p.ELR) != 0 || !slices.Equal(p.LastKnownELR, []int32{1}) {
		t.Errorf("partition after an unclean restart: %+v, want leaderless, ISR and ELR empty, last known ELR [1]", p)
	}
	// A fenced node re-registers without a fence batch.
	recs, _, err = RegisterBrokerRecords(img, registration(1, 0))
	if err != nil || len(recs) != 1 {
		t.Fatalf("re-register fenced: %v, %v", recs, err)
	}
	bad := registration(2, 0)
	bad.Port = 0
	if _, _, err := RegisterBrokerRecords(img, bad); !errors.Is(err, ErrInvalidRecord) {
		t.Errorf("bad registration: %v", err)
	}
}

func TestFenceBrokerRecords(t *testing.T) {
	img := withTopic(t, threeBrokers(t), "orders", 1, 6, 3)
	recs, err := FenceBrokerRecords(img, 2, 10)
	if err != nil {
		t.Fatal(err)
	}
	img = applyAll(t, img, recs...)
	tp, _ := img.Topic("orders")
	for i := int32(0); i < tp.NumPartitions(); i++ {
		p, _ := tp.Partition(i)
		if p.InISR(2) || p.Leader == 2 {
			t.Errorf("partition %d still has broker 2: %+v", i, p)
		}
		if p.Replicas[0] == 2 && p.HasLeader() {
			t.Errorf("partition %d led by 2 got leader %d; elections are the replicas' job", i, p.Leader)
		}
		if !p.IsReplica(2) {
			t.Errorf("partition %d lost its replica on 2", i)
		}
	}
	if recs, err := FenceBrokerRecords(img, 2, 10); err != nil || recs != nil {
		t.Errorf("fencing a fenced broker: %v, %v", recs, err)
	}
	if _, err := FenceBrokerRecords(img, 2, 9); !errors.Is(err, ErrStaleBrokerEpoch) {
		t.Errorf("stale epoch: %v", err)
	}
	if _, err := FenceBrokerRecords(img, 8, 9); !errors.Is(err, ErrUnknownBroker) {
		t.Errorf("unknown broker: %v", err)
	}
}

// leaderless returns orders (3 replicas) with partition 0 leaderless after
// its leader was fenced, and that partition.
func leaderless(t *testing.T) (*Image, Partition) {
	img := withTopic(t, threeBrokers(t), "orders", 1, 1, 3)
	recs, err := FenceBrokerRecords(img, ordersP0(t, img).Leader, 10)
	if err != nil {
		t.Fatal(err)
	}
	img = applyAll(t, img, recs...)
	return img, ordersP0(t, img)
}

func TestElectLeader(t *testing.T) {
	img, p := leaderless(t)
	fencedNode := p.Replicas[0]
	candidate := p.ISR[0]
	prop := LeaderProposal{TopicID: uuidN(1), Candidate: candidate, BrokerEpoch: 10, PartitionEpoch: p.PartitionEpoch}
	rec, err := ElectLeader(img, prop)
	if err != nil {
		t.Fatal(err)
	}
	won := applyAll(t, img, rec)
	if got := ordersP0(t, won); got.Leader != candidate || got.LeaderEpoch != p.LeaderEpoch+1 || got.PartitionEpoch != p.PartitionEpoch+1 {
		t.Fatalf("after election %+v", got)
	}
	// The second proposal made against the same epoch is stale now.
	other := prop
	other.Candidate = p.ISR[1]
	if _, err := ElectLeader(won, other); !errors.Is(err, ErrStalePartitionEpoch) {
		t.Errorf("second proposal: %v", err)
	}
	other.PartitionEpoch = ordersP0(t, won).PartitionEpoch
	if _, err := ElectLeader(won, other); !errors.Is(err, ErrLeaderExists) {
		t.Errorf("proposal for a led partition: %v", err)
	}

	unfenced := applyAll(t, img, BrokerUnfencedRecord{NodeID: fencedNode, BrokerEpoch: 10})
	fenced := applyAll(t, img, BrokerFencedRecord{NodeID: candidate, BrokerEpoch: 10})
	for _, tc := range []struct {
		name string
		img  *Image
		mod  func(*LeaderProposal)
		want error
	}{
		{"not in ISR", unfenced, func(l *LeaderProposal) { l.Candidate = fencedNode }, ErrIneligibleReplica},
		{"fenced", fenced, func(*LeaderProposal) {}, ErrBrokerFenced},
		{"stale broker epoch", img, func(l *LeaderProposal) { l.BrokerEpoch = 9 }, ErrStaleBrokerEpoch},
		{"unknown partition", img, func(l *LeaderProposal) { l.Partition = 4 }, ErrUnknownPartition},
		{"unknown topic", img, func(l *LeaderProposal) { l.TopicID = uuidN(8) }, ErrUnknownTopic},
	} {
		prop := prop
		tc.mod(&prop)
		if _, err := ElectLeader(tc.img, prop); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestChangeISR(t *testing.T) {
	img := withTopic(t, threeBrokers(t), "orders", 1, 1, 3)
	p := ordersP0(t, img)
	leader := p.Leader
	shrunk := []int32{leader, p.Replicas[1]}
	prop := ISRProposal{TopicID: uuidN(1), Leader: leader, BrokerEpoch: 10, ISR: shrunk}
	recs, err := ChangeISR(img, prop)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%v, %v", recs, err)
	}
	after := applyAll(t, img, recs...)
	if got := ordersP0(t, after); !slices.Equal(got.ISR, shrunk) || got.LeaderEpoch != 0 || got.PartitionEpoch != 1 {
		t.Fatalf("after shrink %+v", got)
	}
	if recs, err := ChangeISR(img, ISRProposal{TopicID: uuidN(1), Leader: leader, BrokerEpoch: 10, ISR: p.ISR}); err != nil || len(recs) != 0 {
		t.Errorf("unchanged ISR: %v, %v", recs, err)
	}
	// Growing back, with the new partition epoch; a fenced joiner may not.
	grow := ISRProposal{TopicID: uuidN(1), Leader: leader, BrokerEpoch: 10, PartitionEpoch: 1, ISR: p.Replicas}
	if _, err := ChangeISR(after, grow); err != nil {
		t.Errorf("grow: %v", err)
	}
	fencedJoiner := applyAll(t, after, BrokerFencedRecord{NodeID: p.Replicas[2], BrokerEpoch: 10})
	if _, err := ChangeISR(fencedJoiner, grow); !errors.Is(err, ErrIneligibleReplica) {
		t.Errorf("fenced joiner: %v", err)
	}
	for _, tc := range []struct {
		name string
		mod  func(*ISRProposal)
		want error
	}{
		{"not leader", func(x *ISRProposal) { x.Leader = p.Replicas[1] }, ErrNotLeader},
		{"leader epoch", func(x *ISRProposal) { x.LeaderEpoch = 3 }, ErrFencedLeaderEpoch},
		{"partition epoch", func(x *ISRProposal) { x.PartitionEpoch = 3 }, ErrStalePartitionEpoch},
		{"broker epoch", func(x *ISRProposal) { x.BrokerEpoch = 3 }, ErrStaleBrokerEpoch},
		{"without leader", func(x *ISRProposal) { x.ISR = []int32{p.Replicas[1]} }, ErrInvalidRecord},
		{"not a replica", func(x *ISRProposal) { x.ISR = []int32{leader, 7} }, ErrInvalidRecord},
		{"empty", func(x *ISRProposal) { x.ISR = nil }, ErrInvalidRecord},
	} {
		prop := prop
		tc.mod(&prop)
		if _, err := ChangeISR(img, prop); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestAllocateProducerIDs(t *testing.T) {
	img := threeBrokers(t)
	for i := int64(0); i < 3; i++ {
		rec, err := AllocateProducerIDs(img, 2, 10, DefaultProducerIDBlockSize)
		if err != nil {
			t.Fatal(err)
		}
		if b := rec.(ProducerIDsBlockRecord); b.FirstProducerID != i*1000 || b.Size != 1000 || b.BrokerID != 2 {
			t.Fatalf("block %d = %v", i, b)
		}
		img = applyAll(t, img, rec)
	}
	if img.NextProducerID() != 3000 {
		t.Errorf("next %d", img.NextProducerID())
	}
	if _, err := AllocateProducerIDs(img, 2, 9, 1000); !errors.Is(err, ErrStaleBrokerEpoch) {
		t.Errorf("stale epoch: %v", err)
	}
	if _, err := AllocateProducerIDs(img, 7, 10, 1000); !errors.Is(err, ErrUnknownBroker) {
		t.Errorf("unknown broker: %v", err)
	}
	if _, err := AllocateProducerIDs(img, 2, 10, 0); !errors.Is(err, ErrInvalidRecord) {
		t.Errorf("empty block: %v", err)
	}
	full := applyAll(t, img, ProducerIDsBlockRecord{BrokerID: 1, BrokerEpoch: 10, FirstProducerID: 3000, Size: math.MaxInt64 - 3500})
	if _, err := AllocateProducerIDs(full, 2, 10, 1000); !errors.Is(err, ErrProducerIDsExhausted) {
		t.Errorf("exhausted: %v", err)
	}
}
