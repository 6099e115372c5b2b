package sim

// scenario is one run's settings: the cluster's shape and timings (weir's
// fast profile, with a shorter replica.lag.time.max.ms so ISRs shrink and
// grow within a run) and the faults' rates.
type scenario struct {
	Nodes, Partitions, Producers int
	// ReplicationFactor is the topic's (0: every node holds a replica).
	ReplicationFactor int
	// NoFaults injects no random faults: a scripted test injects its own.
	NoFaults bool
	// FaultMs is how long faults are injected; HealMs how long the run
	// goes on after everything healed.
	FaultMs, HealMs int64
	// FaultGapMs is the mean time between two faults.
	FaultGapMs int64

	TickMs       int64 // the nodes' ticker
	HeartbeatMs  int64 // broker.heartbeat.interval.ms
	SessionMs    int64 // broker.session.timeout.ms
	LagMaxMs     int64 // replica.lag.time.max.ms
	ElectionMs   int64 // the quorum's election timeout (and CheckQuorum's)
	DetectMs     int64 // memberlist's time to declare an unreachable node failed
	StaggerTicks int64 // the elector's delay per rank
	MinISR       int   // min.insync.replicas

	FetchWaitMs, FetchBackoffMs, FetchTimeoutMs int64 // replica.fetch.*
	// FetchMaxBytes is replica.fetch.max.bytes: small, so that a follower
	// catches up over several fetches, as with real batch sizes.
	FetchMaxBytes    int32
	ProduceTimeoutMs int64

	DropRate, SlowRate float64 // messages lost, and delayed by up to SlowMaxMs
	SlowMaxMs          int64
	// SlowCommitRate is the share of the controller's proposals whose
	// commit (a slow raft round: the metadata log's fsync) holds the
	// commits for up to SlowCommitMaxMs, while the controller goes on
	// deciding against its proposals in flight.
	SlowCommitRate  float64
	SlowCommitMaxMs int64
	Acks1Rate       float64 // share of acks=1 produces
	// HeldUnleased runs a rebalance's held appends without checking the
	// lease again (as the partition actor did before LeaseLapsed).
	HeldUnleased bool
	// RebalanceMs is the mean time between a node's checks for
	// leaderships to move back to their preferred replicas
	// (leader.imbalance.check.interval.seconds; 0: none).
	RebalanceMs int64
	// Hints passes memberlist's failure verdicts to the controller's
	// Sessions (Sessions.MemberFailed), as cluster/peers.go does.
	Hints bool
	// DeposedAnswers has a controller that cannot confirm its leadership
	// (it lost its majority, or was deposed and has not stepped down)
	// answer the requests that need no write (heartbeats) from its own
	// image, as cluster/metadata_actor.go's decide does today; false
	// models a controller that confirms its leadership with a quorum
	// first (raft ReadIndex).
	DeposedAnswers bool
	// SpecAnswers has the controller answer a request that writes
	// nothing at once, even while the proposals its answer rests on are
	// still in flight (weir did until the slow commits showed a node
	// acting on a registration the log did not hold yet); now such an
	// answer waits until they committed (cluster/metadata_actor.go
	// decide).
	SpecAnswers bool
	// WireGapMs > 0 runs the append up to that long after the Produce
	// handler's lease check, as a separate step (the actor's mailbox), so
	// a pause can fall in between.
	WireGapMs int64
}

// defaultScenario is the CI scenario.
func defaultScenario() scenario {
	return scenario{
		Nodes: 3, Partitions: 2, Producers: 2,
		FaultMs: 8000, HealMs: 3000, FaultGapMs: 700,
		TickMs: 50, HeartbeatMs: 250, SessionMs: 1500, LagMaxMs: 2000, ElectionMs: 500, DetectMs: 500,
		StaggerTicks: 2, MinISR: 2,
		FetchWaitMs: 200, FetchBackoffMs: 200, FetchTimeoutMs: 1500, FetchMaxBytes: 150, ProduceTimeoutMs: 1500,
		DropRate: 0.02, SlowRate: 0.05, SlowMaxMs: 200, Acks1Rate: 0.2,
		RebalanceMs: 1000, SlowCommitRate: 0.02, SlowCommitMaxMs: 3000,
	}
}

