package failover

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/weirmq/weir/bench/cluster"
)

// faultOutcome is what one fault did and how the cluster recovered.
type faultOutcome struct {
	victims []int32
	at      time.Time // the first signal
	// elected runs from the first signal until a node's Metadata showed
	// every partition led by a node that was not hit, or by a node that
	// was hit but has since been elected anew (a higher leader epoch);
	// -1 when not within Config.RoundTimeout. For rolling, the longest
	// of the nodes' moves; for controller, also until DescribeQuorum
	// names a new quorum leader.
	elected time.Duration
	// recovered is when every ISR was full again after the fault.
	recovered time.Time
	problems  []string
	// before is the partitions as the fault found them; resumed, for
	// pause, is when SIGCONT was sent.
	before  []cluster.PartitionState
	resumed time.Time
}

// faulter injects faults into a cluster this package started.
type faulter struct {
	cfg    Config
	nodes  target
	topics []string
	parts  int // partitions over every topic
	// paused is the node under SIGSTOP, 0 when none: no Metadata poll
	// goes to it.
	paused int32
	// net is the clients' proxy, nil when the run has none.
	net *clientNet
	// partitions holds what the partition fault needs; nil when the run
	// has no partition fault.
	partitions *partitioner
}

// inject runs fault f and returns once the cluster is whole again (every
// node running, every ISR full), or an error when it cannot be made
// whole (a node would not start).
func (fl *faulter) inject(ctx context.Context, f Fault) (faultOutcome, error) {
	out := faultOutcome{elected: -1}
	before, err := fl.current(ctx)
	if err != nil {
		return out, err
	}
	out.before = before
	switch f {
	case FaultLeader:
		v, _ := mostLeader(before, fl.nodes.IDs())
		err = fl.killRestart(ctx, &out, before, []int32{v}, false, false)
	case FaultController:
		var v int32
		_, err = cluster.PollUntil(ctx, fl.cfg.RoundTimeout, fl.cfg.PollEvery, "a quorum leader", func(ctx context.Context) (bool, error) {
			var qerr error
			v, qerr = fl.quorumLeader(ctx)
			return qerr == nil, qerr
		})
		if err == nil {
			err = fl.killRestart(ctx, &out, before, []int32{v}, false, true)
		}
	case FaultTwo:
		v, _ := mostLeader(before, fl.nodes.IDs())
		second := nextID(fl.nodes.IDs(), v)
		err = fl.killRestart(ctx, &out, before, []int32{v, second}, true, false)
	case FaultAll:
		err = fl.killRestart(ctx, &out, before, fl.nodes.IDs(), true, false)
	case FaultPause:
		v, _ := mostLeader(before, fl.nodes.IDs())
		err = fl.pause(ctx, &out, before, v)
	case FaultRolling:
		err = fl.rolling(ctx, &out)
	case FaultClientDisconnect, FaultLatency, FaultLoss:
		err = fl.proxyFault(ctx, &out, before, f)
	case FaultPartition:
		v, _ := mostLeader(before, fl.nodes.IDs())
		err = fl.partition(ctx, &out, before, v)
	default:
		err = fmt.Errorf("no fault %q", f)
	}
	if err != nil {
		return out, err
	}
	at, err := fl.nodes.WaitInSync(ctx, fl.topics, fl.parts, fl.cfg.RoundTimeout)
	if err != nil {
		out.problems = append(out.problems, fmt.Sprintf("after the fault: %v", err))
		at = time.Now()
	}
	out.recovered = at
	return out, nil
}

