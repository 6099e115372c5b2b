package partitiontest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/internal/netns"
)

const (
	cutTopic = "cut"
	cutParts = 6
	// leaseSlack is how long past broker.session.timeout.ms the test
	// allows a cut-off leader to go on acknowledging acks=1 writes at
	// most, whatever else: generous, for a loaded machine.
	leaseSlack = 5 * time.Second
	// directTimeout is the timeout_ms of the test's raw produce requests.
	directTimeout = 1500 * time.Millisecond
)

// sessionTimeout is the nodes' broker.session.timeout.ms: the test runs
// them at the default.
var sessionTimeout = config.NewBroker().Millis("broker.session.timeout.ms")

// TestCutLeader: a node leading partitions is cut off from the other
// nodes by its namespace's nftables rules, while the test, its client,
// still reaches it. Produced to directly, it never acknowledges an
// acks=all write after the cut, and it stops acknowledging acks=1 writes
// within broker.session.timeout.ms of the cut, before the others have
// fenced it or a new leader has acknowledged a write (docs/DESIGN.md
// "Leader lease"), and in any case within that timeout plus generous
// slack. Meanwhile the majority elects new leaders and an idempotent
// acks=all producer writing through it keeps being acknowledged. After
// the heal the cut node rejoins every ISR; its log of every partition
// equals the leader's, record for record (offset, value, leader epoch),
// so the divergent tail it wrote while cut off is truncated; and every
// acks=all record acknowledged anywhere is read back once, at its offset.
// The acks=1 records the cut node acknowledged are lost, as they may be,
// and listed in the log.
//
// The cases: the cut node leads partitions but is not the controller (the
// quorum leader), or it is both, under the relaxed timing profile of the
// tests; and the first again under the fast profile, weir's default.
// A case with a known bug skips, naming it, when it finds the lease
// broken after every other check passed.
func TestCutLeader(t *testing.T) {
	netns.Require(t)
	for _, tc := range []struct {
		name       string
		controller bool
		profile    string
		bug        string // a known weir bug that breaks the lease here
	}{
		{name: "leader", profile: "relaxed"},
		{name: "leader-and-controller", controller: true, profile: "relaxed"},
		{name: "leader-fast-profile", profile: "fast"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCut(t, tc.controller, tc.profile)
			r.report(t)
			r.checkAcksAll(t)
			r.checkCommitted(t)
			r.checkTruncated(t)
			lease := r.leaseViolations(t)
			if len(lease) > 0 && tc.bug != "" && !t.Failed() {
				for _, v := range lease {
					t.Log("known bug: " + v)
				}
				t.Skip(tc.bug)
			}
			for _, v := range lease {
				t.Error(v)
			}
		})
	}
}

// The two cases past the first once found weir bugs, both fixed: a
// controller that renewed its own lease without a quorum (now a heartbeat
// is answered only after raft confirms the leadership), and a gossip
// verdict that fenced a broker before its lease ended (now only evidence
// that the process is gone fences early). A case that finds a bug again
// may name it in bug, which turns the lease failure into a skip.

// cutRun is what one run of the scenario observed.
type cutRun struct {
	start  time.Time
	phases []string

	victim *node
	vparts []int32    // partitions the victim led at the cut
	before []partInfo // the victim's view of the topic at the cut

	cutAt, healAt, rejoinedAt time.Time
	leaders                   map[int32]newLeader // first new leader seen, by partition
	fencedAt                  time.Time           // the victim first missing from a majority node's brokers

	all, one  []attempt // raw produces to the victim after the cut: acks=all, acks=1
	base, maj []acked   // acks=all records acknowledged before the cut, by the majority's producer
	after     []acked   // and after the heal
	majFails  int
	majFirst  string

	divergent map[int32][]entry // the victim's logs just before the heal
	final     map[int32][]entry // the replicas' common logs at the end
}

// since formats at as time since the cut.
func (r *cutRun) since(at time.Time) string {
	return "+" + at.Sub(r.cutAt).Round(time.Millisecond).String()
}

