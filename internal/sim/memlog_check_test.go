package sim

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

// TestMemLogMatchesLog checks the simulation's memLog against the real
// log.Log (on MemFS) over random leader appends, follower appends,
// truncations and restarts at an offset: the same offsets, epoch cache,
// EndOffsetForEpoch answers and stored bytes, and the same diverging
// epochs as the real partition.Client.DivergingEpoch over that log.
func TestMemLogMatchesLog(t *testing.T) {
	system := actor.NewActorSystem()
	defer system.Shutdown()
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 1))
		m, err := log.OpenManager(log.ManagerConfig{Dir: "/data", FS: log.NewMemFS(), NoBackground: true})
		if err != nil {
			t.Fatal(err)
		}
		cfg := log.DefaultConfig()
		cfg.SegmentIndexBytes = 64 << 10 // small preallocated indexes: every full truncation makes new ones
		real, err := m.OpenLog(log.TopicPartition{Topic: "t", Partition: 0}, cfg, [16]byte{1})
		if err != nil {
			t.Fatal(err)
		}
		sim := &memLog{}
		epoch := int32(0)
		// A partition actor over the log, leading at an epoch above every
		// epoch the log will hold, whose DivergingEpoch reads the log.
		const leaderEpoch = 1 << 20
		client := partition.Spawn(system, partition.ActorConfig{Log: real, Replica: partition.DefaultConfig(), Logger: quietLogger})
		client.BecomeLeader(&partition.BecomeLeader{LeaderEpoch: leaderEpoch, ISR: []int32{1}})
		for deadline := time.Now().Add(10 * time.Second); client.Status().LeaderEpoch != leaderEpoch; {
			if time.Now().After(deadline) {
				t.Fatal("the partition actor did not take the leadership")
			}
			time.Sleep(time.Millisecond)
		}
		for step := range 300 {
			switch k := rng.IntN(10); {
			case k < 5: // a leader's append
				if rng.IntN(4) == 0 {
					epoch += 1 + rng.Int32N(2)
				}
				b := oneBatch(t, rng.IntN(3)+1, 0, batch.NoPartitionLeaderEpoch)
				opts := log.AppendOptions{AssignOffsets: true, LeaderEpoch: epoch}
				r1, e1 := real.Append(slices.Clone(b), opts)
				r2, e2 := sim.append(slices.Clone(b), opts)
				if (e1 == nil) != (e2 == nil) || r1.FirstOffset != r2.FirstOffset || r1.LastOffset != r2.LastOffset {
					t.Fatalf("seed %d step %d: leader append: log %+v %v, sim %+v %v", seed, step, r1, e1, r2, e2)
				}
			case k < 7: // a follower's append of batches with their own offsets and epochs
				var buf []byte
				off := real.LogEndOffset()
				e := max(epoch, 0)
				for range 1 + rng.IntN(3) {
					if rng.IntN(3) == 0 {
						e++
					}
					n := rng.IntN(3) + 1
					buf = append(buf, oneBatch(t, n, off, e)...)
					off += int64(n)
				}
				epoch = e
				opts := log.AppendOptions{}
				r1, e1 := real.Append(slices.Clone(buf), opts)
				r2, e2 := sim.append(slices.Clone(buf), opts)
				if (e1 == nil) != (e2 == nil) || r1.FirstOffset != r2.FirstOffset || r1.LastOffset != r2.LastOffset {
					t.Fatalf("seed %d step %d: follower append: log %+v %v, sim %+v %v", seed, step, r1, e1, r2, e2)
				}
			case k < 9: // a truncation, maybe inside a batch
				to := rng.Int64N(real.LogEndOffset() + 2)
				end1, e1 := real.TruncateTo(to)
				end2, e2 := sim.truncateTo(to)
				if (e1 == nil) != (e2 == nil) || end1 != end2 {
					t.Fatalf("seed %d step %d: truncate to %d: log %d %v, sim %d %v", seed, step, to, end1, e1, end2, e2)
				}
			default: // an emptied log restarting at an offset
				at := real.LogEndOffset() + rng.Int64N(5)
				if err := real.TruncateFullyAndStartAt(at); err != nil {
					t.Fatal(err)
				}
				sim.truncateFullyAndStartAt(at)
			}
			compareLogs(t, seed, step, real, sim, rng)
			for range 4 {
				lfe := rng.Int32N(sim.latestEpoch()+3) - 1
				off := rng.Int64N(sim.leo + 3)
				e1, o1, d1 := client.DivergingEpoch(lfe, off)
				e2, o2, d2 := sim.divergingEpoch(leaderEpoch, lfe, off)
				if e1 != e2 || o1 != o2 || d1 != d2 {
					t.Fatalf("seed %d step %d: diverging epoch of (%d, %d): partition (%d, %d, %v), sim (%d, %d, %v)",
						seed, step, lfe, off, e1, o1, d1, e2, o2, d2)
				}
			}
		}
		if err := client.Stop(); err != nil {
			t.Fatal(err)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// oneBatch builds a batch of n records at base with a leader epoch.
func oneBatch(t *testing.T, n int, base int64, epoch int32) []byte {
	t.Helper()
	recs := make([]kmsg.Record, n)
	for i := range recs {
		recs[i] = kmsg.Record{OffsetDelta: int32(i), Value: []byte{byte(i)}}
	}
	b, err := batch.Build(batch.Options{ProducerID: batch.NoProducerID, ProducerEpoch: batch.NoProducerEpoch,
		BaseSequence: batch.NoSequence, BaseOffset: base, PartitionLeaderEpoch: epoch, BaseTimestamp: startMs}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// compareLogs fails when sim and real disagree.
func compareLogs(t *testing.T, seed uint64, step int, real *log.Log, sim *memLog, rng *rand.Rand) {
	t.Helper()
	if real.LogEndOffset() != sim.leo || real.LogStartOffset() != sim.start {
		t.Fatalf("seed %d step %d: offsets: log [%d, %d), sim [%d, %d)", seed, step,
			real.LogStartOffset(), real.LogEndOffset(), sim.start, sim.leo)
	}
	if got := real.Epochs(); !slices.Equal(got, sim.epochs) && !(len(got) == 0 && len(sim.epochs) == 0) {
		t.Fatalf("seed %d step %d: epochs: log %v, sim %v", seed, step, got, sim.epochs)
	}
	if real.LatestEpoch() != sim.latestEpoch() {
		t.Fatalf("seed %d step %d: latest epoch: log %d, sim %d", seed, step, real.LatestEpoch(), sim.latestEpoch())
	}
	for e := int32(-1); e <= sim.latestEpoch()+1; e++ {
		e1, o1 := real.EndOffsetForEpoch(e)
		e2, o2 := sim.endOffsetForEpoch(e)
		if e1 != e2 || o1 != o2 {
			t.Fatalf("seed %d step %d: end of epoch %d: log (%d, %d), sim (%d, %d)", seed, step, e, e1, o1, e2, o2)
		}
	}
	for range 3 {
		off := sim.start + rng.Int64N(sim.leo-sim.start+1)
		d1, err := real.Read(off, log.ReadOptions{MaxBytes: 1 << 20})
		if err != nil {
			t.Fatalf("seed %d step %d: read %d: %v", seed, step, off, err)
		}
		d2, _ := sim.read(off, 1<<20)
		if !bytes.Equal(d1, d2) {
			t.Fatalf("seed %d step %d: read at %d: log %d bytes, sim %d bytes differ", seed, step, off, len(d1), len(d2))
		}
	}
}
