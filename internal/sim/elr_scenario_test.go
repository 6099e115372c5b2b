package sim

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/weirmq/weir/cluster/metadata"
)

// TestELRElection scripts the case eligible leader replicas (KIP-966)
// exist for, through the simulation's own controller, partition replicas,
// fetchers and checker: a partition on replicas [L F1 F2] with
// min.insync.replicas=2 (five nodes, so that the metadata quorum outlives
// the three replicas' troubles). A producer writes with acks=all.
//
//  1. F2 is paused (SIGSTOP): the ISR shrinks to [L F1], still at
//     min.insync.replicas, so F2 does not join the ELR.
//  2. F1 is paused: the ISR shrinks to [L], below it, so F1 joins the ELR;
//     the high watermark stands still, acks=all writes fail.
//  3. L is killed (SIGKILL) and F1 resumed: L's fence empties the ISR into
//     the ELR [L F1].
//
// Before KIP-966 weir kept the fenced L as the ISR and had no candidate:
// the partition would wait for L (unclean election is off). With the ELR,
// F1 is elected cleanly, and every record acknowledged with acks=all is in
// its log (the checker's invariant 2 checks it when F1 becomes leader,
// and this test again at the end).
func TestELRElection(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runELRElection(t, seed) })
	}
}

func runELRElection(t *testing.T, seed uint64) {
	cfg := defaultScenario()
	cfg.Nodes, cfg.ReplicationFactor, cfg.Partitions, cfg.Producers = 5, 3, 1, 1
	cfg.NoFaults, cfg.FaultMs, cfg.HealMs = true, 30000, 0
	cfg.DropRate, cfg.SlowRate, cfg.Acks1Rate = 0, 0, 0
	w := newWorld(seed, cfg)
	s := &elrScript{w: w}
	w.after(100, 0, s.step)
	if err := w.run(); err != nil {
		t.Fatalf("seed %d: %v\ntrace tail:\n%s", seed, err, w.tr.tail(80))
	}
	if s.state != elrDone {
		t.Fatalf("seed %d: the script stopped at step %d; trace tail:\n%s", seed, s.state, w.tr.tail(80))
	}
	if s.ackedBefore == 0 {
		t.Fatalf("seed %d: nothing acknowledged with acks=all before the leader died", seed)
	}
	// The committed images: F1 wins the first election after L's fence,
	// from the ELR, where the rule before KIP-966 had no candidate.
	q := w.quorum
	won := false
	for i := s.killedAt; i < len(q.images) && !won; i++ {
		p, _ := q.images[i].Partition(s.topic, 0)
		if !p.HasLeader() || p.Leader == s.l {
			continue // leaderless, or L's leadership before its fence
		}
		prev, _ := q.images[i-1].Partition(s.topic, 0)
		if p.Leader != s.f1 || !slices.Equal(p.ISR, []int32{s.f1}) || len(prev.ISR) != 0 || !prev.InELR(s.f1) || !prev.InELR(s.l) {
			t.Fatalf("seed %d: first leader after the kill: %+v, from %+v; want %d from the ELR", seed, p, prev, s.f1)
		}
		old := prev
		old.ISR, old.ELR = []int32{s.l}, nil
		if kind, cands := metadata.Candidates(q.images[i-1], old, false); kind != metadata.NoElection {
			t.Fatalf("seed %d: without the ELR the candidates would be %v %v", seed, kind, cands)
		}
		won = true
	}
	if !won || w.chk.elrElections == 0 {
		t.Fatalf("seed %d: F1 never won from the ELR (%d ELR elections)", seed, w.chk.elrElections)
	}
	log := w.nodes[s.f1].disk[0]
	for _, a := range w.chk.acked[0] {
		if !bytes.Equal(log.batchAt(a.base), a.data) {
			t.Fatalf("seed %d: acks=all batch at %d (acknowledged by node %d at epoch %d) is not in the log of node %d",
				seed, a.base, a.node, a.epoch, s.f1)
		}
	}
	t.Logf("seed %d: L=%d F1=%d F2=%d; %d acks=all batches acknowledged before L died, all on F1", seed, s.l, s.f1, s.f2, s.ackedBefore)
}

// elrScript steps TestELRElection's faults as the committed image allows.
type elrScript struct {
	w           *world
	state       int
	topic       metadata.UUID
	l, f1, f2   int32
	ackedBefore int
	// killedAt is the number of committed images when L was killed.
	killedAt int
}

// The script's steps.
const (
	elrStart = iota
	elrF2Out
	elrF1Out
	elrKilled
	elrDone
)

// step advances the script when the committed image allows, every 20 ms.
func (s *elrScript) step() {
	w := s.w
	img := w.quorum.image()
	t, ok := img.Topic(topicName)
	if s.state == elrDone {
		return
	}
	defer w.after(20, 0, s.step)
	if !ok {
		return
	}
	p, _ := t.Partition(0)
	set := func(ids ...int32) []int32 { return ids }
	sameSet := func(a, b []int32) bool {
		return len(a) == len(b) && !slices.ContainsFunc(a, func(x int32) bool { return !slices.Contains(b, x) })
	}
	switch s.state {
	case elrStart:
		if !p.HasLeader() || len(p.ISR) != 3 || w.producers[0].ackedAll < 20 {
			return
		}
		s.topic = t.ID()
		s.l = p.Leader
		for _, r := range p.Replicas {
			switch {
			case r == s.l:
			case s.f1 == 0:
				s.f1 = r
			default:
				s.f2 = r
			}
		}
		// The controller goes to a node that holds no replica.
		if host := w.quorum.cur.host; slices.Contains(p.Replicas, host) {
			for id := int32(1); id <= int32(w.cfg.Nodes); id++ {
				if !slices.Contains(p.Replicas, id) {
					w.quorum.commitPending()
					w.quorum.takeOver(id)
					break
				}
			}
		}
		w.nodes[s.f2].pause()
		s.state = elrF2Out
	case elrF2Out:
		if !sameSet(p.ISR, set(s.l, s.f1)) {
			return
		}
		if len(p.ELR) != 0 {
			w.fail("node %d left the ISR at min.insync.replicas, yet the ELR is %v", s.f2, p.ELR)
			return
		}
		w.nodes[s.f1].pause()
		s.state = elrF1Out
	case elrF1Out:
		if !slices.Equal(p.ISR, set(s.l)) {
			return
		}
		if !slices.Equal(p.ELR, set(s.f1)) {
			w.fail("node %d left the ISR below min.insync.replicas, yet the ELR is %v", s.f1, p.ELR)
			return
		}
		s.ackedBefore = w.producers[0].ackedAll
		s.killedAt = len(w.quorum.images)
		w.nodes[s.l].kill()
		w.nodes[s.f1].resume()
		s.state = elrKilled
	case elrKilled:
		if p.Leader == s.f1 {
			s.state = elrDone
		}
	}
}