// scheduleFaults schedules the run's faults: pauses, kills with restarts,
// cut links, isolated nodes and controller moves, at random, then heals
// everything at the end of FaultMs.
func (w *world) scheduleFaults() {
	end := startMs + w.cfg.FaultMs
	var next func()
	next = func() {
		if w.now >= end {
			w.healAll()
			return
		}
		w.fault()
		w.after(w.cfg.FaultGapMs/2+w.rng.Int64N(w.cfg.FaultGapMs), 0, next)
	}
	w.after(1000+w.rng.Int64N(w.cfg.FaultGapMs), 0, next)
}

// fault injects one fault.
func (w *world) fault() {
	down := 0
	for _, n := range w.nodes[1:] {
		if n.state != nodeRunning {
			down++
		}
	}
	pick := func() *node {
		var up []*node
		for _, n := range w.nodes[1:] {
			if n.state == nodeRunning {
				up = append(up, n)
			}
		}
		if len(up) == 0 {
			return nil
		}
		// The controller's node is a favourite target.
		if c := w.quorum.cur; c != nil && w.nodes[c.host].state == nodeRunning && w.rng.IntN(3) == 0 {
			return w.nodes[c.host]
		}
		return up[w.rng.IntN(len(up))]
	}
	nodeFault := down == 0 || w.rng.IntN(4) == 0
	switch k := w.rng.IntN(10); {
	case k < 3 && nodeFault:
		if n := pick(); n != nil {
			n.pause()
			w.after(100+w.rng.Int64N(3000), 0, func() {
				if n.state == nodePaused {
					n.resume()
				}
			})
		}
	case k < 5 && nodeFault:
		if n := pick(); n != nil {
			n.kill()
			w.after(100+w.rng.Int64N(2000), 0, func() {
				if n.state == nodeDead {
					n.start()
				}
			})
		}
	case k < 7:
		a := int32(1 + w.rng.IntN(w.cfg.Nodes))
		b := int32(1 + w.rng.IntN(w.cfg.Nodes-1))
		if b >= a {
			b++
		}
		d := 100 + w.rng.Int64N(3000)
		w.net.cutLink(a, b, d)
		w.trace("cut", a, int64(b), d, 0)
	case k < 9:
		n := pick()
		if n == nil {
			break
		}
		d := 200 + w.rng.Int64N(3000)
		for _, o := range w.nodes[1:] {
			if o != n {
				w.net.cutLink(n.id, o.id, d)
			}
		}
		w.trace("isolate", n.id, d, 0, 0)
	default:
		w.quorum.move()
	}
}

// healAll resumes paused nodes, restarts dead ones and mends every link.
func (w *world) healAll() {
	w.trace("heal", 0, 0, 0, 0)
	for k, until := range w.net.cutUntil {
		w.net.cutUntil[k] = min(until, w.now)
	}
	for _, n := range w.nodes[1:] {
		switch n.state {
		case nodePaused:
			n.resume()
		case nodeDead:
			n.start()
		}
	}
}

// move hands the controller to another node that reaches a majority, as a
// raft leadership transfer does: the old leader's proposals commit first
// and it steps down at once.
func (q *quorum) move() {
	w := q.w
	c := q.cur
	if c.down || !q.healthy(c.host) {
		return
	}
	var cands []int32
	for id := int32(1); id <= int32(w.cfg.Nodes); id++ {
		if id != c.host && q.healthy(id) {
			cands = append(cands, id)
		}
	}
	if len(cands) == 0 {
		return
	}
	q.commitPendingNow(true)
	q.takeOver(cands[w.rng.IntN(len(cands))])
}