// killRestart SIGKILLs victims at once and starts them again: at once
// when together (two or all nodes down leave no quorum to elect new
// leaders until they are back), else once every partition has a leader.
func (fl *faulter) killRestart(ctx context.Context, out *faultOutcome, before []cluster.PartitionState, victims []int32, together, controller bool) error {
	out.victims = victims
	out.at = time.Now()
	for _, v := range victims {
		if err := fl.nodes.Signal(v, syscall.SIGKILL); err != nil {
			return err
		}
	}
	for _, v := range victims {
		fl.nodes.Kill(v) // reap
	}
	if together {
		errc := make(chan error, 1)
		var probs []string
		go func() {
			var err error
			probs, err = fl.startAll(ctx, victims)
			errc <- err
		}()
		out.elected = fl.waitElected(ctx, out, before, victims)
		err := <-errc
		out.problems = append(out.problems, probs...)
		return err
	}
	out.elected = fl.waitElected(ctx, out, before, victims)
	if controller {
		if d := fl.waitNewController(ctx, out, victims[0]); d < 0 || out.elected < 0 {
			out.elected = -1
		} else {
			out.elected = max(out.elected, d)
		}
	}
	probs, err := fl.startAll(ctx, victims)
	out.problems = append(out.problems, probs...)
	return err
}

// startAll starts ids at once (nodes that wait for each other's votes
// must not wait in turn) and returns when all are ready.
func (fl *faulter) startAll(ctx context.Context, ids []int32) ([]string, error) {
	var wg sync.WaitGroup
	probs := make([][]string, len(ids))
	errs := make([]error, len(ids))
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			probs[i], errs[i] = fl.nodes.Start(ctx, id)
		}()
	}
	wg.Wait()
	return slices.Concat(probs...), errors.Join(errs...)
}

// waitNewController polls DescribeQuorum until a leader other than old
// shows and returns the time since out.at, -1 on timeout.
func (fl *faulter) waitNewController(ctx context.Context, out *faultOutcome, old int32) time.Duration {
	at, err := cluster.PollUntil(ctx, fl.cfg.RoundTimeout, fl.cfg.PollEvery, "a new quorum leader", func(ctx context.Context) (bool, error) {
		id, err := fl.quorumLeader(ctx)
		return err == nil && id != old, nil
	})
	if err != nil {
		out.problems = append(out.problems, err.Error())
		return -1
	}
	return at.Sub(out.at)
}

// pause SIGSTOPs victim for Config.Pause and SIGCONTs it.
func (fl *faulter) pause(ctx context.Context, out *faultOutcome, before []cluster.PartitionState, victim int32) error {
	out.victims = []int32{victim}
	out.at = time.Now()
	if err := fl.nodes.Signal(victim, syscall.SIGSTOP); err != nil {
		return err
	}
	fl.paused = victim
	defer func() { fl.paused = 0 }()
	cont := time.NewTimer(fl.cfg.Pause)
	defer cont.Stop()
	elected := make(chan time.Duration, 1)
	go func() { elected <- fl.waitElected(ctx, out, before, out.victims) }()
	select {
	case <-cont.C:
	case <-ctx.Done():
	}
	out.resumed = time.Now()
	if err := fl.nodes.Signal(victim, syscall.SIGCONT); err != nil {
		return err
	}
	out.elected = <-elected
	return ctx.Err()
}

// rolling SIGTERMs each node in turn, starts it again and waits for full
// ISRs before the next.
func (fl *faulter) rolling(ctx context.Context, out *faultOutcome) error {
	out.at = time.Now()
	var longest time.Duration
	for _, v := range fl.nodes.IDs() {
		before, err := fl.current(ctx)
		if err != nil {
			return err
		}
		out.victims = append(out.victims, v)
		at := time.Now()
		if err := fl.nodes.Signal(v, syscall.SIGTERM); err != nil {
			return err
		}
		if err := fl.nodes.WaitExited(ctx, v, fl.cfg.RoundTimeout); err != nil {
			out.problems = append(out.problems, err.Error())
		}
		step := *out
		step.at = at
		d := fl.waitElected(ctx, &step, before, []int32{v})
		out.problems = step.problems
		if d < 0 || longest < 0 {
			longest = -1
		} else {
			longest = max(longest, d)
		}
		probs, err := fl.nodes.Start(ctx, v)
		out.problems = append(out.problems, probs...)
		if err != nil {
			return err
		}
		if _, err := fl.nodes.WaitInSync(ctx, fl.topics, fl.parts, fl.cfg.RoundTimeout); err != nil {
			out.problems = append(out.problems, fmt.Sprintf("after node %d's restart: %v", v, err))
		}
	}
	out.elected = longest
	return nil
}

