package partition

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// isrSim drives a leader Replica with followers that fetch at random, pause
// and resume, and a controller that commits the leader's ISR proposals
// (when their epochs match), losing some proposals and delaying the image.
// After every step it checks the safety rule the maximal-ISR and join
// rules exist for: every member of the ISR the controller has committed
// holds every record below the leader's high watermark, so whichever of
// them is elected next has every acknowledged record.
type isrSim struct {
	t   *testing.T
	rng *rand.Rand
	s   *shell
	// followers' real log end offsets, and which are paused.
	leo    map[int32]int64
	paused map[int32]bool
	// the controller's image: committed ISR and partition epoch; pending
	// is an image not yet delivered to the leader.
	isr            []int32
	partitionEpoch int32
	pending        int
	replicas       []int32
	minISR         int
	lastHW         int64
	acked          []uint64
}

func newISRSim(t *testing.T, seed uint64, minISR int) *isrSim {
	replicas := []int32{1, 2, 3, 4}
	sim := &isrSim{
		t: t, rng: rand.New(rand.NewPCG(seed, 7)), leo: map[int32]int64{}, paused: map[int32]bool{},
		isr: []int32{1, 2, 3}, partitionEpoch: 10, replicas: replicas, minISR: minISR,
	}
	sim.s = leaderShell(t, func(c *Config) { c.MinInSyncReplicas = minISR }, Start{}, sim.isr, replicas)
	for _, id := range replicas[1:] {
		sim.leo[id] = 0
	}
	return sim
}

// deliver sends the image to the leader.
func (sim *isrSim) deliver() {
	sim.pending = 0
	sim.s.handle(sim.s.r.BecomeLeader(&BecomeLeader{LeaderEpoch: 3, PartitionEpoch: sim.partitionEpoch,
		ISR: slices.Clone(sim.isr), Replicas: sim.replicas}))
}

// controller applies the proposals made since the last call, losing one in
// five.
func (sim *isrSim) controller(from int) {
	for _, p := range sim.s.proposals[from:] {
		if sim.rng.IntN(5) == 0 {
			continue // lost
		}
		if p.LeaderEpoch != 3 || p.PartitionEpoch != sim.partitionEpoch {
			continue // stale: refused
		}
		sim.isr = slices.Clone(p.ISR)
		sim.partitionEpoch++
		sim.pending = 1 + sim.rng.IntN(4) // delivered a few steps later
	}
}

func (sim *isrSim) step(i int) {
	s := sim.s
	from := len(s.proposals)
	s.now += int64(sim.rng.IntN(700))
	switch k := sim.rng.IntN(10); {
	case k < 3:
		acks := []int16{1, -1}[sim.rng.IntN(2)]
		id := s.produce(plain(sim.t, 1+sim.rng.IntN(3)), acks)
		if acks == -1 {
			sim.acked = append(sim.acked, id)
		}
	case k < 8:
		id := sim.replicas[1+sim.rng.IntN(len(sim.replicas)-1)]
		if sim.paused[id] {
			break
		}
		// The fetch reports the follower's end, then copies some records.
		s.fetched(id, sim.leo[id])
		sim.leo[id] = min(s.r.Status().LogEndOffset, sim.leo[id]+int64(sim.rng.IntN(5)))
	case k < 9:
		s.tick()
	default:
		id := sim.replicas[1+sim.rng.IntN(len(sim.replicas)-1)]
		sim.paused[id] = !sim.paused[id]
	}
	sim.check(fmt.Sprintf("step %d", i))
	sim.controller(from)
	if sim.pending > 0 {
		if sim.pending--; sim.pending == 0 {
			sim.deliver()
			sim.check(fmt.Sprintf("step %d, image delivered", i))
		}
	}
}

func (sim *isrSim) check(where string) {
	st := sim.s.r.Status()
	if st.HighWatermark < sim.lastHW {
		sim.t.Fatalf("%s: high watermark moved back from %d to %d", where, sim.lastHW, st.HighWatermark)
	}
	if st.HighWatermark > sim.lastHW && len(st.ISR) < sim.minISR {
		sim.t.Fatalf("%s: high watermark advanced with the ISR %v below %d", where, st.ISR, sim.minISR)
	}
	sim.lastHW = st.HighWatermark
	for _, id := range sim.isr {
		if id != 1 && sim.leo[id] < st.HighWatermark {
			sim.t.Fatalf("%s: committed ISR member %d holds %d records, high watermark %d (image ISR %v, leader's %v)",
				where, id, sim.leo[id], st.HighWatermark, sim.isr, st.ISR)
		}
	}
	for _, id := range sim.acked {
		if rep := sim.s.reply(id); rep != nil && rep.ErrorCode == 0 && rep.BaseOffset >= st.HighWatermark {
			sim.t.Fatalf("%s: acks=all append %d answered at %d, above the high watermark %d", where, id, rep.BaseOffset, st.HighWatermark)
		}
	}
}

func TestISRSimulation(t *testing.T) {
	for seed := range uint64(40) {
		for _, minISR := range []int{1, 2} {
			t.Run(fmt.Sprintf("seed%d-min%d", seed, minISR), func(t *testing.T) {
				sim := newISRSim(t, seed, minISR)
				for i := range 600 {
					sim.step(i)
				}
				// Every follower fetches steadily: the ISR grows to the
				// whole assignment and the high watermark reaches the end.
				for id := range sim.paused {
					sim.paused[id] = false
				}
				s := sim.s
				for i := range 400 {
					from := len(s.proposals)
					s.now += 100
					for _, id := range sim.replicas[1:] {
						s.fetched(id, sim.leo[id])
						sim.leo[id] = s.r.Status().LogEndOffset
						sim.check(fmt.Sprintf("settle %d", i))
					}
					s.tick()
					sim.controller(from)
					if sim.pending > 0 {
						sim.deliver()
					}
					sim.check(fmt.Sprintf("settle %d, image delivered", i))
				}
				st := s.r.Status()
				if !slices.Equal(slices.Sorted(slices.Values(st.ISR)), sim.replicas) || st.HighWatermark != st.LogEndOffset {
					t.Fatalf("after settling: status %+v, image ISR %v", st, sim.isr)
				}
			})
		}
	}
}