// runCut runs the scenario on a new cluster: create the topic, produce,
// cut the victim (the controller, or a leader that is not the controller)
// off, produce to it directly and through the majority, heal, wait until
// it is back in every ISR and the replicas' logs match, and read back.
// The nodes run with the gossip profile named.
func runCut(t *testing.T, wantController bool, profile string) *cutRun {
	r := &cutRun{start: time.Now()}
	c := startCluster(t, 3, profile)
	r.phase("cluster up")
	minISR := "2"
	c.createTopic(cutTopic, cutParts, map[string]*string{"min.insync.replicas": &minISR})
	r.phase("topic created")
	base := c.newClusterProducer("base", c.addrs(), cutTopic, cutParts)
	c.produceN(base, 60)

	r.victim, r.vparts = c.chooseVictim(wantController)
	victim, others := r.victim, c.others(r.victim)
	var err error
	if r.before, err = victim.partitions(cutTopic); err != nil {
		t.Fatal(err)
	}
	t.Logf("cutting node %d off (controller: %v); it leads partitions %v", victim.id, wantController, r.vparts)

	// The majority's producer runs from before the cut to after the heal.
	maj := c.newClusterProducer("maj", c.addrs(others...), cutTopic, cutParts)
	stopMaj := make(chan struct{})
	majDone := make(chan struct{})
	go func() { defer close(majDone); maj.run(stopMaj) }()
	stopMajOnce := sync.OnceFunc(func() { close(stopMaj); <-majDone })
	defer stopMajOnce()
	c.waitFor(30*time.Second, "the majority's producer acknowledged 30 records before the cut", func() bool {
		return len(maj.all()) >= 30
	})

	var peers []*netns.Host
	for _, o := range others {
		peers = append(peers, o.host)
	}
	if err := victim.host.Cut(peers...); err != nil {
		t.Fatal(err)
	}
	r.cutAt = time.Now()
	r.phase("cut")
	leaseEnd := r.cutAt.Add(sessionTimeout + leaseSlack)

	all := c.newDirectProducer("cutall", victim, cutTopic, r.vparts, -1, directTimeout)
	one := c.newDirectProducer("cutone", victim, cutTopic, r.vparts, 1, directTimeout)
	watch := &majorityWatch{leaders: map[int32]newLeader{}}
	stopCut := make(chan struct{})
	var cutWG sync.WaitGroup
	for _, run := range []func(<-chan struct{}){all.run, one.run,
		func(s <-chan struct{}) { watch.watch(victim, others, r.vparts, s) }} {
		cutWG.Add(1)
		go func() { defer cutWG.Done(); run(stopCut) }()
	}
	stopCutOnce := sync.OnceFunc(func() { close(stopCut); cutWG.Wait() })
	defer stopCutOnce()

	c.waitFor(60*time.Second, "new leaders on the majority, writes acknowledged there, and the lease over with writes tried after it", func() bool {
		leaders, _ := watch.snapshot()
		if len(leaders) < len(r.vparts) {
			return false
		}
		if !time.Now().After(leaseEnd) || one.answeredAfter(leaseEnd) < 10 || all.answeredAfter(leaseEnd) < 3 {
			return false
		}
		ackedSince := map[int32]int{}
		for _, a := range maj.all() {
			if nl, ok := leaders[a.part]; ok && a.at.After(nl.at) {
				ackedSince[a.part]++
			}
		}
		for _, p := range r.vparts {
			if ackedSince[p] < 3 {
				return false
			}
		}
		return true
	})
	// The cut node's logs now hold what it appended while cut off.
	r.divergent = map[int32][]entry{}
	for _, p := range r.vparts {
		if r.divergent[p], err = victim.replicaLog(cutTopic, p); err != nil {
			t.Fatal(err)
		}
	}
	stopCutOnce()
	r.leaders, r.fencedAt = watch.snapshot()
	r.all, r.one = all.all(), one.all()

	if err := victim.host.Heal(); err != nil {
		t.Fatal(err)
	}
	r.healAt = time.Now()
	r.phase("healed")
	c.waitFor(60*time.Second, "every node lists 3 brokers and every partition led with 3 in its ISR, on every node", func() bool {
		for _, nd := range c.nodes {
			m, err := nd.metadata()
			if err != nil || len(brokerIDs(m)) != 3 {
				return false
			}
			ps, err := topicPartitions(nd, m, cutTopic)
			if err != nil {
				return false
			}
			for _, p := range ps {
				if p.leader < 0 || len(p.isr) != 3 {
					return false
				}
			}
		}
		return true
	})
	r.rejoinedAt = time.Now()
	r.phase("every ISR full")
	stopMajOnce()
	after := c.newClusterProducer("after", c.addrs(), cutTopic, cutParts)
	c.produceN(after, 30)
	r.base, r.maj, r.after = base.all(), maj.all(), after.all()
	r.majFails, r.majFirst = maj.failures(), maj.firstFailures()

	r.final = c.waitLogsMatch(30 * time.Second)
	r.phase("logs match")
	read := c.consumeAll()
	r.phase("read back")
	for p := range int32(cutParts) {
		if i := firstDifference(read[p], r.final[p]); i >= 0 {
			t.Errorf("partition %d: a consumer reads %d records, the replicas' logs hold %d; first difference at %d (%v vs %v)",
				p, len(read[p]), len(r.final[p]), i, at(read[p], i), at(r.final[p], i))
		}
	}
	t.Cleanup(func() {
		t.Logf("phases: %s; cleanup from %s", strings.Join(r.phases, ", "), time.Since(r.start).Round(time.Millisecond))
	})
	return r
}