// waitElected polls Metadata until every partition is led anew (see
// faultOutcome.elected) and returns the time since out.at, -1 on timeout.
func (fl *faulter) waitElected(ctx context.Context, out *faultOutcome, before []cluster.PartitionState, victims []int32) time.Duration {
	epochs := map[string]int32{}
	for _, p := range before {
		epochs[partKey(p)] = p.Epoch
	}
	at, err := cluster.PollUntil(ctx, fl.cfg.RoundTimeout, fl.cfg.PollEvery, "every partition led anew", func(ctx context.Context) (bool, error) {
		ps, err := fl.metadata(ctx)
		if err != nil {
			return false, err
		}
		return ledAnew(ps, fl.parts, victims, epochs), nil
	})
	if err != nil {
		out.problems = append(out.problems, err.Error())
		return -1
	}
	return at.Sub(out.at)
}

// ledAnew reports whether all want partitions are listed, each led by a
// node outside victims or by a victim under a leader epoch above the one
// before the fault.
func ledAnew(ps []cluster.PartitionState, want int, victims []int32, epochs map[string]int32) bool {
	if len(ps) != want {
		return false
	}
	for _, p := range ps {
		if p.Leader < 0 || slices.Contains(victims, p.Leader) && p.Epoch <= epochs[partKey(p)] {
			return false
		}
	}
	return true
}

func partKey(p cluster.PartitionState) string { return fmt.Sprintf("%s/%d", p.Topic, p.Partition) }

// current polls Metadata until a node answers with every partition led.
func (fl *faulter) current(ctx context.Context) ([]cluster.PartitionState, error) {
	var ps []cluster.PartitionState
	_, err := cluster.PollUntil(ctx, fl.cfg.RoundTimeout, fl.cfg.PollEvery, "every partition led before the fault", func(ctx context.Context) (bool, error) {
		var err error
		ps, err = fl.metadata(ctx)
		return err == nil && ledAnew(ps, fl.parts, nil, nil), err
	})
	return ps, err
}

// metadata asks a running node, not the paused one, for the topics.
func (fl *faulter) metadata(ctx context.Context) ([]cluster.PartitionState, error) {
	var except []int32
	if fl.paused != 0 {
		except = append(except, fl.paused)
	}
	if fl.partitions != nil && fl.partitions.cut != 0 {
		except = append(except, fl.partitions.cut)
	}
	via, err := fl.nodes.LiveNode(except...)
	if err != nil {
		return nil, err
	}
	return fl.nodes.Metadata(ctx, via, fl.topics)
}

// quorumLeader asks every running node (not the paused one) with
// DescribeQuorum for the metadata quorum's leader: only the leader
// answers (the others say NOT_LEADER_OR_FOLLOWER with no leader id).
func (fl *faulter) quorumLeader(ctx context.Context) (int32, error) {
	var errs []error
	for _, id := range fl.nodes.IDs() {
		if id == fl.paused || !fl.nodes.Running(id) {
			continue
		}
		leader, err := fl.nodes.QuorumLeader(ctx, id)
		if err == nil && leader > 0 {
			return leader, nil
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return -1, errors.Join(errs...)
	}
	return -1, errors.New("describe quorum: no node answers as the leader")
}

// mostLeader returns the node leading the most partitions (the lowest id
// on a tie) and how many it leads.
func mostLeader(ps []cluster.PartitionState, ids []int32) (int32, int) {
	counts := map[int32]int{}
	for _, p := range ps {
		if p.Leader > 0 {
			counts[p.Leader]++
		}
	}
	best, most := ids[0], -1
	for _, id := range ids {
		if counts[id] > most {
			best, most = id, counts[id]
		}
	}
	return best, most
}

// nextID is the id after v in ids, wrapping around.
func nextID(ids []int32, v int32) int32 {
	i := slices.Index(ids, v)
	return ids[(i+1)%len(ids)]
}
