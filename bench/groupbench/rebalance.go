package groupbench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// rebalanceTopic and rebalanceGroup are measurement (b)'s.
const (
	rebalanceTopic = "groupbench-rebalance"
	rebalanceGroup = "groupbench-rebalance"
)

// RebalanceResult is one rebalance measurement.
type RebalanceResult struct {
	// SinceLastJoin runs from the start of the last member to the group's
	// Stable state with every member assigned.
	SinceLastJoin time.Duration
	// AfterDelay runs from the later of the last start and the end of the
	// broker's initial rebalance delay (delayedJoinEnd) to the same
	// moment.
	AfterDelay time.Duration
}

// delayedJoinEnd returns when the initial rebalance delay of an empty
// group that members joined at the times joins (sorted) ends, by Kafka's
// rule (InitialDelayedJoin): a window of delay from the first join, then
// another window of delay for as long as a new member joined during the
// previous one (the rebalance timeout, 60 s for kgo, is assumed not to
// bind).
func delayedJoinEnd(joins []time.Time, delay time.Duration) time.Time {
	if len(joins) == 0 {
		return time.Time{}
	}
	end := joins[0].Add(delay)
	if delay <= 0 {
		return end
	}
	for i := 1; ; {
		added := false
		for ; i < len(joins) && !joins[i].After(end); i++ {
			added = true
		}
		if !added {
			return end
		}
		end = end.Add(delay)
	}
}

// measureRebalance runs measurement (b) against the broker at addr, whose
// initial rebalance delay is delay.
func measureRebalance(ctx context.Context, cfg Config, addr string, delay time.Duration) (RebalanceResult, error) {
	admCl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return RebalanceResult{}, fmt.Errorf("kgo client: %w", err)
	}
	defer admCl.Close()
	if _, err := createTopic(ctx, admCl, rebalanceTopic, cfg.Members); err != nil {
		return RebalanceResult{}, err
	}
	members := make([]*kgo.Client, 0, cfg.Members)
	defer func() { closeAll(members) }()
	joins := make([]time.Time, 0, cfg.Members)
	for i := range cfg.Members {
		joins = append(joins, time.Now())
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID(fmt.Sprintf("groupbench-%03d", i)),
			kgo.ConsumerGroup(rebalanceGroup), kgo.ConsumeTopics(rebalanceTopic),
			kgo.Balancers(kgo.RangeBalancer()))
		if err != nil {
			return RebalanceResult{}, fmt.Errorf("member %d: %w", i, err)
		}
		members = append(members, cl)
	}
	lastJoin := time.Now()
	adm := kadm.NewClient(admCl)
	tick := time.NewTicker(cfg.PollInterval)
	defer tick.Stop()
	for {
		stable, err := allAssigned(ctx, adm, cfg.Members)
		if err != nil {
			return RebalanceResult{}, err
		}
		if stable {
			now := time.Now()
			end := delayedJoinEnd(joins, delay)
			if end.Before(lastJoin) {
				end = lastJoin
			}
			return RebalanceResult{SinceLastJoin: now.Sub(lastJoin), AfterDelay: now.Sub(end)}, nil
		}
		select {
		case <-ctx.Done():
			return RebalanceResult{}, fmt.Errorf("group %s never Stable with %d members assigned: %w", rebalanceGroup, cfg.Members, ctx.Err())
		case <-tick.C:
		}
	}
}

// allAssigned reports whether the group is Stable with n members, each
// assigned a partition.
func allAssigned(ctx context.Context, adm *kadm.Client, n int) (bool, error) {
	described, err := adm.DescribeGroups(ctx, rebalanceGroup)
	if err != nil && coordinatorStarting(err) {
		// The group's coordinator is being placed or loaded: not yet
		// Stable, ask again (Kafka's Admin retries these too).
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("describe group %s: %w", rebalanceGroup, err)
	}
	g := described[rebalanceGroup]
	if g.Err != nil || g.State != "Stable" || len(g.Members) != n {
		return false, nil
	}
	for _, m := range g.Members {
		c, ok := m.Assigned.AsConsumer()
		if !ok || len(c.Topics) == 0 {
			return false, nil
		}
	}
	return true, nil
}

// closeAll closes the clients at once: each leaves the group.
func closeAll(clients []*kgo.Client) {
	var wg sync.WaitGroup
	for _, cl := range clients {
		wg.Go(cl.Close)
	}
	wg.Wait()
}
