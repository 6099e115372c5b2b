package failover

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// members is the verifiable consumer group: Config.Consumers consumers
// in one group. Their reads are merged for the checker (a record read by
// two members at the same partition and offset, as after a partition
// moved, counts once there), and the group's rebalances are timed from
// every member's callbacks (see assignments).
type members struct {
	ms  []*consumer
	asg *assignments
}

// newMembers starts n members of group over topics (parts partitions in
// all).
func newMembers(seeds, topics []string, group string, tuned bool, n, parts int) (*members, error) {
	g := &members{asg: newAssignments(parts)}
	for i := range n {
		c, err := newConsumer(seeds, topics, group, tuned, g.asg, i)
		if err != nil {
			g.close()
			return nil, fmt.Errorf("consumer %d of %d: %w", i+1, n, err)
		}
		g.ms = append(g.ms, c)
	}
	return g, nil
}

// membersSettings are the group's settings, for the report.
func membersSettings(group string, tuned bool, n int) []string {
	return append([]string{fmt.Sprintf("%d member(s) in the group, their reads merged", n)}, consumerSettings(group, tuned)...)
}

// ready reports whether every member has its first assignment (when
// there are partitions enough for each) and the group owns every
// partition with no rebalance under way.
func (g *members) ready() bool {
	for _, c := range g.ms {
		if !c.ready() && len(g.ms) <= g.asg.parts {
			return false
		}
	}
	return g.asg.complete()
}

// missing counts the acknowledged records of acks no member read yet.
func (g *members) missing(round uint32, acks []Ack) int { return len(g.missingAcks(round, acks)) }

// missingAcks returns the acknowledged records of acks no member read yet.
func (g *members) missingAcks(round uint32, acks []Ack) []Ack {
	for _, c := range g.ms {
		acks = c.missingAcks(round, acks)
	}
	return acks
}

// readCount is the number of records of round the members read so far.
func (g *members) readCount(round uint32) int {
	n := 0
	for _, c := range g.ms {
		n += c.readCount(round)
	}
	return n
}

// reads copies round's records read by every member.
func (g *members) reads(round uint32) []Read {
	var out []Read
	for _, c := range g.ms {
		out = append(out, c.reads(round)...)
	}
	return out
}

// arrivalsSince merges the members' arrivals from `from` on, in time
// order, with their record counts.
func (g *members) arrivalsSince(from int64) ([]int64, []int32) {
	type arrival struct {
		at int64
		n  int32
	}
	var all []arrival
	for _, c := range g.ms {
		ts, ns := c.arrivalsSince(from)
		for i := range ts {
			all = append(all, arrival{ts[i], ns[i]})
		}
	}
	slices.SortStableFunc(all, func(a, b arrival) int { return int(max(-1, min(1, a.at-b.at))) })
	ts, ns := make([]int64, len(all)), make([]int32, len(all))
	for i, a := range all {
		ts[i], ns[i] = a.at, a.n
	}
	return ts, ns
}

// rebalanceIn is the group's longest rebalance that started within
// [from, to] (see assignments.rebalanceIn).
func (g *members) rebalanceIn(from, to int64) (time.Duration, bool) {
	return g.asg.rebalanceIn(from, to)
}

// errorCounts sums the members' client errors.
func (g *members) errorCounts() map[string]int64 {
	out := map[string]int64{}
	for _, c := range g.ms {
		for k, v := range c.tally.snapshot() {
			out[k] += v
		}
	}
	return out
}

// commitFailures sums the members' failed commits.
func (g *members) commitFailures() int64 {
	var n int64
	for _, c := range g.ms {
		n += c.commitFailures.Load()
	}
	return n
}

// close closes every member at once (one leaving would otherwise
// rebalance the others in turn).
func (g *members) close() {
	var wg sync.WaitGroup
	for _, c := range g.ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.close()
		}()
	}
	wg.Wait()
}