// phase notes that the run reached a step, for the log.
func (r *cutRun) phase(name string) {
	r.phases = append(r.phases, fmt.Sprintf("%s at %s", name, time.Since(r.start).Round(time.Millisecond)))
}

// newLeader is the first time the test saw a partition led by another
// node than the cut one, on a node of the majority.
type newLeader struct {
	at     time.Time
	leader int32
	epoch  int32
	by     int32 // the node whose metadata showed it
}

// majorityWatch polls the majority's metadata while the cut lasts.
type majorityWatch struct {
	mu       sync.Mutex
	leaders  map[int32]newLeader // by partition
	fencedAt time.Time           // the cut node left a majority node's broker list
}

func (w *majorityWatch) snapshot() (map[int32]newLeader, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.leaders), w.fencedAt
}

// watch polls nodes every 100 ms until stop is closed.
func (w *majorityWatch) watch(victim *node, nodes []*node, parts []int32, stop <-chan struct{}) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, nd := range nodes {
			m, err := nd.metadata()
			now := time.Now()
			if err != nil {
				continue
			}
			w.mu.Lock()
			if !slices.Contains(brokerIDs(m), victim.id) && w.fencedAt.IsZero() {
				w.fencedAt = now
			}
			if ps, err := topicPartitions(nd, m, cutTopic); err == nil {
				for _, p := range parts {
					if _, seen := w.leaders[p]; !seen && ps[p].leader >= 0 && ps[p].leader != victim.id {
						w.leaders[p] = newLeader{at: now, leader: ps[p].leader, epoch: ps[p].epoch, by: nd.id}
					}
				}
			}
			w.mu.Unlock()
		}
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

// chooseVictim returns the node to cut off and the partitions it leads:
// the controller, or the node leading the most partitions that is not
// the controller.
func (c *cluster) chooseVictim(controller bool) (*node, []int32) {
	c.t.Helper()
	var ctrl int32
	c.waitFor(30*time.Second, "every node names the same controller", func() bool {
		ctrl = -1
		for _, nd := range c.nodes {
			id, err := nd.controller()
			if err != nil || id < 0 || (ctrl >= 0 && id != ctrl) {
				return false
			}
			ctrl = id
		}
		return true
	})
	ps, err := c.node(ctrl).partitions(cutTopic)
	if err != nil {
		c.t.Fatal(err)
	}
	led := map[int32][]int32{}
	for _, p := range ps {
		led[p.leader] = append(led[p.leader], p.id)
	}
	victim := int32(-1)
	if controller {
		victim = ctrl
	} else {
		for _, nd := range c.nodes {
			if nd.id != ctrl && (victim < 0 || len(led[nd.id]) > len(led[victim])) {
				victim = nd.id
			}
		}
	}
	if len(led[victim]) == 0 {
		c.t.Fatalf("node %d (controller %d) leads no partition of %s: leaders %v", victim, ctrl, cutTopic, led)
	}
	return c.node(victim), led[victim]
}
